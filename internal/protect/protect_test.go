package protect

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReason(t *testing.T) {
	t.Parallel()
	protected := []string{
		".git", ".git/config", ".git/config.worktree", ".git/hooks", ".git/hooks/pre-commit",
		".git/commondir", ".git/modules/sub/config", ".git/modules/sub/hooks/post-checkout",
		".git/worktrees/w/config", ".git/info/attributes", ".git/info/exclude",
		".git/objects/info/alternates", ".git/objects/info/http-alternates", ".git/objects/info", ".git/objects",
		"sub/.git", "sub/.git/config", "vendor/x/.git/hooks/post-merge",
		".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshenv", ".zlogin", ".zlogout",
		".kshrc", ".cshrc", ".tcshrc", ".login", ".logout", ".inputrc", "home/u/.bashrc",
		".config/fish/config.fish", ".config/fish/conf.d/x.fish", ".config/fish", ".config",
		".gitconfig", ".config/git/config", ".config/git/attributes", ".envrc", "sub/.envrc", ".tether.yaml",
		".ssh/authorized_keys", ".ssh/config", ".ssh/rc", ".ssh", "/.bashrc", "./.git/config", "a/../.git/hooks",
		"HEAD", "src/HEAD", "src/head", "bare/HEAD", "x/.git/../HEAD",
	}
	for _, p := range protected {
		assert.NotEmpty(t, Reason(p), p)
	}
	free := []string{
		".", "", "src/main.go", ".git/HEAD", ".git/index", ".git/index.lock", ".git/refs/heads/main",
		".git/objects/ab/cdef", ".git/objects/pack/p.pack", ".git/logs/HEAD", ".git/COMMIT_EDITMSG",
		".git/ORIG_HEAD", ".git/packed-refs", ".git/refs/stash", ".gitignore", ".gitattributes", "git/config",
		"x.git/config", ".github/workflows/ci.yml", ".ssh/id_ed25519.pub", "bashrc",
		"docs/.profile.md", ".git-orig", ".gitmodules", "sub/.git/HEAD", ".git/refs/remotes/origin/HEAD", "src/HEADER", "HEAD.md",
	}
	for _, p := range free {
		assert.Empty(t, Reason(p), p)
	}
	assert.Contains(t, Reason(".git/hooks/pre-commit"), "git runs the programs")
	assert.Contains(t, Reason("sub/.git/config"), "sub/.git/config is protected")
}

// TestReasonHomeTools: what a person's PATH, Python, editors, pager,
// desktop, systemd, package managers and gpg later run or trust from a
// home directory is protected (each entry, and for a directory what lies
// in it), and the names next to them are not.
func TestReasonHomeTools(t *testing.T) {
	t.Parallel()
	protected := map[string]string{
		".bash_aliases": "Debian's .bashrc runs it",
		".local/bin/ls": "on PATH",
		".local/bin":    "on PATH",
		".local":        "it holds .local/bin",
		".local/lib/python3.11/site-packages/evil.pth":             "Python imports",
		".local/lib/python3.13/site-packages/usercustomize.py":     "Python imports",
		".local/lib/python3.11/site-packages/requests/__init__.py": "Python imports",
		".local/share/systemd/user/x.service":                      "systemd --user",
		".local/share/applications/firefox.desktop":                ".desktop",
		".local/share": "it holds .local/share/systemd",
		".config/systemd/user/default.target.wants/x.service": "systemd --user",
		".config/autostart/x.desktop":                         "at login",
		".config/environment.d/10-path.conf":                  "environment",
		".pam_environment":                                    "pam_env",
		".xprofile":                                           "graphical login",
		".xinitrc":                                            "startx",
		".xsession":                                           "graphical login",
		".xsessionrc":                                         "graphical login",
		".vimrc":                                              "vim runs it",
		".gvimrc":                                             "gvim",
		".exrc":                                               "vi runs it",
		".vim/plugin/x.vim":                                   "plugins",
		".config/nvim/init.lua":                               "neovim",
		".emacs":                                              "emacs runs it",
		".emacs.el":                                           "emacs runs it",
		".emacs.d/init.el":                                    "init.el",
		".emacs.d/early-init.el":                              "init.el",
		".emacs.d/elpa/x/x-autoloads.el":                      "autoloads",
		".nanorc":                                             "nano",
		".config/nano/nanorc":                                 "nano",
		".lesskey":                                            "LESSOPEN",
		".less":                                               "LESSOPEN",
		".config/lesskey":                                     "LESSOPEN",
		".config/less":                                        "LESSOPEN",
		".cargo/config":                                       "cargo reads it",
		".cargo/config.toml":                                  "cargo reads it",
		".cargo/env":                                          "rustup",
		".cargo/bin/cargo":                                    "PATH",
		".npmrc":                                              "npm reads it",
		".config/pip/pip.conf":                                "pip",
		".pip/pip.conf":                                       "pip",
		".gnupg/gpg-agent.conf":                               "pinentry-program",
		".gnupg":                                              "gpg",
		"home/u/.vimrc":                                       "vim runs it",
		".CARGO/CONFIG.TOML":                                  "cargo reads it",
		".config/tether/config.yaml":                          "the home owner's tether",
		".local/state/tether/allowlist/default.json": "the home owner's tether",
		".local/state": "it holds .local/state/tether",
	}
	for p, why := range protected {
		assert.Contains(t, Reason(p), why, p)
	}
	free := []string{
		".local/share/tether/roots/x", ".local/state/x", ".local/binx", ".local/bin.md", ".local/libexec/x",
		".cargo/registry/cache/x.crate", ".cargo/git/db/x", ".cargo/config.toml.orig", ".cargo/credentials.toml",
		".vimrc.bak", ".vim.old/x", ".viminfo", ".emacs.d.bak/init.el", ".emacs~", ".npmrc.example",
		".config/pipx/x", ".config/systemd-x", ".config/autostart-old/x", ".config/nvim-backup/init.lua",
		".gnupg-old/x", ".xsession-errors", ".lesshst", ".nanorc.d", "lib/python3/site-packages/x.pth",
		"venv/lib/python3.11/site-packages/x.pth", "src/.local.go",
	}
	for _, p := range free {
		assert.Empty(t, Reason(p), p)
	}
}

// TestReasonHomeBinIsALimit: ~/bin, which Debian's .profile puts on PATH
// when it exists, is not on the list (docs/workspace.md, "Limits"): an
// entry matches at any depth and in every workspace, and bin/ is where
// projects keep their scripts and build output, and where terminal.mounts
// point (/opt/x/bin). The home rule protects ~/bin at the root of a home
// workspace only (Set.Home, TestReasonHomeInverse).
func TestReasonHomeBinIsALimit(t *testing.T) {
	t.Parallel()
	for _, p := range []string{"bin", "bin/ls", "sub/bin/app", "opt/tools/bin"} {
		assert.Empty(t, Reason(p), p)
	}
	for _, e := range Workspace() {
		assert.NotEqual(t, "bin", e.Path)
	}
}

func TestSetReason(t *testing.T) {
	t.Parallel()
	s := Set{Root: "/home/u", GitDirs: []string{".repo/gd"}, Extra: []string{"/home/u/.local/state/tether", "/home/u/.config/tether/config.yaml", ""}}
	for _, p := range []string{".repo/gd/config", ".repo/gd/hooks/pre-commit", ".repo/gd/commondir", ".repo/gd", ".repo",
		".local/state/tether/tether.db", ".local/state", ".config/tether/config.yaml", ".config/tether", ".bashrc"} {
		assert.NotEmpty(t, s.Reason(p), p)
	}
	for _, p := range []string{".repo/gd/HEAD", ".repo/gd/logs/HEAD", ".repo/gd/objects/ab/cd", ".repo/other", "src/x.go", ".local/share/x"} {
		assert.Empty(t, s.Reason(p), p)
	}
	assert.NotEmpty(t, Set{Root: "/home/u/proj", Extra: []string{"/home/u/proj/.cfg"}}.Reason("."), "a root holding tether's state")
	assert.NotEmpty(t, Set{Root: "/home/u/proj", Extra: []string{"/home/u"}}.Reason("src"), "a workspace inside tether's state")
}

func TestListsWellFormed(t *testing.T) {
	t.Parallel()
	for _, e := range Workspace() {
		assert.NotEmpty(t, e.Why, e.Path)
		assert.Contains(t, []Kind{File, Dir, Repo}, e.Kind, e.Path)
		assert.NotContains(t, e.Path, "..", e.Path)
		assert.NotEqual(t, '/', e.Path[0], e.Path)
		assert.NotEmpty(t, Reason(e.Path), e.Path)
	}
	for _, e := range GitDir() {
		assert.NotEmpty(t, e.Why, e.Path)
		assert.Contains(t, []Kind{File, Dir}, e.Kind, e.Path)
		assert.NotContains(t, e.Path, "..", e.Path)
		assert.NotEmpty(t, Reason(".git/"+e.Path), e.Path)
		assert.NotEmpty(t, Set{GitDirs: []string{"gd"}}.Reason("gd/"+e.Path), e.Path)
	}
	w := Workspace()
	w[0].Path = "changed"
	assert.Equal(t, GitDirName, Workspace()[0].Path, "Workspace returns a copy")
}

func TestGitFileTarget(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ dir, data, want string }{
		{".", "gitdir: .repo/gd\n", ".repo/gd"},
		{".", "gitdir: /w/.repo/gd\r\n", ".repo/gd"},
		{"sub", "gitdir: ../.git/modules/sub", ".git/modules/sub"},
		{".", "gitdir: .", "."},
	} {
		got, err := GitFileTarget("/w", c.dir, []byte(c.data))
		require.NoError(t, err, c.data)
		assert.Equal(t, c.want, got, c.data)
	}
	for _, data := range []string{"gitdir: /etc", "gitdir: ../x", "gitdir: /w2/x"} {
		_, err := GitFileTarget("/w", ".", []byte(data))
		assert.True(t, errors.Is(err, ErrOutside), data)
	}
	for _, data := range []string{"", "gitdir:", "gitdir: ", "hello", "gitdir: a\x00b", "gitdir: a\nb"} {
		_, err := GitFileTarget("/w", ".", []byte(data))
		assert.True(t, errors.Is(err, ErrGitFile), data)
	}
}

func TestClassifyHead(t *testing.T) {
	for _, tc := range []struct {
		link    bool
		content string
		want    HeadKind
	}{
		{false, "ref: refs/heads/main\n", HeadValid},
		{false, "ref:refs/heads/x", HeadValid},
		{false, strings.Repeat("a", 40) + "\n", HeadValid},
		{false, strings.Repeat("0", 64), HeadValid},
		{false, strings.Repeat("A", 40), HeadSeed},
		{false, "", HeadSeed},
		{false, "hello\n", HeadSeed},
		{true, "refs/heads/main", HeadValid},
		{true, "../elsewhere", HeadNone},
	} {
		assert.Equal(t, tc.want, ClassifyHead(tc.link, []byte(tc.content)), "%v %q", tc.link, tc.content)
	}
}

func TestGitDirReason(t *testing.T) {
	for rest, refused := range map[string]bool{
		"config": true, "config.worktree": true, "hooks": true, "hooks/a/b": true, "commondir": true,
		"modules/m/config": true, "worktrees/w/HEAD": true, "info/attributes": true, "objects/info/alternates": true,
		"objects/info": true, "objects": true, "objects/ab/cdef": false, "refs/heads/x": false, "HEAD": false,
		"index": false, "description": false, "logs/HEAD": false, "..": false, "../config": false,
	} {
		why := GitDirReason("a/bare.git", rest)
		if refused {
			assert.Contains(t, why, "a/bare.git/", rest)
		} else {
			assert.Empty(t, why, rest)
		}
	}
}

func TestReasonNotHome(t *testing.T) {
	s := Set{NotHome: true}
	for _, rel := range []string{".zlogin", "sub/.bashrc", ".config/git/config", ".ssh"} {
		assert.Empty(t, s.Reason(rel), rel)
		assert.NotEmpty(t, Reason(rel), rel)
	}
	for _, rel := range []string{".envrc", ".tether.yaml", ".git/config", "sub/.git/hooks/pre-commit", "x/HEAD"} {
		assert.NotEmpty(t, s.Reason(rel), rel)
	}
}

// TestReasonHomeInverse: in a home directory every dot-entry at the root
// is protected, and ~/bin and ~/go/bin, whether the list names the program
// or not: the entries rt14's F1 planted and the host then ran (tmux, gdb,
// sqlite, sensible-editor, xdg-user-dir, kubectl, docker's cli-plugins,
// ~/go/bin and pyenv's shims on PATH, rustup's toolchains) and the rest of
// its list. The caches builds write stay writable, and outside a home
// (Set.Home false) or below the root the rule does not apply.
func TestReasonHomeInverse(t *testing.T) {
	t.Parallel()
	home := Set{Root: "/home/u", Home: true}
	planted := []string{
		".selected_editor", ".tmux.conf", ".config/tmux/tmux.conf", ".sqliterc", ".gdbinit", ".config/gdb/gdbinit",
		".config/user-dirs.dirs", ".kube/config", ".docker/cli-plugins/docker-rt14", "go/bin/ls", ".pyenv/shims/ls",
		".rustup/toolchains/stable-x86_64-unknown-linux-gnu/bin/cargo", ".bash_completion",
		".local/share/bash-completion/completions/git", ".config/direnv/direnv.toml", ".config/direnv/direnvrc",
		".local/share/direnv/allow/x", ".aws/config", ".ssh/known_hosts", ".ssh/config.d/evil", ".ssh/cm-sock",
		".config/emacs/init.el", ".forward", ".yarnrc", ".bunfig.toml", ".gradle/init.d/evil.gradle",
		".ipython/profile_default/startup/00.py", ".config/Code/User/settings.json", ".terraformrc", ".mailcap",
		".psqlrc", ".Rprofile", ".irbrc", ".git-credentials", "bin/ls", "bin", "go", ".cargo", ".m2/settings.xml",
		".gradle/gradle.properties", ".TMUX.CONF",
		// The caches the host runs from (session-11 red team).
		".cache", ".cache/jedi/x.pkl", ".cache/pre-commit/repo/hook", ".cache/pip/wheels/x.whl", ".cache/go-build/00/x",
		".npm/_cacache/index-v5/x", ".npm/_npx/1/node_modules/.bin/x", ".cargo/registry/src/x/build.rs", ".cargo/git/db/x",
		".m2/repository/org/x.jar", ".gradle/caches/modules-2/x", ".gradle/wrapper/dists/x", ".yarn/berry/cache/x.zip",
		"go/pkg", "go/pkg/mod/example.com/x@v1/x.go", "go/pkg/mod/golang.org/toolchain@v0.0.1-go1.99.0.linux-amd64/bin/go",
		"go/pkg/mod/cache/download/golang.org/toolchain/@v/v0.0.1-go1.99.0.linux-amd64.ziphash",
	}
	for _, p := range planted {
		assert.NotEmpty(t, home.Reason(p), "%s in a home", p)
	}
	for _, p := range []string{".tmux.conf", ".sqliterc", ".kube/config", "go/bin/ls", ".pyenv/shims/ls", "bin/ls"} {
		assert.Empty(t, Set{Root: "/srv/proj"}.Reason(p), "%s outside a home: a project's own file", p)
	}
	writable := []string{
		"go/src/example.com/x/x.go", "go/x", "src/.tmux.conf", "proj/.config/x", "proj/bin/tool", "proj/go/pkg/mod/x", "notes.txt",
		".git/objects/ab/cdef", ".git/refs/heads/main", // a dotfiles repository: git's rules decide
	}
	for _, p := range writable {
		assert.Empty(t, home.Reason(p), "%s in a home", p)
	}
	assert.Contains(t, home.Reason(".tmux.conf"), "begins with \".\"")
	assert.Contains(t, home.Reason("go/bin/x"), "on PATH")
	assert.Contains(t, home.Reason("go/pkg/mod/x"), "toolchains")
}
