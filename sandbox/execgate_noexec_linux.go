package sandbox

import (
	"os"
	"path/filepath"
	"slices"

	securejoin "github.com/cyphar/filepath-securejoin"

	"github.com/tether-dev/tether/rootfs"
)

// NoExecFile is one program file the sandbox may not run (Config.NoExec):
// its host path and its path inside the sandbox, every directory on the
// way resolved.
type NoExecFile struct {
	Host, Dest string
}

// noExecFiles finds each of paths in layout's system tree, once: the
// regular files, not symbolic links, that lie in it (a host layout's
// binds, or a prepared root).
//
// Why a mount and not the exec gate alone: the gate resolves the path
// when it checks the exec, the kernel again when it runs it, and another
// process of the sandbox can swap a symlink in between (E1: 8 in 1,000
// execs ran the refused program). A noexec mount of the file itself is
// what the kernel looks at during the exec, whatever name led there.
func noExecFiles(layout rootfs.Layout, paths []string) []NoExecFile {
	var out []NoExecFile
	for _, p := range paths {
		f, ok := systemFile(layout, p)
		if ok && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// systemFile resolves p's directory in layout (inside a prepared root,
// never out of it; in the host layout as on the host, which the root's
// binds and merged-/usr links show at the same paths) and reports its
// file when that is a regular file of the tree.
func systemFile(layout rootfs.Layout, p string) (NoExecFile, bool) {
	dir, base := filepath.Split(filepath.Clean(p))
	if base == "" {
		return NoExecFile{}, false
	}
	var f NoExecFile
	switch layout.Kind {
	case rootfs.KindDir:
		hostDir, err := securejoin.SecureJoin(layout.Dir, dir)
		if err != nil {
			return NoExecFile{}, false
		}
		rel, err := filepath.Rel(layout.Dir, hostDir)
		if err != nil {
			return NoExecFile{}, false
		}
		f = NoExecFile{Host: filepath.Join(hostDir, base), Dest: filepath.Join("/", rel, base)}
	case rootfs.KindHost:
		hostDir, err := filepath.EvalSymlinks(dir)
		if err != nil {
			return NoExecFile{}, false
		}
		f.Host = filepath.Join(hostDir, base)
		f.Dest = f.Host
		if !slices.ContainsFunc(layout.Binds, func(b string) bool { return within(f.Dest, b) }) {
			return NoExecFile{}, false
		}
	default:
		return NoExecFile{}, false
	}
	fi, err := os.Lstat(f.Host)
	if err != nil || !fi.Mode().IsRegular() {
		return NoExecFile{}, false
	}
	return f, true
}
