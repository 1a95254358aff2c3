package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// BenchmarkFrozenLinks measures what the link check adds to a sandbox's
// start: the hooks directory of a fresh repository (git's samples), and a
// home's .local/lib of 10,000 files.
func BenchmarkFrozenLinks(b *testing.B) {
	ws := b.TempDir()
	out, err := exec.Command("git", "-C", ws, "init", "-q").CombinedOutput()
	require.NoError(b, err, "%s", out)
	lib := filepath.Join(ws, ".local/lib/python3.11/site-packages")
	require.NoError(b, os.MkdirAll(lib, 0o755))
	for i := range 10_000 {
		d := filepath.Join(lib, fmt.Sprintf("pkg%03d", i/100))
		require.NoError(b, os.MkdirAll(d, 0o755))
		require.NoError(b, os.WriteFile(filepath.Join(d, fmt.Sprintf("m%03d.py", i%100)), nil, 0o644))
	}
	root, err := unix.Open(ws, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	require.NoError(b, err)
	defer unix.Close(root)
	for _, dir := range []string{".git/hooks", ".local/lib"} {
		b.Run(dir, func(b *testing.B) {
			for b.Loop() {
				c := &linkCheck{root: root, ws: ws, left: maxFrozenEntries}
				if _, err := c.linksIn(dir, false, 0); err != nil || c.truncated {
					b.Fatal(err, c.truncated)
				}
			}
		})
	}
}
