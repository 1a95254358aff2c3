package sandbox

import (
	"errors"
	"fmt"
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
//
// The configuration of a repository enclosing the workspace (a package of
// a monorepo given as the workspace) counts too: the host's git in the
// enclosing work tree reads it, and a `core.hooksPath = front/hooks` there
// names the workspace's hooks/ (F10 of the session-11 red team). Its
// relative paths are taken from the enclosing work tree's top.
//
// A directory the configuration names that is the workspace or holds it
// (a hooks directory every file of the workspace would be a hook of)
// cannot be frozen without freezing the whole workspace: refused
// (ErrUnsafeWorkspace).
//
// look is called with every host path whose content or presence decides
// the answer, before it is read (the configuration files, each .git
// looked for above the workspace, the directories holding the homes'
// per-user entries, where a new link would appear): the creation gate's
// view reads it all again when one of them changes
// (protect.ConfigView.Host), so a host that changes its configuration in
// the middle of a session is followed at the session's next write.
func hostTrusted(root int, ws string, repos []gitRepo, look func(hostPath string)) ([]protect.Named, error) {
	var out []protect.Named
	var unsafe error
	wsReal := fspath.Real(ws)
	inWS := func(p string) (string, bool) {
		return strings.CutPrefix(fspath.Real(p), wsReal+"/")
	}
	// readConfig reads the configuration file; home is the home of the
	// one user whose git reads it ("" for a file every user's git reads:
	// then ~/ is expanded with each of protect.HomesFor); top is the work
	// tree its relative paths are taken from ("" for each of repos').
	var readConfig func(file, home, top string, depth int)
	readConfig = func(file, home, top string, depth int) {
		if depth > protect.MaxIncludeDepth {
			return
		}
		look(file)
		real := fspath.Real(file)
		data, err := protect.ReadHostConfig(real)
		if errors.Is(err, protect.ErrConfigTooLarge) && unsafe == nil {
			unsafe = fmt.Errorf("%w: %w", ErrUnsafeWorkspace, err)
		}
		if err != nil {
			return
		}
		homes := []string{home}
		if home == "" {
			homes = protect.HomesFor(ws)
		}
		for _, ref := range protect.ConfigRefs(data) {
			var paths []string
			switch p := ref.Path; {
			case strings.HasPrefix(p, "~"):
				paths = protect.ExpandTilde(p, homes)
			case strings.Contains(p, "$"):
				continue
			case filepath.IsAbs(p):
				paths = []string{p}
			case ref.Base == protect.BaseFile:
				paths = []string{filepath.Join(filepath.Dir(real), p)}
			case top != "":
				paths = []string{filepath.Join(top, p)}
			default:
				// Relative to the top of whichever work tree git runs in.
				for _, r := range repos {
					if rel, ok := ref.Resolve(ws, "", r.top); ok && rel != r.top && rel != "." && ref.Frozen(root, rel) {
						out = append(out, protect.Named{Rel: rel, Kind: ref.Kind, Reserve: ref.Missing, Key: file + "'s " + ref.Key})
					}
				}
				continue
			}
			for _, p := range paths {
				if ref.Include {
					readConfig(p, home, top, depth+1)
				}
				if pr := fspath.Real(p); ref.Kind == protect.Dir && (pr == wsReal || strings.HasPrefix(wsReal, pr+"/")) && unsafe == nil {
					unsafe = fmt.Errorf("%w: %s's %s names %s, which holds the workspace: every file of it would be read or run", ErrUnsafeWorkspace, file, ref.Key, ref.Path)
				}
				if rel, ok := inWS(p); ok && ref.Frozen(root, rel) {
					out = append(out, protect.Named{Rel: rel, Kind: ref.Kind, Reserve: ref.Missing, Key: file + "'s " + ref.Key})
				}
			}
		}
	}
	for _, h := range trustedHomes(ws) {
		if fspath.Real(h) == wsReal {
			continue
		}
		dirs := map[string]bool{}
		for _, e := range protect.Workspace() {
			if !e.Home {
				continue
			}
			p := filepath.Join(h, e.Path)
			if d := filepath.Dir(p); !dirs[d] {
				dirs[d] = true
				look(d)
			}
			if rel, ok := inWS(p); ok {
				out = append(out, protect.Named{Rel: rel, Kind: e.Kind, Reserve: true, Key: p})
			}
		}
		readConfig(filepath.Join(h, ".gitconfig"), h, "", 0)
		readConfig(filepath.Join(h, ".config", "git", "config"), h, "", 0)
	}
	if os.Getenv("GIT_CONFIG_NOSYSTEM") == "" {
		readConfig("/etc/gitconfig", "", "", 0)
	}
	if top, gitDir, ok := enclosingRepo(wsReal, look); ok {
		for _, f := range []string{"config", "config.worktree"} {
			readConfig(filepath.Join(gitDir, f), "", top, 0)
		}
	}
	return out, unsafe
}

// hostTrustedView is hostTrusted as the creation gate's configuration
// view of the tree at ws asks it (protect.ConfigView.Host), with the
// repositories frozen there at start.
func hostTrustedView(ws string, repos []protect.GitRepo) func(root int, look func(string)) ([]protect.Named, error) {
	rs := make([]gitRepo, len(repos))
	for i, r := range repos {
		rs[i] = gitRepo{dir: r.Dir, top: r.Top}
	}
	return func(root int, look func(string)) ([]protect.Named, error) {
		return hostTrusted(root, ws, rs, look)
	}
}

// enclosingRepo returns the work tree's top and git directory of the
// nearest repository above the directory ws (a .git directory, or a .git
// file's "gitdir:"), as git's discovery from a directory of ws that has
// no repository of its own would find it. It calls look with each .git it
// looks for.
func enclosingRepo(ws string, look func(string)) (top, gitDir string, ok bool) {
	for d := filepath.Dir(ws); ; d = filepath.Dir(d) {
		g := filepath.Join(d, protect.GitDirName)
		look(g)
		if fi, err := os.Lstat(g); err == nil {
			switch {
			case fi.IsDir():
				return d, g, true
			case fi.Mode().IsRegular():
				if data, err := os.ReadFile(g); err == nil {
					if t, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:"); ok {
						t = strings.TrimSpace(t)
						if !filepath.IsAbs(t) {
							t = filepath.Join(d, t)
						}
						return d, fspath.Real(t), true
					}
				}
			}
		}
		if d == "/" {
			return "", "", false
		}
	}
}
