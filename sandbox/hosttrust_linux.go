package sandbox

import (
	"io"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/tether-dev/tether/internal/fspath"
	"github.com/tether-dev/tether/internal/protect"
)

// Files the host trusts outside the workspace can be files of the
// workspace: ~/.bashrc or ~/.gitconfig symlinked into a dotfiles checkout
// (stow, chezmoi's symlink mode, a hand-made link), or a global git
// configuration whose core.hooksPath or include.path names a directory of
// the workspace. A sandbox working in that checkout would rewrite what the
// host's next login shell or git runs. hostTrusted finds them, so that
// they are frozen like the workspace's own entries.

// trustedHomes returns the home directories whose per-user files the host
// trusts for a workspace: tether's own ($HOME) and the workspace owner's
// (the password database).
func trustedHomes(ws string) []string {
	var homes []string
	if h := os.Getenv("HOME"); filepath.IsAbs(h) {
		homes = append(homes, filepath.Clean(h))
	}
	var st unix.Stat_t
	if unix.Stat(ws, &st) == nil {
		if u, err := user.LookupId(strconv.FormatUint(uint64(st.Uid), 10)); err == nil && filepath.IsAbs(u.HomeDir) {
			if h := filepath.Clean(u.HomeDir); len(homes) == 0 || homes[0] != h {
				homes = append(homes, h)
			}
		}
	}
	return homes
}

// hostTrusted returns the workspace paths that the per-user files of the
// trusted homes really are (protect.Entry.Home, symlinks resolved), and
// those that the global and system git configuration names
// (protect.ConfigRefs; a relative hooks directory or command is taken in
// each of repos' work trees, as git would). A home that is the workspace
// itself is left out: its entries are the workspace's own.
func hostTrusted(root int, ws string, repos []gitRepo) []configPath {
	var out []configPath
	wsReal := fspath.Real(ws)
	inWS := func(p string) (string, bool) {
		return strings.CutPrefix(fspath.Real(p), wsReal+"/")
	}
	var readConfig func(file, home string, depth int)
	readConfig = func(file, home string, depth int) {
		if depth > maxIncludeDepth {
			return
		}
		real := fspath.Real(file)
		f, err := os.Open(real)
		if err != nil {
			return
		}
		data, err := io.ReadAll(io.LimitReader(f, 1<<20))
		f.Close()
		if err != nil {
			return
		}
		for _, ref := range protect.ConfigRefs(data) {
			p := ref.Path
			switch {
			case strings.HasPrefix(p, "~/") && home != "":
				p = filepath.Join(home, p[2:])
			case strings.HasPrefix(p, "~") || strings.Contains(p, "$"):
				continue
			case !filepath.IsAbs(p) && ref.Base == protect.BaseFile:
				p = filepath.Join(filepath.Dir(real), p)
			case !filepath.IsAbs(p):
				// Relative to the top of whichever work tree git runs in.
				for _, r := range repos {
					if rel, ok := ref.Resolve(ws, "", r.top); ok && rel != r.top && rel != "." && named(root, rel, ref) {
						out = append(out, configPath{rel: rel, kind: ref.Kind, reserve: ref.Missing})
					}
				}
				continue
			}
			if ref.Include {
				readConfig(p, home, depth+1)
			}
			if rel, ok := inWS(p); ok && named(root, rel, ref) {
				out = append(out, configPath{rel: rel, kind: ref.Kind, reserve: ref.Missing})
			}
		}
	}
	for _, h := range trustedHomes(ws) {
		if fspath.Real(h) == wsReal {
			continue
		}
		for _, e := range protect.Workspace() {
			if !e.Home {
				continue
			}
			if rel, ok := inWS(filepath.Join(h, e.Path)); ok {
				out = append(out, configPath{rel: rel, kind: e.Kind, reserve: true})
			}
		}
		readConfig(filepath.Join(h, ".gitconfig"), h, 0)
		readConfig(filepath.Join(h, ".config", "git", "config"), h, 0)
	}
	if os.Getenv("GIT_CONFIG_NOSYSTEM") == "" {
		readConfig("/etc/gitconfig", "", 0)
	}
	return out
}
