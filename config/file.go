package config

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// Size caps of the files tether reads its configuration and secrets from.
const (
	MaxConfigSize  = 4 << 20 // the YAML config file
	MaxSecretsSize = 1 << 20 // a secrets env file
	MaxTokensSize  = 64 << 10
)

// ErrUntrustedFile is returned (wrapped, with the reason and the fix) when
// a config, secrets or token file is not a regular file, is too large, or
// could have been written by someone other than root while tether runs as
// root.
var ErrUntrustedFile = errors.New("refusing to read the file")

// ReadTrusted reads a file that configures tether (what, e.g. "config
// file", names it in errors). It must be a regular file once opened
// (a FIFO, a device such as /dev/zero behind a symlink, a directory are
// refused without reading or blocking) of at most limit bytes. When tether
// runs as root, the file must also be writable only by its owner, and
// that owner must be root: anyone else who can change the file can change
// what root runs. A symlink to a file meeting these rules is followed.
func ReadTrusted(path, what string, limit int64) ([]byte, error) {
	// O_NONBLOCK: opening a FIFO must not wait for a writer; the type
	// check below then refuses it.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", what, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", what, err)
	}
	if err := trustable(fi, path, limit, os.Geteuid()); err != nil {
		return nil, fmt.Errorf("%w %s (%s): %v", ErrUntrustedFile, path, what, err)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", what, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%w %s (%s): it grew past %d bytes while being read", ErrUntrustedFile, path, what, limit)
	}
	return data, nil
}

// trustable reports why an opened file with info fi may not configure a
// process running as euid, or nil. The messages say how to fix it.
func trustable(fi os.FileInfo, path string, limit int64, euid int) error {
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("it is not a regular file (%v); point tether at a plain file", fi.Mode().Type())
	}
	if fi.Size() > limit {
		return fmt.Errorf("it is %d bytes, more than the %d allowed", fi.Size(), limit)
	}
	if euid != 0 {
		return nil
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("it is writable by group or others (mode %v) and tether runs as root; run: chmod go-w %s", fi.Mode().Perm(), path)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return errors.New("its owner cannot be determined")
	}
	if st.Uid != 0 {
		return fmt.Errorf("it is owned by uid %d and tether runs as root; run: chown root %s (or run tether as that user)", st.Uid, path)
	}
	return nil
}
