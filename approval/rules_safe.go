package approval

import (
	"strings"
	"sync"

	"github.com/tether-dev/tether/grammar"
	"github.com/tether-dev/tether/shellparse"
)

// The safe class: commands that are read-only by construction. Strict modes
// auto-approve only these, so the class is small and each member's
// write-capable options are excluded explicitly. A command is safe when its
// program is listed here (spelled bare or from a system bin directory, not
// ./ls), its options pass the program's check, it writes no file through a
// redirection (other than /dev/null and the standard streams), it sets no
// environment variable beyond locale and display ones, no wrapper raises
// its privileges (sudo, doas, su, runuser), and it is not inside a shell's
// script (bash -c 'ls' is allowed, not safe).

// safePrograms maps each safe program to an optional argument check.
var safePrograms = sync.OnceValue(func() map[string]func(args []string) bool {
	return map[string]func(args []string) bool{
		"ls": nil, "cat": nil, "head": nil, "tail": nil, "wc": nil, "grep": nil, "egrep": nil, "fgrep": nil,
		"pwd": nil, "echo": nil, "printf": nil, "whoami": nil, "id": nil, "uname": nil, "which": nil,
		"file": nil, "stat": nil, "du": nil, "df": nil, "basename": nil, "dirname": nil, "realpath": nil,
		"readlink": nil, "cut": nil, "tr": nil, "nl": nil, "od": nil, "hexdump": nil, "md5sum": nil,
		"sha1sum": nil, "sha256sum": nil, "sha512sum": nil, "cksum": nil, "diff": nil, "cmp": nil, "comm": nil,
		"column": nil, "jq": nil, "printenv": nil, "seq": nil, "true": nil, "false": nil, "test": nil, "[": nil,
		"type": nil, "whereis": nil, "uptime": nil, "free": nil, "nproc": nil, "lscpu": nil, "lsblk": nil,
		"ps": nil, "groups": nil, "locale": nil, "tty": nil, "cd": nil, "arch": nil, "zcat": nil,
		"sleep": nil, "cal": nil, "tac": nil, "rev": nil, "fold": nil, "expand": nil, "strings": nil,
		"date":     func(args []string) bool { return !hasShort(args, "s") && !hasLong(args, "--set") },
		"hostname": func(args []string) bool { return len(operands(args)) == 0 },
		"env":      func(args []string) bool { return len(args) == 0 },
		"tree":     func(args []string) bool { return !hasShort(args, "o") },
		"find": func(args []string) bool {
			_, del, writes, exec := findActions(args)
			return !del && !writes && exec == "" && !hasWord(args, "-exec") && !hasWord(args, "-execdir") && !hasWord(args, "-ok") && !hasWord(args, "-okdir")
		},
		"rg": func(args []string) bool {
			_, ok := optValue(args, "--pre", "--hostname-bin")
			return !ok
		},
		"sort": func(args []string) bool {
			return !hasShort(args, "o") && !hasLong(args, "--output", "--compress-program")
		},
		"uniq": func(args []string) bool { return len(operands(args, "-f", "-s", "-w")) <= 1 },
		"xxd":  func(args []string) bool { return !hasShort(args, "r") && len(operands(args)) <= 1 },
		"yq":   func(args []string) bool { return !hasShort(args, "i") && !hasLong(args, "--inplace") },
		"git":  safeGit,
	}
})

// safeGit accepts git's listing and inspection subcommands.
func safeGit(args []string) bool {
	configs, sub, rest := gitSplit(args)
	if len(configs) > 0 {
		return false
	}
	for _, v := range rest {
		if strings.HasPrefix(v, "--output") || v == "--ext-diff" || strings.HasPrefix(v, "--exec") {
			return false
		}
	}
	switch sub {
	case "status", "log", "diff", "show", "rev-parse", "ls-files", "ls-tree", "blame", "describe",
		"shortlog", "cat-file", "rev-list", "merge-base", "name-rev", "for-each-ref", "count-objects",
		"grep", "whatchanged", "version", "show-ref", "ls-remote":
		return true
	case "branch":
		return len(operands(rest, "--sort", "--format", "--contains", "--no-contains", "--merged", "--no-merged", "--points-at")) == 0 &&
			!hasShort(rest, "dDmMcCfu") && !hasLong(rest, "--delete", "--move", "--copy", "--force", "--set-upstream-to", "--unset-upstream", "--edit-description", "--track", "--create-reflog")
	case "tag":
		return len(rest) == 0 || hasShort(rest, "l") || hasLong(rest, "--list")
	case "remote":
		return len(rest) == 0 || (len(rest) == 1 && (rest[0] == "-v" || rest[0] == "--verbose"))
	case "stash":
		return len(rest) > 0 && (rest[0] == "list" || rest[0] == "show")
	case "config":
		return hasLong(rest, "--get", "--get-all", "--get-regexp", "--list") || hasShort(rest, "l")
	case "worktree":
		return len(rest) > 0 && rest[0] == "list"
	}
	return false
}

// safeEnv are environment variables a safe command may set.
var safeEnv = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"LANG": true, "LC_ALL": true, "LC_CTYPE": true, "LC_COLLATE": true, "LC_MESSAGES": true, "LC_NUMERIC": true,
		"LC_TIME": true, "TZ": true, "NO_COLOR": true, "TERM": true, "COLUMNS": true, "LINES": true,
		"CLICOLOR": true, "FORCE_COLOR": true, "GREP_COLORS": true, "LS_COLORS": true,
	}
})

// isSafeCommand reports whether c is in the safe class.
func isSafeCommand(c *shellparse.Command) bool {
	check, ok := safePrograms()[c.Program]
	if !ok {
		return false
	}
	if sp := c.Spelling; strings.Contains(sp, "/") && !trustedBin(sp) {
		return false
	}
	if c.Context.Payload > 0 {
		// A script given to a shell (bash -c 'ls') may carry its own
		// verdict, but the safe class stays what is typed at the prompt.
		return false
	}
	for _, w := range c.Wrappers {
		switch w.Program {
		case "sudo", "doas", "su", "runuser", "chroot", "unshare", "nsenter", "setpriv", "capsh":
			return false
		}
		if wrapperWrites(w) {
			return false // strace -o FILE, time -o FILE: the wrapper writes
		}
	}
	for _, e := range c.Env {
		if !safeEnv()[e.Name] {
			return false
		}
	}
	for _, r := range c.Redirs {
		switch r.Mode {
		case shellparse.RedirWrite, shellparse.RedirAppend, shellparse.RedirReadWrite:
			switch r.Target.Value {
			case "/dev/null", "/dev/stdout", "/dev/stderr":
			default:
				return false
			}
		case shellparse.RedirDup:
			if v := r.Target.Value; v != "-" && !isNumber(v) {
				return false
			}
		case shellparse.RedirRead:
			if strings.HasPrefix(r.Target.Value, "/dev/tcp/") || strings.HasPrefix(r.Target.Value, "/dev/udp/") {
				return false
			}
		}
	}
	return check == nil || check(argv(c))
}

// trustedBin reports whether a path-qualified program lives in a system
// binary directory.
func trustedBin(sp string) bool {
	for _, d := range [...]string{"/bin/", "/usr/bin/", "/usr/local/bin/", "/sbin/", "/usr/sbin/"} {
		if strings.HasPrefix(sp, d) && !strings.Contains(sp[len(d):], "/") {
			return true
		}
	}
	return false
}

// wrapperWrites reports whether a peeled wrapper's own options or operands
// write a file or run a command (strace -o trace.txt, time -o t).
func wrapperWrites(w shellparse.Wrapper) bool {
	if grammar.Lookup(w.Program) == nil {
		return false
	}
	inv := grammar.Parse(w.Program, w.Args)
	for _, o := range inv.Options {
		if o.HasValue && o.ValueEffects.Any(grammar.Write|grammar.Exec|grammar.Program) {
			return true
		}
	}
	for _, op := range inv.Operands {
		if op.Effects.Any(grammar.Write | grammar.Exec) {
			return true
		}
	}
	return false
}
