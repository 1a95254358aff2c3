package config

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tether-dev/tether/internal/protect"
)

// MountMode is how an extra mount is shown in the sandbox.
type MountMode string

// Mount modes.
const (
	MountRO MountMode = "ro" // read-only; the default
	MountRW MountMode = "rw" // writable by the sandbox, as the path's owner (idmapped)
)

// Mount is an extra host path bound into the sandbox at the same path.
// Refused when loading: "/", a path under (or holding) a system directory
// (SystemPaths), one that overlaps the profile's workspace, tether's own
// configuration or state (OwnPaths) or another profile's workspace or
// writable mount, and one on the protected-path list (protect: .ssh,
// .gitconfig, .git, shell rc files …). When a sandbox starts, the path
// must exist, be reached through no symlink, and (rw) belong to the
// workspace's owner; see runner.CheckMounts.
type Mount struct {
	// Path is the host path; "~" is the user's home, a relative path is
	// resolved against the config file's directory.
	Path string    `yaml:"path" json:"path"`
	Mode MountMode `yaml:"mode" json:"mode"`
}

// SystemPaths are host directories no mount may be, lie under or hold:
// the kernel's filesystems, and the system directories a sandbox already
// sees read-only (or, with a prepared root, must not see) — writable, an
// idmapped mount of a root-owned tree would let container root write as
// host root.
var SystemPaths = []string{"/proc", "/sys", "/dev", "/run", "/boot", "/etc", "/usr", "/bin", "/sbin",
	"/lib", "/lib32", "/lib64", "/libx32", "/var/run", "/var/lib", "/var/log"}

// MountProblem returns why the absolute, cleaned host path p may not be
// mounted into a sandbox whose workspace is ws ("" when not known) and
// whose tether's own paths are own, or "". It is the static half of the
// check (no I/O); the sandbox's start does the rest.
func MountProblem(p, ws string, own []string) string {
	if p == "/" {
		return "it is the host's root"
	}
	for _, s := range SystemPaths {
		if protect.Overlaps(p, s) {
			return fmt.Sprintf("it overlaps the system directory %s", s)
		}
	}
	if ws != "" && protect.Overlaps(p, ws) {
		if strings.HasPrefix(ws, p+"/") || ws == p {
			return fmt.Sprintf("it is or holds the workspace %s", ws)
		}
		return fmt.Sprintf("it lies inside the workspace %s (whose protected paths a second mount would bypass)", ws)
	}
	for _, o := range own {
		if o != "" && protect.Overlaps(p, filepath.Clean(o)) {
			return fmt.Sprintf("it overlaps tether's own configuration or state %s", o)
		}
	}
	if why := protect.Reason(strings.TrimPrefix(p, "/")); why != "" {
		return "it is on the protected-path list: " + why
	}
	return ""
}

// checkMounts validates and completes a profile's terminal.mounts.
func (v *validator) checkMounts(t *Terminal, at func(keys ...string) []string, baseDir string, own []string) {
	for i := range t.Mounts {
		m := &t.Mounts[i]
		key := at("terminal", "mounts", strconv.Itoa(i))
		switch m.Mode {
		case "":
			m.Mode = MountRO
		case MountRO, MountRW:
		default:
			v.errorf(append(key, "mode"), "invalid terminal.mounts mode %q (want ro or rw)", m.Mode)
		}
		if strings.TrimSpace(m.Path) == "" {
			v.errorf(key, "terminal.mounts entry %d has no path", i)
			continue
		}
		if strings.ContainsRune(m.Path, 0) {
			v.errorf(append(key, "path"), "terminal.mounts path contains a NUL byte")
			continue
		}
		m.Path = absPath(m.Path, baseDir)
		if t.Backend == BackendHost {
			v.errorf(key, "terminal.mounts needs backend: sandbox (backend host sees the whole host)")
		}
		if why := MountProblem(m.Path, t.Cwd, own); why != "" {
			v.errorf(append(key, "path"), "terminal.mounts %s is refused: %s", m.Path, why)
		}
		for j := range i {
			if protect.Overlaps(m.Path, t.Mounts[j].Path) {
				v.errorf(append(key, "path"), "terminal.mounts %s overlaps %s (entry %d): list each directory once", m.Path, t.Mounts[j].Path, j)
			}
		}
	}
}

// checkCrossMounts refuses a writable mount of one profile that overlaps
// another profile's workspace or mounts: a sandbox of the first could
// then plant symlinks or files where a sandbox of the second is set up.
func (v *validator) checkCrossMounts(cfg *Config) {
	for name, p := range cfg.Profiles {
		for i, m := range p.Terminal.Mounts {
			if m.Mode != MountRW {
				continue
			}
			for other, q := range cfg.Profiles {
				if other == name {
					continue
				}
				if q.Terminal.Cwd != "" && protect.Overlaps(m.Path, q.Terminal.Cwd) {
					v.errorf([]string{"profiles", name, "terminal", "mounts", strconv.Itoa(i), "path"},
						"terminal.mounts %s (rw) overlaps the workspace of profile %s", m.Path, other)
				}
				for _, n := range q.Terminal.Mounts {
					if protect.Overlaps(m.Path, n.Path) && m.Path != n.Path {
						v.errorf([]string{"profiles", name, "terminal", "mounts", strconv.Itoa(i), "path"},
							"terminal.mounts %s (rw) overlaps %s, a mount of profile %s (share the same directory or none)", m.Path, n.Path, other)
					}
				}
			}
		}
	}
}
