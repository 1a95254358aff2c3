package sandbox

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// loaderOf runs isLoaderELF on data as inspect does: the first
// binprmBufSize bytes zero-filled, the rest read at need.
func loaderOf(data []byte) bool {
	var head [binprmBufSize]byte
	copy(head[:], data)
	return isLoaderELF(head[:], func(b []byte, off int64) (int, error) {
		if off >= int64(len(data)) {
			return 0, io.EOF
		}
		n := copy(b, data[off:])
		if n < len(b) {
			return n, io.EOF
		}
		return n, nil
	})
}

// What a file is decides, not its name: the loader (any copy of it) is
// one; programs, static ones, static-PIE ones and libc (which runs as a
// program too) are not.
func TestIsLoaderELF(t *testing.T) {
	read := func(p string) []byte {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		return b
	}
	ld := read("/lib64/ld-linux-x86-64.so.2")
	assert.True(t, loaderOf(ld), "the loader")
	for _, p := range []string{"/bin/true", "/usr/bin/python3", "/bin/busybox", "/lib/x86_64-linux-gnu/libc.so.6"} {
		if _, err := os.Stat(p); err == nil {
			assert.False(t, loaderOf(read(p)), p)
		}
	}
	if _, err := exec.LookPath("gcc"); err == nil {
		dir := t.TempDir()
		src := filepath.Join(dir, "s.c")
		require.NoError(t, os.WriteFile(src, []byte("int main(void){return 0;}\n"), 0o644))
		out, err := exec.Command("gcc", "-static-pie", "-o", filepath.Join(dir, "spie"), src).CombinedOutput()
		require.NoError(t, err, "%s", out)
		assert.False(t, loaderOf(read(filepath.Join(dir, "spie"))), "a static-PIE program has no DT_SONAME")
	}
	// The loader cut short after its header: its program headers cannot
	// be read, so it counts as a loader (its operand is checked).
	assert.True(t, loaderOf(ld[:300]))
	assert.False(t, loaderOf(ld[:16]), "no whole ELF header")
	assert.False(t, loaderOf([]byte("#!/bin/sh\n")))
}

// The verdict does not depend on which bytes came in the first buffer and
// which were read after it (and nothing panics).
func FuzzIsLoaderELF(f *testing.F) {
	for _, p := range []string{"/lib64/ld-linux-x86-64.so.2", "/bin/true"} {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b[:min(len(b), 8192)])
		}
	}
	f.Add([]byte("\x7fELF\x02\x01\x01"))
	f.Fuzz(func(t *testing.T, data []byte) {
		// Padded past any table it can name within reach, so that the
		// same bytes are there however they are read.
		padded := append(bytes.Clone(data), make([]byte, 1<<17)...)
		got := loaderOf(padded)
		all := isLoaderELF(padded, func([]byte, int64) (int, error) { return 0, errors.New("read past the buffer") })
		if got != all {
			t.Fatalf("verdict %v read in parts, %v from one buffer", got, all)
		}
	})
}
