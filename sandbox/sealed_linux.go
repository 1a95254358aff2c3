package sandbox

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/opencontainers/runc/libcontainer/exeseal"
	"golang.org/x/sys/unix"
)

// sealedEnv marks a process RunSealed re-executed, so that it never
// re-executes again (even where the copy did not read back as sealed),
// and names the binary it was copied from: "DEV:INO:PATH".
const sealedEnv = "_TETHER_SEALED"

// sealedFrom is the binary this process was copied from when RunSealed
// re-executed it (its path, device and inode then); empty otherwise. Set
// by RunSealed before anything else runs, then read-only.
var sealedFrom struct {
	path     string
	dev, ino uint64
}

// RunSealed re-executes this process, with the same arguments and
// environment, from a sealed in-memory copy of its binary: a memfd that
// no process can write or resize (CVE-2019-5736). libcontainer starts
// every container's init from such a copy of the running binary, and
// makes one per container unless the process already runs from one: an
// overlay mount over the binary (~2 ms with its unmount), or where
// overlayfs refuses that (ELOOP when the binary's directory holds the
// container's state directory) a copy of the whole binary into a memfd,
// ~28 MB and 20-40 ms per sandbox. A process that starts sandboxes all
// the time (tether serve: its pools refill after every one-shot command,
// its sessions come and go) makes the copy once, here. The sandboxes'
// inits and supervisors then run from this one copy: the protection is
// libcontainer's own (it checks the seals), held once for the process's
// life instead of per sandbox.
//
// Call it first, before anything that must not happen twice. It returns
// only when it does not re-execute: the process already runs from a
// sealed copy, was re-executed once already, or the copy failed (the
// error; the caller goes on unsealed, as before).
func RunSealed() error {
	if from, ok := os.LookupEnv(sealedEnv); ok {
		// Re-executed: what this process's children inherit is the
		// environment it was started with.
		if dev, rest, ok := strings.Cut(from, ":"); ok {
			if ino, path, ok := strings.Cut(rest, ":"); ok {
				sealedFrom.path = path
				sealedFrom.dev, _ = strconv.ParseUint(dev, 10, 64)
				sealedFrom.ino, _ = strconv.ParseUint(ino, 10, 64)
			}
		}
		return os.Unsetenv(sealedEnv)
	}
	if exeseal.IsSelfExeCloned() {
		return nil
	}
	self, err := os.Open("/proc/self/exe")
	if err != nil {
		return fmt.Errorf("sealing the binary: %w", err)
	}
	defer self.Close()
	fi, err := self.Stat()
	if err != nil {
		return fmt.Errorf("sealing the binary: %w", err)
	}
	sealed, err := exeseal.CloneBinary(self, fi.Size(), "tether", os.TempDir())
	if err != nil {
		return fmt.Errorf("sealing the binary: %w", err)
	}
	defer sealed.Close()
	// Sessions run their supervisor from a read-only bind of the binary
	// (hostExecutable): it must know which file that was.
	from := ""
	if path, err := os.Executable(); err == nil {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			from = fmt.Sprintf("%d:%d:%s", st.Dev, st.Ino, path)
		}
	}
	env := append(os.Environ(), sealedEnv+"="+from)
	// The descriptor is close-on-exec: the kernel opens the file before
	// it closes the descriptors, and the new image holds it from then on.
	err = unix.Exec("/proc/self/fd/"+strconv.Itoa(int(sealed.Fd())), os.Args, env)
	return fmt.Errorf("re-executing from the sealed binary: %w", err)
}
