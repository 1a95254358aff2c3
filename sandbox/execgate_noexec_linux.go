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
// binds, or a prepared root), each directory on the way resolved.
//
// Why a mount and not the exec gate alone: the gate resolves the path
// when it checks the exec, the kernel again when it runs it, and another
// process of the sandbox can swap a symlink in between (E1: 8 in 1,000
// execs ran the refused program). A noexec mount of the file itself is
// what the kernel looks at during the exec, whatever name led there.
//
// A path that is a symbolic link to a multi-call program of the table
// with floor set (Debian's reboot, halt, poweroff and shutdown are links
// to systemctl) brings that program's file in: the exec gate checks the
// argv[0] it reads, and a thread of the caller can rewrite argv[0] in
// memory between that read and the kernel's (F6: systemctl acted as reboot
// 13 times in 500). systemctl has nothing to talk to in a sandbox (no
// systemd), so it exits 126 there on such hosts.
func noExecFiles(layout rootfs.Layout, paths []string) []NoExecFile {
	var out []NoExecFile
	dirs := map[string]noExecDir{} // each directory resolved once
	checked := map[string]bool{}   // and each file looked at once
	for _, p := range paths {
		dir, base := filepath.Split(filepath.Clean(p))
		if base == "" {
			continue
		}
		d, ok := dirs[dir]
		if !ok {
			d = systemDir(layout, dir)
			dirs[dir] = d
		}
		if !d.ok {
			continue
		}
		f := NoExecFile{Host: filepath.Join(d.host, base), Dest: filepath.Join(d.dest, base)}
		if checked[f.Host] {
			continue // /sbin/x is /usr/sbin/x on a merged-/usr system
		}
		checked[f.Host] = true
		fi, err := os.Lstat(f.Host)
		switch {
		case err != nil:
		case fi.Mode().IsRegular():
			out = append(out, f)
		case fi.Mode()&os.ModeSymlink != 0:
			if t, ok := multiCallTarget(layout, f); ok && !checked[t.Host] {
				checked[t.Host] = true
				out = append(out, t)
			}
		}
	}
	return out
}

// multiCallTarget returns the file the link f leads to, resolved in
// layout's system tree, when it is a regular file named as a multi-call
// program whose file joins the floor (multiCall's floor).
func multiCallTarget(layout rootfs.Layout, f NoExecFile) (NoExecFile, bool) {
	var dest string
	switch layout.Kind {
	case rootfs.KindDir:
		host, err := securejoin.SecureJoin(layout.Dir, f.Dest)
		if err != nil {
			return NoExecFile{}, false
		}
		rel, err := filepath.Rel(layout.Dir, host)
		if err != nil {
			return NoExecFile{}, false
		}
		dest = filepath.Join("/", rel)
	case rootfs.KindHost:
		host, err := filepath.EvalSymlinks(f.Host)
		if err != nil {
			return NoExecFile{}, false
		}
		dest = host
	default:
		return NoExecFile{}, false
	}
	dir, base := filepath.Split(dest)
	if !slices.ContainsFunc(multiCall, func(m multiCallProgram) bool { return m.floor && m.name == base }) {
		return NoExecFile{}, false
	}
	d := systemDir(layout, dir)
	if !d.ok {
		return NoExecFile{}, false
	}
	t := NoExecFile{Host: filepath.Join(d.host, base), Dest: filepath.Join(d.dest, base)}
	if fi, err := os.Lstat(t.Host); err != nil || !fi.Mode().IsRegular() {
		return NoExecFile{}, false
	}
	return t, true
}

// noExecDir is a directory of the system tree: its host path and its
// path in the sandbox.
type noExecDir struct {
	host, dest string
	ok         bool
}

// systemDir resolves dir in layout: inside a prepared root, never out of
// it; in the host layout as on the host, whose binds and merged-/usr
// links the root shows at the same paths, and only within a bind.
func systemDir(layout rootfs.Layout, dir string) noExecDir {
	switch layout.Kind {
	case rootfs.KindDir:
		host, err := securejoin.SecureJoin(layout.Dir, dir)
		if err != nil {
			return noExecDir{}
		}
		rel, err := filepath.Rel(layout.Dir, host)
		if err != nil {
			return noExecDir{}
		}
		return noExecDir{host: host, dest: filepath.Join("/", rel), ok: true}
	case rootfs.KindHost:
		host, err := filepath.EvalSymlinks(dir)
		if err != nil || !slices.ContainsFunc(layout.Binds, func(b string) bool { return within(host, b) }) {
			return noExecDir{}
		}
		return noExecDir{host: host, dest: host, ok: true}
	}
	return noExecDir{}
}
