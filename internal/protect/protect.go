// Package protect holds the one list of paths inside a workspace that the
// host later executes or trusts: git's control surface, shell startup
// files, direnv's .envrc, ssh's per-user files, tether's own config and
// state, and what a home directory's PATH, Python, editors, pager, desktop,
// systemd, package managers and gpg run or trust. A sandboxed command must
// not be able to create or change any of them, or the next host-side `git
// status`, login shell or `cd` runs what the command planted, with the
// host user's authority.
//
// Two consumers read the list: the sandbox, which makes the entries at the
// workspace root immutable inside every sandbox (sandbox/protect_linux.go),
// and the runner's file tools, which refuse to write a path for which
// Reason is not empty.
//
// The list and its matching are pure: callers resolve paths (without
// following symlinks out of the workspace) and hand them workspace-relative,
// slash-separated names. One check reads the file system, by descriptor
// (protect_linux.go): ControlReason, whether a name in an opened directory
// lies on the control surface of a git directory at or above it, which no
// name can tell (a bare repository is a directory of any name).
package protect

import (
	"errors"
	"fmt"
	"path"
	"strings"
)

// Kind says what a protected entry is when it exists.
type Kind uint8

const (
	// File is a regular file.
	File Kind = iota + 1
	// Dir is a directory; everything under it is protected too.
	Dir
	// Repo is a git directory or a .git file naming one: the path itself
	// is protected (it may not be replaced, renamed or created), and
	// inside it only the GitDir entries.
	Repo
)

func (k Kind) String() string {
	switch k {
	case File:
		return "file"
	case Dir:
		return "directory"
	case Repo:
		return "git directory"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Entry is one protected path.
type Entry struct {
	// Path is slash-separated and relative: to the workspace root for
	// Workspace entries, to a git directory for GitDir entries.
	Path string
	// Kind is what the path is when it exists.
	Kind Kind
	// Why says what the host does with the path, for error messages.
	Why string
	// Home says the host trusts the path only when the workspace is a
	// home directory (shell startup files, ssh's and git's per-user
	// files). The sandbox freezes it when it exists, and reserves it when
	// it does not only in a home workspace; Reason refuses it everywhere.
	Home bool
}

// GitDirName is the name of a repository's git directory, or of a file
// ("gitdir: PATH") naming it.
const GitDirName = ".git"

// gitDir is git's control surface inside a git directory: everything git
// reads to decide what programs to run or where the repository really is.
// Objects, refs, logs, the index and HEAD are not on it: ordinary git work
// (add, commit, checkout -b, stash) writes them, and they make git run
// nothing.
var gitDir = []Entry{
	{"config", File, "git reads it on every command (core.fsmonitor, core.hooksPath, core.sshCommand, aliases and filters run programs)", false},
	{"config.worktree", File, "git reads it as configuration when extensions.worktreeConfig is set", false},
	{"hooks", Dir, "git runs the programs in it", false},
	{"commondir", File, "git reads config and hooks from the directory it names", false},
	{"modules", Dir, "it holds the submodules' git directories, each with its own config and hooks", false},
	{"worktrees", Dir, "it holds the linked worktrees' git directories, each with its own config and hooks", false},
	{"info", Dir, "git reads attributes (filter and diff drivers), exclude, sparse-checkout and grafts from it", false},
	{"objects/info/alternates", File, "git reads objects from the directories it names", false},
	{"objects/info/http-alternates", File, "git fetches objects from the URLs it names", false},
}

// workspace are the entries relative to the workspace root (the home
// directory, when the workspace is one). Shell entries cover every shell
// Debian ships: a login or interactive shell runs them. .git, .envrc
// (direnv runs it in any directory) and .tether.yaml matter in any
// workspace; the rest only in a home directory (Entry.Home).
var workspace = []Entry{
	{GitDirName, Repo, "it is the repository's git directory (or a file naming it)", false},
	{".bashrc", File, "bash runs it at start", true},
	{".bash_profile", File, "bash runs it at login", true},
	{".bash_login", File, "bash runs it at login", true},
	{".bash_logout", File, "bash runs it at logout", true},
	{".profile", File, "sh, bash and ksh run it at login", true},
	{".zshenv", File, "zsh runs it at every start", true},
	{".zprofile", File, "zsh runs it at login", true},
	{".zshrc", File, "zsh runs it at start", true},
	{".zlogin", File, "zsh runs it at login", true},
	{".zlogout", File, "zsh runs it at logout", true},
	{".kshrc", File, "ksh runs it at start", true},
	{".mkshrc", File, "mksh runs it at start", true},
	{".cshrc", File, "csh and tcsh run it at start", true},
	{".tcshrc", File, "tcsh runs it at start", true},
	{".login", File, "csh and tcsh run it at login", true},
	{".logout", File, "csh and tcsh run it at logout", true},
	{".inputrc", File, "readline reads it (key bindings can run commands)", true},
	{".config/fish", Dir, "fish runs config.fish, conf.d and functions from it", true},
	{".gitconfig", File, "git reads it as the user's configuration", true},
	{".config/git", Dir, "git reads the user's configuration and attributes from it", true},
	{".envrc", File, "direnv runs it on cd", false},
	{".tether.yaml", File, "tether reads it as configuration", false},
	{".ssh/authorized_keys", File, "sshd lets the keys in it log in", true},
	{".ssh/authorized_keys2", File, "sshd lets the keys in it log in", true},
	{".ssh/config", File, "ssh reads it (ProxyCommand and LocalCommand run programs)", true},
	{".ssh/rc", File, "sshd runs it at login", true},
	{".ssh/environment", File, "sshd sets the environment from it", true},
	// What a login shell, the desktop or the user's tools later run from
	// the home directory besides the shells' own files.
	{".bash_aliases", File, "Debian's .bashrc runs it", true},
	{".local/bin", Dir, "Debian's .profile puts it on PATH: its programs shadow the system's", true},
	// The whole tree, not python3*/site-packages/*.pth alone: the user
	// site-packages precedes the system's on sys.path, so any module in it
	// shadows one that host tools import, and a python3.N made now is read
	// once the host's Python becomes 3.N (a directory that does not exist
	// yet can only be reserved by its literal name).
	{".local/lib", Dir, "Python imports the user site-packages in it before the system's, and runs its .pth files and usercustomize.py at every start", true},
	{".local/share/systemd", Dir, "systemd --user starts the units in it", true},
	{".local/share/applications", Dir, "the desktop runs the Exec line of the .desktop files in it, which shadow the system's", true},
	{".config/systemd", Dir, "systemd --user starts the units in it and reads its manager configuration", true},
	{".config/autostart", Dir, "the desktop starts the programs it names at login", true},
	{".config/environment.d", Dir, "systemd --user sets the session's environment (PATH, LD_PRELOAD) from it", true},
	{".pam_environment", File, "pam_env sets the login environment from it", true},
	{".xprofile", File, "display managers run it at graphical login", true},
	{".xinitrc", File, "startx runs it", true},
	{".xsession", File, "Xsession runs it at graphical login", true},
	{".xsessionrc", File, "Debian's Xsession runs it at graphical login", true},
	{".vimrc", File, "vim runs it at start", true},
	{".gvimrc", File, "gvim runs it at start", true},
	{".exrc", File, "vi runs it at start", true},
	{".vim", Dir, "vim runs its vimrc, plugins and autoload scripts", true},
	{".config/nvim", Dir, "neovim runs its init.lua, init.vim and plugins", true},
	{".emacs", File, "emacs runs it at start", true},
	{".emacs.el", File, "emacs runs it at start", true},
	// The whole directory, not init.el alone: early-init.el runs too, and
	// package.el loads the autoloads of every package in elpa/ first.
	{".emacs.d", Dir, "emacs runs init.el, early-init.el and its packages' autoloads from it", true},
	{".nanorc", File, "nano reads it (speller and linter run programs)", true},
	{".config/nano", Dir, "nano reads its nanorc (speller and linter run programs)", true},
	{".lesskey", File, "less reads it (LESSOPEN in it runs a program on every file)", true},
	{".less", File, "less reads it as compiled lesskey (LESSOPEN in it runs a program on every file)", true},
	{".config/lesskey", File, "less reads it (LESSOPEN in it runs a program on every file)", true},
	{".config/less", File, "less reads it as compiled lesskey (LESSOPEN in it runs a program on every file)", true},
	{".cargo/config", File, "cargo reads it (build.rustc-wrapper, target runners and aliases run programs)", true},
	{".cargo/config.toml", File, "cargo reads it (build.rustc-wrapper, target runners and aliases run programs)", true},
	{".cargo/env", File, "the .profile and .bashrc rustup writes run it", true},
	{".cargo/bin", Dir, "rustup's .cargo/env puts it on PATH: its programs shadow the system's", true},
	{".npmrc", File, "npm reads it (script-shell, node-options and git run programs)", true},
	{".config/pip", Dir, "pip reads its configuration (index-url, find-links: what pip installs)", true},
	{".pip", Dir, "pip reads its legacy configuration (index-url, find-links: what pip installs)", true},
	{".gnupg", Dir, "gpg trusts its keys and trustdb and gpg-agent runs the pinentry-program its configuration names", true},
	// The home owner's own tether (its XDG defaults), which is not the
	// tether running this sandbox: a root daemon working on /home/alice
	// hides only its own state and config (config.OwnPaths), and alice's
	// tether would then approve what the sandbox wrote into its allowlist.
	{".config/tether", Dir, "the home owner's tether reads its configuration from it", true},
	{".local/state/tether", Dir, "the home owner's tether keeps its allowlist, approvals and audit log in it", true},
}

// Workspace returns the entries relative to the workspace root, .git first.
// The caller may modify the returned slice.
func Workspace() []Entry { return append([]Entry(nil), workspace...) }

// GitDir returns the entries relative to a git directory. The caller may
// modify the returned slice.
func GitDir() []Entry { return append([]Entry(nil), gitDir...) }

// Reason returns why rel, a workspace-relative slash-separated path whose
// symlinks the caller has resolved inside the workspace, is protected, or
// "" when it is not. It is Set{}.Reason(rel): the static list only.
//
// Matching is deliberately wider than what the sandbox binds: a Workspace
// entry matches at any depth (sub/.bashrc, sub/.ssh/config: the workspace
// may hold a home directory or a nested project), and a GitDir entry under
// any directory named .git. A path under a protected entry is protected,
// and so is a directory that holds one (renaming or replacing it would
// carry the entry away).
func Reason(rel string) string { return Set{}.Reason(rel) }

// Set is the protected paths of one workspace. The zero value is the
// static list alone.
type Set struct {
	// Root is the workspace's absolute, canonical host path; needed only
	// with Extra.
	Root string
	// GitDirs are workspace-relative git directories other than .git ones,
	// such as the directory a .git file at the root names (GitFileTarget).
	GitDirs []string
	// Extra are absolute host paths protected wherever they are: tether's
	// own config file and state directory.
	Extra []string
	// NotHome leaves out the entries only a home directory's host trusts
	// (Entry.Home): the sandbox's creation gate in a workspace that is not
	// one, where a project's own .zlogin runs nothing.
	NotHome bool
	// Home says the workspace is a home directory: every entry at its
	// root whose name begins with "." is protected, and ~/bin, ~/go/bin
	// and ~/go/pkg (homeReason).
	Home bool
}

// Reason returns why rel (see the package Reason) is protected, or "".
func (s Set) Reason(rel string) string {
	rel = path.Clean(strings.TrimPrefix(rel, "/"))
	if rel == "." || rel == "" {
		if why := s.extraReason(s.Root); why != "" {
			return why
		}
		return ""
	}
	parts := strings.Split(rel, "/")
	for j := range parts {
		for _, e := range workspace {
			if e.Home && s.NotHome {
				continue
			}
			ep := split(e.Path)
			if e.Kind == Repo && len(parts)-j > len(ep) {
				continue // inside a git directory: gitReason decides
			}
			if hasPrefix(parts[j:], e.Path) {
				return fmt.Sprintf("%s is protected: %s", path.Join(parts[:j+len(ep)]...), e.Why)
			}
			// A directory on the way to an entry (.ssh, .config) may not
			// be replaced either.
			if len(parts)-j < len(ep) && hasPrefix(ep, path.Join(parts[j:]...)) {
				return fmt.Sprintf("%s is protected: it holds %s", rel, e.Path)
			}
		}
		if hasPrefix(parts[j:j+1], GitDirName) {
			if why := gitReason(parts[:j+1], parts[j+1:]); why != "" {
				return why
			}
		}
	}
	if why := headReason(parts, s.GitDirs); why != "" {
		return why
	}
	if s.Home {
		if why := homeReason(parts); why != "" {
			return why
		}
	}
	for _, g := range s.GitDirs {
		g = path.Clean(strings.TrimPrefix(g, "/"))
		gp := split(g)
		if !hasPrefix(parts, g) && !hasPrefix(gp, rel) {
			continue
		}
		if len(parts) <= len(gp) {
			return fmt.Sprintf("%s is protected: it is a git directory named by a .git file", g)
		}
		if why := gitReason(gp, parts[len(gp):]); why != "" {
			return why
		}
	}
	if s.Root != "" {
		return s.extraReason(path.Join(s.Root, rel))
	}
	return ""
}

// SocketReason returns why a unix socket may not be bound at rel
// (workspace-relative), or "": where Reason refuses any name, and in a
// home anywhere under a dot-entry or a PATH directory (homeRoots), the
// caches included (Reason freezes them too). The person's programs connect to sockets
// there (git's credential-cache daemon at ~/.cache/git/credential/socket,
// ssh's ControlMaster in ~/.ssh, gpg-agent's): a listener the sandbox
// bound in a socket's place would be handed their secrets.
func (s Set) SocketReason(rel string) string {
	if why := s.Reason(rel); why != "" {
		return why
	}
	if !s.Home {
		return ""
	}
	parts := split(path.Clean(strings.TrimPrefix(rel, "/")))
	if strings.HasPrefix(parts[0], ".") && !hasPrefix(parts, GitDirName) {
		return fmt.Sprintf("a socket at %s is refused: in a home directory the person's programs connect to the sockets under its dot-entries (git's credential cache, ssh's ControlMaster, gpg-agent)", rel)
	}
	return ""
}

// homeRoots are the entries at a home directory's root that are protected
// besides its dot-entries, with why: directories on PATH by default
// (Debian's .profile puts ~/bin there; go install writes ~/go/bin, which
// go's installer and most guides put there), and Go's module cache, which
// is not a dot-entry.
var homeRoots = []struct{ path, why string }{
	{"bin", "in a home directory bin is on PATH by default"},
	{"go/bin", "in a home directory go/bin is on PATH by default"},
	{"go/pkg", "the host's go runs the toolchains in go/pkg/mod/golang.org/toolchain@… and compiles the module sources beside them"},
}

// HomeRoots returns the entries at a home directory's root that the home
// rule protects besides its dot-entries (~/bin, ~/go/bin, ~/go/pkg).
func HomeRoots() []string {
	var ps []string
	for _, r := range homeRoots {
		ps = append(ps, r.path)
	}
	return ps
}

// homeReason is the reason for parts (a path relative to a home directory
// that is the workspace) under the home rule, or "": every entry at the
// root whose name begins with "." is protected, and homeRoots. The
// programs a person runs read their startup files, configuration, plugins
// and shims from their home's dot-entries, and no list of them can be
// complete (tmux, gdb, sqlite, kubectl, docker's cli-plugins, pyenv's
// shims, rustup's toolchains …).
//
// The caches are no exception (.cache, .npm, .cargo/registry, .m2,
// .gradle, go/pkg/mod): the host runs what they hold without checking it
// against anything outside them. jedi unpickles ~/.cache/jedi at the next
// completion, pre-commit runs its hook environments, npx its _npx
// installs, go a toolchain whose ziphash file (not its bytes) matches
// go.sum, cargo the build scripts of unpacked sources, Go links the
// compiled packages of go-build; the resolvers check hashes when they
// download, not for what is already there. A sandbox's own HOME is /tmp
// (sandbox.DefaultEnv), where its builds keep their caches.
func homeReason(parts []string) string {
	if hasPrefix(parts, GitDirName) {
		return "" // a dotfiles repository: git's own rules (gitDir) decide
	}
	rel := path.Join(parts...)
	for _, r := range homeRoots {
		if hasPrefix(parts, r.path) {
			return fmt.Sprintf("%s is protected: %s", rel, r.why)
		}
		if len(parts) < len(split(r.path)) && hasPrefix(split(r.path), rel) {
			return fmt.Sprintf("%s is protected: it holds %s", rel, r.path)
		}
	}
	if strings.HasPrefix(parts[0], ".") {
		return fmt.Sprintf("%s is protected: in a home directory every entry whose name begins with \".\" is (programs read their configuration, plugins and startup files from them, and run what their caches hold)", rel)
	}
	return ""
}

// gitReason is the reason for rest, a path inside the git directory dir,
// or "" when git's control surface does not hold it.
func gitReason(dir, rest []string) string {
	for _, e := range gitDir {
		if hasPrefix(rest, e.Path) {
			return fmt.Sprintf("%s is protected: %s", path.Join(append(append([]string(nil), dir...), split(e.Path)...)...), e.Why)
		}
		// A directory on the way to an entry (objects/info) may not be
		// replaced or renamed either.
		if len(rest) > 0 && len(rest) < len(split(e.Path)) && hasPrefix(split(e.Path), path.Join(rest...)) {
			return fmt.Sprintf("%s is protected: it holds %s", path.Join(append(append([]string(nil), dir...), rest...)...), e.Path)
		}
	}
	return ""
}

// headReason is the reason for a HEAD outside a git directory: with
// objects/ and refs/ beside it, it makes its directory a bare repository,
// whose config the host's git reads there. A HEAD under a .git directory
// or one of gitDirs (a git directory's own, logs/HEAD, refs/.../HEAD) is
// git's.
func headReason(parts, gitDirs []string) string {
	if !strings.EqualFold(parts[len(parts)-1], "HEAD") {
		return ""
	}
	for _, p := range parts[:len(parts)-1] {
		if strings.EqualFold(p, GitDirName) {
			return ""
		}
	}
	for _, g := range gitDirs {
		if hasPrefix(parts, path.Clean(strings.TrimPrefix(g, "/"))) {
			return ""
		}
	}
	return fmt.Sprintf("%s is protected: a HEAD outside a git directory makes its directory a bare repository, whose config git reads", path.Join(parts...))
}

func (s Set) extraReason(abs string) string {
	if abs == "" {
		return ""
	}
	for _, e := range s.Extra {
		if e == "" {
			continue
		}
		e = path.Clean(e)
		if Overlaps(abs, e) {
			return fmt.Sprintf("%s is tether's own configuration or state and is protected", e)
		}
	}
	return ""
}

// Overlaps reports whether the cleaned absolute paths a and b are equal or
// one lies under the other.
func Overlaps(a, b string) bool {
	return a == b || within(a, b) || within(b, a)
}

// within reports whether p lies strictly under dir.
func within(p, dir string) bool {
	if dir == "/" {
		return p != "/"
	}
	return strings.HasPrefix(p, dir+"/")
}

func split(p string) []string { return strings.Split(p, "/") }

// hasPrefix reports whether the components parts begin with the
// components of p. It is the one place names are compared, and it compares
// them in any letter case: on a case-folding directory (ext4 or tmpfs with
// casefold, chattr +F) ".GIT/config" is .git/config, and the creation gate
// refuses .git in any case for the same reason. A legitimate .Git/config
// that is not git's is rare enough to refuse.
func hasPrefix(parts []string, p string) bool {
	pp := split(p)
	if len(parts) < len(pp) {
		return false
	}
	for i := range pp {
		if !strings.EqualFold(parts[i], pp[i]) {
			return false
		}
	}
	return true
}

// ErrGitFile is wrapped by GitFileTarget's errors.
var ErrGitFile = errors.New("unusable .git file")

// ErrOutside is returned by GitFileTarget when the git directory a .git
// file names lies outside the workspace (the sandbox cannot reach it, so
// there is nothing to protect inside the workspace).
var ErrOutside = errors.New("git directory outside the workspace")

// maxGitFile bounds what GitFileTarget accepts, as git's own reader does
// with its "too large to be a .git file" check.
const maxGitFile = 1 << 20

// GitFileTarget parses the content of a .git file ("gitdir: PATH") found
// at dir (workspace-relative, "." for the root) of the workspace at root
// (absolute), and returns the workspace-relative, cleaned git directory it
// names. A path leaving the workspace is ErrOutside; malformed content
// wraps ErrGitFile. It does not resolve symlinks: the caller opens the
// result without following them.
func GitFileTarget(root, dir string, data []byte) (string, error) {
	if len(data) > maxGitFile {
		return "", fmt.Errorf("%w: %d bytes", ErrGitFile, len(data))
	}
	s, ok := strings.CutPrefix(string(data), "gitdir: ")
	if !ok {
		return "", fmt.Errorf("%w: no \"gitdir: \" prefix", ErrGitFile)
	}
	s = strings.TrimRight(s, "\r\n")
	if s == "" || strings.ContainsAny(s, "\x00\n") {
		return "", fmt.Errorf("%w: bad path %q", ErrGitFile, s)
	}
	var abs string
	if path.IsAbs(s) {
		abs = path.Clean(s)
	} else {
		abs = path.Join(root, dir, s)
	}
	root = path.Clean(root)
	if abs == root {
		return ".", nil
	}
	if !within(abs, root) {
		return "", fmt.Errorf("%w: %s", ErrOutside, abs)
	}
	return strings.TrimPrefix(abs, strings.TrimSuffix(root, "/")+"/"), nil
}

// HeadKind is what a directory's HEAD entry makes of the directory.
type HeadKind uint8

const (
	// HeadNone: no HEAD, or one git never takes for a repository's (a
	// directory, a symlink out of refs/).
	HeadNone HeadKind = iota
	// HeadSeed: a regular file that is not a valid HEAD yet; rewritten, it
	// would make its directory a git directory.
	HeadSeed
	// HeadValid: git's validate_headref accepts it (a symlink into refs/,
	// "ref: ..." or an object name): its directory is a git directory.
	HeadValid
)

// ClassifyHead says what a HEAD entry is: for a symlink (link) content is
// its target, else the regular file's content (at most 1 MiB is enough).
func ClassifyHead(link bool, content []byte) HeadKind {
	if link {
		if strings.HasPrefix(string(content), "refs/") {
			return HeadValid
		}
		return HeadNone
	}
	s := strings.TrimRight(string(content), "\n")
	if strings.HasPrefix(s, "ref:") || isObjectName(s) {
		return HeadValid
	}
	return HeadSeed
}

func isObjectName(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return false
		}
	}
	return true
}

// GitDirReason returns why rest, a slash-separated path inside the git
// directory dir (workspace-relative, for the message), is on git's control
// surface (GitDir), or "" when it is not.
func GitDirReason(dir, rest string) string {
	rest = path.Clean(rest)
	if rest == "." || strings.HasPrefix(rest, "../") || rest == ".." {
		return ""
	}
	return gitReason(split(path.Clean(dir)), split(rest))
}

// HomeTreatment is how a sandbox freezes an existing entry of a home
// workspace under the home rule (Set.Home): HomeTreat.
type HomeTreatment uint8

const (
	// HomeFree: the entry may be written (a name the rule does not
	// cover, a hole the caller handles itself).
	HomeFree HomeTreatment = iota
	// HomeFreeze: the entry is protected as a whole.
	HomeFreeze
	// HomeDescend: the entry is not protected but holds an entry that is
	// (~/go for ~/go/bin): its own entries are treated one by one.
	HomeDescend
)

// HomeTreat says how the sandbox treats rel, an existing entry of a home
// workspace (slash-separated, relative to it), under the home rule; holes
// are workspace-relative paths the caller handles itself (tether's hidden
// state and config).
func HomeTreat(rel string, holes []string) HomeTreatment {
	parts := split(path.Clean(rel))
	below := func(p string) bool { // p lies strictly under rel
		pp := split(p)
		return len(pp) > len(parts) && hasPrefix(pp, rel)
	}
	for _, h := range holes {
		if hasPrefix(parts, path.Clean(h)) {
			return HomeFree
		}
	}
	if homeReason(parts) == "" {
		for _, r := range homeRoots {
			if below(r.path) {
				return HomeDescend
			}
		}
		return HomeFree
	}
	// Nothing under a protected entry stays writable: the list's own
	// entries and the holes get their mounts on top of its freeze.
	return HomeFreeze
}
