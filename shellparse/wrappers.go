package shellparse

import (
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// wrapSpec describes the option syntax of a wrapper program: a program that
// runs another program given on its command line. Options are getopt style
// and stop at the first operand.
type wrapSpec struct {
	// shortArg lists the short options that take an argument, either
	// attached ("-n5") or as the next word ("-n 5").
	shortArg string
	// shortOpt lists short options whose argument is optional and can only
	// be attached ("xargs -i{}").
	shortOpt string
	// longArg lists the long options (without "--") that take an argument
	// when it is not attached with "=".
	longArg []string
	// operands is how many operands precede the command (timeout's
	// DURATION, chrt's PRIORITY, taskset's MASK, flock's FILE).
	operands int
	// stop lists short options that mean no command is run: a lookup, a
	// listing or an attach to an existing process ("command -v", "sudo -l",
	// "taskset -p").
	stop string
	// longStop lists the long options with the same meaning.
	longStop []string
	// longFlags lists the other long options, so that an abbreviation
	// ("--s" for "--split-string") resolves as getopt_long resolves it.
	longFlags []string
	// assigns reports whether NAME=VALUE words before the command are
	// environment assignments (env, sudo).
	assigns bool
	// extra reports whether the command receives run-time arguments.
	extra bool
}

// wrappers is the table of wrapper programs peeled by the generic option
// scanner. Wrappers with payloads or subcommands (env -S, su -c, watch,
// flock -c, find -exec, busybox, parallel, shells) are handled in peel.
var wrappers = sync.OnceValue(func() map[string]*wrapSpec {
	return map[string]*wrapSpec{
		"env": {shortArg: "uCSPa", longArg: []string{"unset", "chdir", "split-string", "argv0"},
			longFlags: []string{"ignore-environment", "null", "block-signal", "default-signal", "ignore-signal",
				"list-signal-handling", "debug", "help", "version"},
			assigns: true},
		"sudo": {shortArg: "ughpCDrtUTR", longArg: []string{"user", "group", "host", "prompt",
			"close-from", "chdir", "role", "type", "other-user", "command-timeout", "chroot"},
			stop: "elvKV", longStop: []string{"edit", "list", "validate", "remove-timestamp", "version", "help"},
			longFlags: []string{"askpass", "background", "bell", "preserve-env", "set-home", "login",
				"reset-timestamp", "non-interactive", "preserve-groups", "stdin", "shell"},
			assigns: true},
		"doas":    {shortArg: "uC", stop: "CL"},
		"pkexec":  {longArg: []string{"user"}},
		"nice":    {shortArg: "n", longArg: []string{"adjustment"}},
		"nohup":   {},
		"setsid":  {},
		"timeout": {shortArg: "sk", longArg: []string{"signal", "kill-after"}, longFlags: []string{"foreground", "preserve-status", "verbose"}, operands: 1},
		"time":    {shortArg: "fo", longArg: []string{"format", "output"}},
		"stdbuf":  {shortArg: "ioe", longArg: []string{"input", "output", "error"}},
		"ionice":  {shortArg: "cnpPu", longArg: []string{"class", "classdata", "pid", "pgid", "uid"}, stop: "pPu", longStop: []string{"pid", "pgid", "uid"}},
		"chrt":    {shortArg: "TPD", longArg: []string{"sched-runtime", "sched-period", "sched-deadline"}, operands: 1, stop: "pm", longStop: []string{"pid", "max"}},
		"taskset": {operands: 1, stop: "p", longStop: []string{"pid"}},
		"exec":    {shortArg: "a"},
		"command": {stop: "vV"},
		"builtin": {},
		"xargs": {shortArg: "ILnPsdEa", shortOpt: "ile", longArg: []string{"arg-file", "delimiter", "max-args", "max-procs", "max-chars", "process-slot-var"},
			longFlags: []string{"null", "no-run-if-empty", "verbose", "interactive", "open-tty", "exit", "show-limits", "replace", "max-lines", "eof"}, extra: true},
		"nsenter":   {shortArg: "tSG", longArg: []string{"target", "setuid", "setgid"}},
		"unshare":   {shortArg: "SGRw", longArg: []string{"setuid", "setgid", "root", "wd", "propagation", "setgroups"}},
		"chroot":    {longArg: []string{"userspec", "groups"}, operands: 1},
		"strace":    {shortArg: "abeEIoOpPsSuUX", stop: "p"},
		"ltrace":    {shortArg: "aAeEFlnopsSuwxX", stop: "p"},
		"gosu":      {operands: 1},
		"su-exec":   {operands: 1},
		"setpriv":   {longArg: []string{"reuid", "regid", "ruid", "rgid", "euid", "egid", "groups", "inh-caps", "ambient-caps", "bounding-set", "securebits", "selinux-label", "apparmor-profile", "landlock-access", "landlock-rule", "pdeathsig"}},
		"numactl":   {shortArg: "CNmpiP", longArg: []string{"physcpubind", "cpunodebind", "membind", "preferred", "interleave"}},
		"cgexec":    {shortArg: "g"},
		"faketime":  {shortArg: "f", operands: 1},
		"fakeroot":  {shortArg: "lsi", longArg: []string{"lib", "faked"}},
		"eatmydata": {}, "catchsegv": {}, "unbuffer": {}, "dbus-run-session": {},
		"torsocks":    {shortArg: "uapP"},
		"tsocks":      {},
		"proxychains": {shortArg: "f"}, "proxychains4": {shortArg: "f"},
		"screen":          {shortArg: "SctehpT", stop: "rRxXlQv", longStop: []string{"list", "ls"}},
		"firejail":        {},
		"caffeinate":      {shortArg: "tw"},
		"systemd-run":     {shortArg: "upEHM", longArg: []string{"unit", "property", "setenv", "host", "machine", "description", "slice", "uid", "gid", "working-directory", "on-calendar", "on-active", "timer-property", "path-property", "socket-property"}},
		"systemd-inhibit": {longArg: []string{"what", "who", "why", "mode"}},
	}
})

// opt is one option seen by scanOpts.
type opt struct {
	name   string // "u" for -u, "user" for --user
	long   bool
	arg    string
	argIdx int  // word holding the argument, -1 if none
	inline bool // the argument is attached to the option word ("-n5", "--x=y")
}

// scanOpts scans the getopt-style options following the wrapper at word i
// and returns the index of the first operand. fn, if non-nil, sees each
// option. A non-literal word stops the scan: it is then taken as the
// operand, which makes an unknowable command opaque rather than guessed.
func scanOpts(ws []Word, i int, sp *wrapSpec, fn func(opt)) int {
	j := i + 1
	for j < len(ws) {
		v := ws[j].Value
		if !ws[j].Literal || len(v) < 2 || v[0] != '-' {
			if v == "-" && fn != nil && ws[j].Literal { // "env -", "su -"
				fn(opt{name: "-", argIdx: -1})
				j++
				continue
			}
			return j
		}
		j++
		if v == "--" {
			return j
		}
		if v[1] == '-' {
			o := opt{name: v[2:], long: true, argIdx: -1}
			if eq := strings.IndexByte(o.name, '='); eq >= 0 {
				o.name, o.arg = o.name[:eq], o.name[eq+1:]
				o.argIdx, o.inline = j-1, true
				o.name = expandLong(o.name, sp.longArg, sp.longFlags, sp.longStop)
			} else if o.name = expandLong(o.name, sp.longArg, sp.longFlags, sp.longStop); contains(sp.longArg, o.name) && j < len(ws) {
				o.arg, o.argIdx = ws[j].Value, j
				j++
			}
			if fn != nil {
				fn(o)
			}
			continue
		}
		for k := 1; k < len(v); k++ {
			o := opt{name: v[k : k+1], argIdx: -1}
			if strings.IndexByte(sp.shortOpt, v[k]) >= 0 {
				o.arg, o.argIdx, o.inline = v[k+1:], j-1, true
				if fn != nil {
					fn(o)
				}
				break
			}
			if strings.IndexByte(sp.shortArg, v[k]) >= 0 {
				if k+1 < len(v) {
					o.arg, o.argIdx, o.inline = v[k+1:], j-1, true
				} else if j < len(ws) {
					o.arg, o.argIdx = ws[j].Value, j
					j++
				}
				if fn != nil {
					fn(o)
				}
				break
			}
			if fn != nil {
				fn(o)
			}
		}
	}
	return j
}

// expandLong resolves an abbreviated long option as getopt_long does: an
// exact match, else the only option it is a prefix of; otherwise it is
// returned unchanged.
func expandLong(name string, lists ...[]string) string {
	found := ""
	for _, l := range lists {
		for _, x := range l {
			if x == name {
				return x
			}
			if strings.HasPrefix(x, name) {
				if found != "" && found != x {
					return name // ambiguous
				}
				found = x
			}
		}
	}
	if found == "" || name == "" {
		return name
	}
	return found
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// stops reports whether o is one of sp's no-command options.
func (sp *wrapSpec) stops(o opt) bool {
	if o.long {
		return contains(sp.longStop, o.name)
	}
	return strings.Contains(sp.stop, o.name)
}

// splitAssign splits a NAME=VALUE word given to env or sudo.
func splitAssign(wd Word) (Assign, bool) {
	eq := strings.IndexByte(wd.Value, '=')
	if eq <= 0 || !syntax.ValidName(wd.Value[:eq]) {
		return Assign{}, false
	}
	raw := wd.Raw
	if k := strings.IndexByte(raw, '='); k >= 0 {
		raw = raw[k+1:]
	}
	return Assign{Name: wd.Value[:eq], Value: Word{Value: wd.Value[eq+1:], Literal: wd.Literal, Raw: raw, Glob: wd.Glob}}, true
}

// peel handles a wrapper program at word i. It returns the index of the
// wrapped command and true when name is a wrapper that runs one; false when
// word i is the program itself; a negative index when peel recorded
// everything itself (payloads, find -exec).
func (w *walker) peel(name string, cs *cmdState, i int, c ctx) (int, bool) {
	switch name {
	case "find":
		w.find(cs, i, c)
		return -1, false
	case "busybox", "toybox":
		if i+1 < len(cs.words) && cs.words[i+1].Literal && !strings.HasPrefix(cs.words[i+1].Value, "-") {
			cs.pushWrapper(name, i, i+1)
			return i + 1, true
		}
		return 0, false
	case "su", "runuser":
		return w.peelSu(name, cs, i, c)
	case "watch":
		return w.peelWatch(cs, i, c)
	case "flock":
		return w.peelFlock(cs, i, c)
	case "parallel":
		return w.peelParallel(cs, i, c)
	case "trap":
		return w.peelTrap(cs, i, c)
	case "tmux":
		return w.peelTmux(cs, i, c)
	case "script", "nix-shell":
		return w.peelRunOpt(name, cs, i, c)
	case "sg":
		// sg GROUP [-c] COMMAND: the command is a shell string.
		if i+2 < len(cs.words) {
			j := i + 2
			if cs.words[j].Value == "-c" && j+1 < len(cs.words) {
				j++
			}
			cs.pushWrapper(name, i, j)
			w.shellString(name, cs, j, len(cs.words), c)
			return -1, false
		}
		return 0, false
	}
	sp := wrappers()[name]
	if sp == nil {
		return 0, false
	}
	stopped, shellMode, replace, null := false, false, "", false
	var split *opt
	var envFlags []string
	next := scanOpts(cs.words, i, sp, func(o opt) {
		if sp.stops(o) {
			stopped = true
		}
		if name == "xargs" {
			switch o.name {
			case "I", "i", "replace":
				replace = o.arg
				if replace == "" && o.name != "I" {
					replace = "{}"
				}
			}
		}
		if (name == "sudo" || name == "doas") && (o.name == "s" || o.name == "i" || o.name == "shell" || o.name == "login") {
			shellMode = true
		}
		if name == "env" {
			switch {
			case o.name == "i" || o.name == "-" || o.name == "ignore-environment":
				envFlags = append(envFlags, "-i")
			case o.name == "u" || o.name == "unset":
				envFlags = append(envFlags, "-u "+o.arg)
			case o.name == "S" || o.name == "split-string":
				split = &o
			case o.name == "0" || o.name == "null":
				null = true
			}
		}
	})
	if stopped {
		return 0, false
	}
	if null && (split != nil || next < len(cs.words)) {
		// GNU env refuses --null (-0) together with a command and runs
		// nothing: env itself is the program.
		return 0, false
	}
	if next+sp.operands > len(cs.words) {
		// Not enough operands: the wrapper runs nothing (or fails).
		return 0, false
	}
	next += sp.operands
	var env []Assign
	if sp.assigns {
		for next < len(cs.words) {
			a, ok := splitAssign(cs.words[next])
			if !ok {
				break
			}
			env = append(env, a)
			next++
		}
	}
	cs.pushWrapper(name, i, next)
	if len(env) > 0 {
		cs.env = append(cs.env[:len(cs.env):len(cs.env)], env...)
	}
	if len(envFlags) > 0 {
		cs.envFlags = append(cs.envFlags[:len(cs.envFlags):len(cs.envFlags)], envFlags...)
	}
	if sp.extra {
		cs.extra = true
	}
	if replace != "" {
		cs.replace = replace
	}
	if shellMode && next < len(cs.words) {
		// sudo -s/-i CMD…: the user's shell runs the words with -c.
		w.shellString(name, cs, next, len(cs.words), c)
		return -1, false
	}
	if split != nil {
		// env -S splits its string into arguments that precede the
		// remaining words: parse it as shell words, which covers quoting.
		if split.argIdx < 0 {
			return 0, false // env -S without a string fails
		}
		args, ok := envSplit(split.arg)
		if !ok || !cs.words[split.argIdx].Literal {
			w.addOpaque(OpaquePayload, "env", w.stmtText(cs.stmt), w.stmtSpan(cs.stmt))
			return -1, false
		}
		// The split arguments take the place of the -S option in env's own
		// argument list, where options and assignments are still read: run
		// them through env again.
		var b strings.Builder
		b.WriteString("env")
		for _, a := range args {
			b.WriteByte(' ')
			b.WriteString(shellQuote(a))
		}
		for k := split.argIdx + 1; k < len(cs.words); k++ {
			b.WriteByte(' ')
			b.WriteString(cs.words[k].Raw)
		}
		w.payload("env", b.String(), cs.nodes[split.argIdx], cs.nodes[len(cs.nodes)-1], cs, c)
		return -1, false
	}
	return next, true
}

// Long options of su and runuser (util-linux), for abbreviations.
var (
	suLongArg   = []string{"command", "session-command", "group", "supp-group", "shell", "whitelist-environment", "user"}
	suLongFlags = []string{"login", "preserve-environment", "pty", "fast", "help", "version"}
)

// peelSu handles su and runuser. Their own options stop at the first
// operand (getopt "+"); "-c CMD" among them is a shell string. After the
// user name, the remaining words are handed to the user's shell, which
// reads "-c CMD" the same way. runuser's "-u USER CMD…" runs a command
// directly. Without a command they start an interactive shell and stay the
// program.
func (w *walker) peelSu(name string, cs *cmdState, i int, c ctx) (int, bool) {
	const argOpts = "cgGswu"
	cmdIdx, cmdArg, userMode := -1, "", false
	n := len(cs.words)
	j := i + 1
	for j < n {
		wd := cs.words[j]
		v := wd.Value
		if !wd.Literal || len(v) < 2 || v[0] != '-' {
			if wd.Literal && v == "-" { // "su -": a login shell
				j++
				continue
			}
			break
		}
		j++
		if v == "--" {
			break
		}
		if v[1] == '-' {
			on, arg, argIdx := v[2:], "", j-1
			if eq := strings.IndexByte(on, '='); eq >= 0 {
				on, arg = expandLong(on[:eq], suLongArg, suLongFlags), on[eq+1:]
			} else if on = expandLong(on, suLongArg, suLongFlags); contains(suLongArg, on) && j < n {
				arg, argIdx = cs.words[j].Value, j
				j++
			}
			switch on {
			case "command", "session-command":
				cmdIdx, cmdArg = argIdx, arg
			case "user":
				userMode = name == "runuser"
			}
			continue
		}
		for k := 1; k < len(v); k++ {
			if strings.IndexByte(argOpts, v[k]) < 0 {
				continue
			}
			arg, argIdx := v[k+1:], j-1
			if arg == "" && j < n {
				arg, argIdx = cs.words[j].Value, j
				j++
			}
			switch v[k] {
			case 'c':
				cmdIdx, cmdArg = argIdx, arg
			case 'u':
				userMode = name == "runuser"
			}
			break
		}
	}
	if userMode {
		if j >= n {
			return 0, false
		}
		cs.pushWrapper(name, i, j)
		return j, true
	}
	if cmdIdx < 0 && j+1 < n {
		// su USER -c CMD: the words after the user go to the shell.
		k, cmdMode, _ := scanShellOpts(cs.words, j+1)
		if cmdMode && k < n {
			cmdIdx, cmdArg = k, cs.words[k].Value
		}
	}
	if cmdIdx < 0 {
		return 0, false // interactive shell: su is the program
	}
	cs.pushWrapper(name, i, cmdIdx)
	if !cs.words[cmdIdx].Literal {
		w.addOpaque(OpaquePayload, name, w.stmtText(cs.stmt), w.stmtSpan(cs.stmt))
		return -1, false
	}
	w.payload(name, cmdArg, cs.nodes[cmdIdx], cs.nodes[cmdIdx], cs, c)
	return -1, false
}

// peelTrap handles trap ACTION SIGNAL…: the action is a shell string run
// later, parsed as a payload with trap as its wrapper.
func (w *walker) peelTrap(cs *cmdState, i int, c ctx) (int, bool) {
	j := i + 1
	for j < len(cs.words) && cs.words[j].Literal && strings.HasPrefix(cs.words[j].Value, "-") && cs.words[j].Value != "-" {
		if cs.words[j].Value == "--" {
			j++
			break
		}
		return 0, false // trap -l, trap -p: listings
	}
	if j+1 >= len(cs.words) || (cs.words[j].Literal && (cs.words[j].Value == "-" || cs.words[j].Value == "")) {
		return 0, false // a reset, or trap SIGNAL alone
	}
	cs.pushWrapper("trap", i, j)
	w.shellString("trap", cs, j, j+1, c)
	return -1, false
}

// tmuxShellCommands are the tmux commands whose trailing arguments are a
// shell command, with the options that take a value.
var tmuxShellCommands = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"new-session": "cefnstxyF", "new": "cefnstxyF",
		"new-window": "censtF", "neww": "censtF",
		"split-window": "celtF", "splitw": "celtF",
		"respawn-pane": "cet", "respawnp": "cet",
		"respawn-window": "cet", "respawnw": "cet",
		"run-shell": "dt", "run": "dt",
		"display-popup": "bcdehSstTwxy", "popup": "bcdehSstTwxy",
	}
})

// peelTmux handles tmux commands that run a shell command (new-session,
// new-window, split-window, respawn-*, run-shell, display-popup): the
// trailing words are a shell string. Other tmux commands stay tmux.
func (w *walker) peelTmux(cs *cmdState, i int, c ctx) (int, bool) {
	cmdIdx, cmdArg := -1, ""
	j := scanOpts(cs.words, i, &wrapSpec{shortArg: "cfLST"}, func(o opt) {
		if o.name == "c" && o.argIdx >= 0 {
			cmdIdx, cmdArg = o.argIdx, o.arg
		}
	})
	if cmdIdx >= 0 {
		// tmux -c CMD runs CMD with the default shell.
		cs.pushWrapper("tmux", i, cmdIdx)
		if !cs.words[cmdIdx].Literal {
			w.addOpaque(OpaquePayload, "tmux", w.stmtText(cs.stmt), w.stmtSpan(cs.stmt))
			return -1, false
		}
		w.payload("tmux", cmdArg, cs.nodes[cmdIdx], cs.nodes[cmdIdx], cs, c)
		return -1, false
	}
	if j >= len(cs.words) {
		return 0, false
	}
	argOpts, ok := tmuxShellCommands()[cs.words[j].Value]
	if !ok {
		return 0, false
	}
	k := scanOpts(cs.words, j, &wrapSpec{shortArg: argOpts}, nil)
	if k >= len(cs.words) {
		return 0, false
	}
	cs.pushWrapper("tmux", i, k)
	w.shellString("tmux", cs, k, len(cs.words), c)
	return -1, false
}

// peelRunOpt handles programs with an option whose value is a shell
// string: script -c CMD, nix-shell --run/--command CMD.
func (w *walker) peelRunOpt(name string, cs *cmdState, i int, c ctx) (int, bool) {
	sp := &wrapSpec{shortArg: "cIOBTE", longArg: []string{"command", "run", "log-in", "log-out", "log-io", "log-timing", "echo", "arg", "argstr", "attr", "packages", "expr", "include", "option"}}
	if name == "nix-shell" {
		sp = &wrapSpec{shortArg: "pAIE", longArg: []string{"command", "run", "arg", "argstr", "attr", "packages", "expr", "include", "option", "keep", "exclude"}}
	}
	idx, arg := -1, ""
	// Both permute their options: scan all words.
	for j := i; j < len(cs.words); {
		next := scanOpts(cs.words, j, sp, func(o opt) {
			switch {
			case name == "script" && (o.name == "c" || o.name == "command"),
				name == "nix-shell" && (o.name == "run" || o.name == "command"):
				idx, arg = o.argIdx, o.arg
			}
		})
		if next <= j {
			break
		}
		j = next
	}
	if idx < 0 {
		return 0, false
	}
	cs.pushWrapper(name, i, idx)
	if !cs.words[idx].Literal {
		w.addOpaque(OpaquePayload, name, w.stmtText(cs.stmt), w.stmtSpan(cs.stmt))
		return -1, false
	}
	w.payload(name, arg, cs.nodes[idx], cs.nodes[idx], cs, c)
	return -1, false
}

// peelWatch handles watch: without -x it joins its arguments into a string
// run by sh -c.
func (w *walker) peelWatch(cs *cmdState, i int, c ctx) (int, bool) {
	sp := &wrapSpec{shortArg: "nq", longArg: []string{"interval", "equexit"}}
	execMode := false
	next := scanOpts(cs.words, i, sp, func(o opt) {
		if o.name == "x" || o.name == "exec" {
			// watch -x runs its arguments directly, not through sh -c.
			execMode = true
		}
	})
	if next >= len(cs.words) {
		return 0, false
	}
	cs.pushWrapper("watch", i, next)
	if execMode {
		return next, true
	}
	w.shellString("watch", cs, next, len(cs.words), c)
	return -1, false
}

// peelFlock handles flock [opts] FILE cmd… and flock [opts] FILE -c CMD.
func (w *walker) peelFlock(cs *cmdState, i int, c ctx) (int, bool) {
	sp := &wrapSpec{shortArg: "wEc", longArg: []string{"timeout", "wait", "conflict-exit-code", "command"}}
	cmdIdx, cmdArg := -1, ""
	opts := func(o opt) {
		if o.name == "c" || o.name == "command" {
			cmdIdx, cmdArg = o.argIdx, o.arg
		}
	}
	next := scanOpts(cs.words, i, sp, opts)
	if next >= len(cs.words) {
		return 0, false // flock FD
	}
	file := next
	if fw := cs.words[file]; !fw.Literal && strings.HasPrefix(fw.Value, "-") {
		// An option that cannot be read: make the command opaque.
		cs.pushWrapper("flock", i, file)
		return file, true
	}
	if cmdIdx < 0 {
		next = scanOpts(cs.words, file, sp, opts)
	}
	if cmdIdx >= 0 {
		cs.pushWrapper("flock", i, cmdIdx)
		if !cs.words[cmdIdx].Literal {
			w.addOpaque(OpaquePayload, "flock", w.stmtText(cs.stmt), w.stmtSpan(cs.stmt))
			return -1, false
		}
		w.payload("flock", cmdArg, cs.nodes[cmdIdx], cs.nodes[cmdIdx], cs, c)
		return -1, false
	}
	if next >= len(cs.words) {
		return 0, false
	}
	cs.pushWrapper("flock", i, next)
	return next, true
}

// peelParallel handles GNU parallel (best effort): the command words come
// before ":::" and are run by a shell with the inputs appended.
func (w *walker) peelParallel(cs *cmdState, i int, c ctx) (int, bool) {
	sp := &wrapSpec{shortArg: "jSIdEaNnLP", longArg: []string{"jobs", "sshlogin", "arg-file", "delimiter", "colsep", "results", "joblog", "max-args", "timeout", "tmpdir", "workdir", "env"}}
	next := scanOpts(cs.words, i, sp, nil)
	end := next
	for end < len(cs.words) && !strings.HasPrefix(cs.words[end].Value, ":::") {
		end++
	}
	if end == next {
		if end >= len(cs.words) || cs.words[end].Value != ":::" {
			return 0, false // commands come from stdin or a file
		}
		// parallel ::: CMD…: each input is a command line.
		cs.pushWrapper("parallel", i, end+1)
		for k := end + 1; k < len(cs.words) && !strings.HasPrefix(cs.words[k].Value, ":::"); k++ {
			w.shellString("parallel", cs, k, k+1, c)
		}
		return -1, false
	}
	cs.pushWrapper("parallel", i, next)
	cs.extra = true
	cs.replace = "{"
	w.shellString("parallel", cs, next, end, c)
	return -1, false
}

// shellString treats words [from, to) as a string a shell will run: it is
// parsed as a payload when literal, opaque otherwise.
func (w *walker) shellString(program string, cs *cmdState, from, to int, c ctx) {
	text, lit := joinValues(cs.words[from:to])
	if !lit {
		w.addOpaque(OpaquePayload, program, w.stmtText(cs.stmt), w.stmtSpan(cs.stmt))
		return
	}
	w.payload(program, text, cs.nodes[from], cs.nodes[to-1], cs, c)
}

// find records find itself and each -exec/-execdir/-ok/-okdir command.
func (w *walker) find(cs *cmdState, i int, c ctx) {
	w.emit(cs, i, c)
	for j := i + 1; j < len(cs.words); j++ {
		switch cs.words[j].Value {
		case "-exec", "-execdir", "-ok", "-okdir":
		default:
			continue
		}
		start := j + 1
		end := start
		for end < len(cs.words) && cs.words[end].Value != ";" && cs.words[end].Value != "+" {
			end++
		}
		if end > start {
			sub := &cmdState{
				stmt:     cs.stmt,
				words:    cs.words[start:end],
				nodes:    cs.nodes[start:end],
				redirs:   cs.redirs,
				lastWrap: -1,
				ctx:      cs.ctx,
			}
			sub.wrappers = append(cs.wrappers[:len(cs.wrappers):len(cs.wrappers)], Wrapper{Program: "find", Args: values(cs.words[i+1 : j])})
			sub.extra = end < len(cs.words) && cs.words[end].Value == "+"
			sub.replace = "{}"
			w.resolve(sub, 0, c)
		}
		j = end
	}
}

func values(ws []Word) []string {
	out := make([]string, len(ws))
	for i, wd := range ws {
		out[i] = wd.Value
	}
	return out
}
