package mandate

import "sync"

// cliSpec says how subcommand words of one known program are recognised.
type cliSpec struct {
	// deeper lists first-level subcommands that take one more subcommand
	// word ("git remote add", "npm run build").
	deeper map[string]bool
	// valueFlags are options that take their value as the next argument and
	// may come before the subcommand ("gh -R OWNER/REPO pr list"), for a
	// program the command grammar does not know; where it knows the
	// program, the grammar says which words are values (TestCLITableLeavesValuesToTheGrammar).
	valueFlags []string
	// allTargets makes every positional word a subcommand word (make
	// targets are actions, not operands). Words holding "=" (make variable
	// assignments) are skipped.
	allTargets bool
}

// maxWords is how many subcommand words the spec can take at most (while
// looking for them, value flags consume their value).
func (s *cliSpec) maxWords() int {
	if s.allTargets {
		return 1 << 30
	}
	return 2
}

// subWords picks the subcommand words out of the positional words.
func (s *cliSpec) subWords(positional []string, afterDashes bool) []string {
	if s.allTargets {
		var out []string
		for _, w := range positional {
			if containsByte(w, '=') || isNumber(w) { // "VAR=x", the value of "-j 4"
				continue
			}
			out = append(out, w)
		}
		_ = afterDashes
		return out
	}
	if len(positional) == 0 {
		return nil
	}
	n := 1
	if s.deeper[positional[0]] && len(positional) > 1 {
		n = 2
	}
	return append([]string(nil), positional[:n]...)
}

func containsByte(s string, b byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == b {
			return true
		}
	}
	return false
}

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// cliTable is the table of known multi-level CLIs. It is built on first
// use, not at init: init work runs in every tether process, including the
// container init that `tether run` re-executes.
var cliTable = sync.OnceValue(func() map[string]*cliSpec {
	dockerSpec := &cliSpec{
		deeper: set("compose", "container", "image", "network", "volume", "system", "buildx",
			"context", "builder", "plugin", "secret", "service", "stack", "swarm", "node", "config",
			"trust", "manifest"),
	}
	return map[string]*cliSpec{
		"git": {
			deeper: set("remote", "stash", "submodule", "worktree", "bisect", "notes", "lfs",
				"sparse-checkout", "reflog", "maintenance"),
		},
		"go":    {deeper: set("mod", "work", "tool")},
		"npm":   {deeper: set("run", "run-script")},
		"pnpm":  {deeper: set("run")},
		"yarn":  {deeper: set("run", "workspace")},
		"npx":   {},
		"bun":   {deeper: set("run", "x")},
		"cargo": {},
		"rustup": {
			deeper: set("toolchain", "target", "component", "override", "self"),
		},
		"pip":            {},
		"pip3":           {},
		"uv":             {deeper: set("pip", "tool", "python")},
		"poetry":         {deeper: set("run", "env", "self")},
		"bundle":         {deeper: set("exec")},
		"apt":            {},
		"apt-get":        {},
		"dnf":            {},
		"yum":            {},
		"brew":           {deeper: set("services")},
		"docker":         dockerSpec,
		"podman":         dockerSpec,
		"docker-compose": {},
		"kubectl": {
			deeper: set("get", "describe", "delete", "create", "rollout", "config", "top", "explain",
				"edit", "label", "annotate", "scale", "expose", "autoscale", "set", "auth", "certificate"),
		},
		"helm": {
			deeper: set("repo", "plugin", "dependency", "get", "show", "registry"),
		},
		"gh": {
			deeper: set("pr", "issue", "repo", "release", "run", "workflow", "gist", "auth", "label",
				"secret", "variable", "codespace", "project", "ssh-key", "gpg-key", "cache", "extension"),
			valueFlags: []string{"-R", "--repo"},
		},
		"terraform": {deeper: set("state", "workspace", "providers")},
		"systemctl": {
			deeper: set("start", "stop", "restart", "reload", "enable", "disable", "mask", "unmask",
				"kill", "status", "is-active", "is-enabled"),
		},
		"make":  {allTargets: true},
		"gmake": {allTargets: true},
	}
})

func isNumber(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
