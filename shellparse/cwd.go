package shellparse

import (
	"maps"
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// The working directory. Bash's cd, pushd and popd change the directory
// of the shell that runs them, and nothing else: a cd in a subshell, a
// pipeline stage, a background job or a command substitution is gone after
// it; one in a branch may or may not have run; one that fails (a directory
// that does not exist) leaves the shell where it was. The walker follows
// the directory as it follows variables (vars.go): among the known values,
// cwdKey holds the directories bash may be in at this point, so the
// save, restore and join of every construct apply to it as they apply to a
// variable, with one difference: where two ways through meet, the
// directories are those of either way (joinDirs), not only those they
// agree on. Each command records them (Command.Dirs) and the rules resolve
// its relative names in each.
//
// A missing cwdKey is the directory the script started in; a value that is
// Unknown means bash may be anywhere (a cd to a computed directory, eval,
// a popd whose stack is not known, more than maxDirs candidates). The
// values are directory names joined by "\x00", sorted: "" is the start
// directory, a relative name is relative to it, "~" the home.
const (
	cwdKey = "\x00cwd"
	// stackKey holds pushd's directory stack: each entry (a cwdKey value)
	// followed by "\x01", top first; missing is the empty stack bash
	// starts with, Unknown a stack not known.
	stackKey = "\x00dirstack"
	maxDirs  = 4
)

// dirCommands are the builtins that read or change the directory state.
var dirCommands = map[string]bool{"cd": true, "pushd": true, "popd": true, "dirs": true}

// runsText are the builtins that run text as the shell's own commands.
var runsText = map[string]bool{"eval": true, "source": true, ".": true, "trap": true, "fc": true}

// unknownDir is the value of cwdKey (and stackKey) when it is not known.
var unknownDir = Word{Unknown: true}

// cdSeen records the simple cd statement walked last and the directories
// it leaves when it succeeds: "cd DIR && CMD" runs CMD only there.
type cdSeen struct {
	stmt *syntax.Stmt
	ok   Word
}

// dirsOf returns the candidate directories a cwdKey value holds, or false
// when they are not known.
func dirsOf(v Word, present bool) ([]string, bool) {
	if !present {
		return []string{""}, true
	}
	if v.Unknown {
		return nil, false
	}
	return strings.Split(v.Value, "\x00"), true
}

// dirsWord encodes a candidate set as a cwdKey value.
func dirsWord(ds []string) Word {
	slices.Sort(ds)
	ds = slices.Compact(ds)
	if len(ds) > maxDirs {
		return unknownDir
	}
	return Word{Value: strings.Join(ds, "\x00"), Literal: true}
}

// joinDirs is the directory state after one of two ways through, whose
// states a and b are (present reports whether each had the key).
func joinDirs(a Word, aok bool, b Word, bok bool) (Word, bool) {
	if !aok && !bok || aok && bok && a == b {
		return a, aok
	}
	da, ka := dirsOf(a, aok)
	db, kb := dirsOf(b, bok)
	if !ka || !kb {
		return unknownDir, true
	}
	return dirsWord(append(da, db...)), true
}

// setDirs makes v the directory state, with PWD known when v is one
// absolute (or home) directory.
func (w *walker) setDirs(v Word) {
	w.touch(cwdKey)
	if w.vars == nil {
		w.vars = make(map[string]Word, 2)
	}
	if !v.Unknown && v.Value == "" {
		delete(w.vars, cwdKey) // the start directory
	} else {
		w.vars[cwdKey] = v
	}
	w.touch("PWD")
	delete(w.vars, "PWD")
	w.dirChanges++
	if ds, ok := dirsOf(v, true); ok && len(w.script.visited) <= 4*maxDirs {
		// Past the bound backToVisited has more than maxDirs anyway.
		w.script.visited = append(w.script.visited, ds...)
	}
	if ds, ok := dirsOf(v, true); ok && len(ds) == 1 && (strings.HasPrefix(ds[0], "/") || strings.HasPrefix(ds[0], "~")) {
		w.vars["PWD"] = Word{Value: ds[0], Literal: !strings.HasPrefix(ds[0], "~")}
	}
}

// commandDirs returns what Command.Dirs and Command.AnyDir record for a
// command run now.
func (w *walker) commandDirs() ([]string, bool) {
	v, ok := w.vars[cwdKey]
	if !ok {
		return nil, false
	}
	ds, known := dirsOf(v, true)
	return ds, !known
}

// alwaysThere are directories every Linux system has, a sandbox's minimal
// root too: a cd to one does not fail. Not /var, /var/tmp, /run or
// /dev/shm: the oracle's sandbox root has none of them (cd ~; cd /var/tmp;
// ls | xargs rm -rf emptied the home there).
var alwaysThere = map[string]bool{"/": true, "~": true, "/tmp": true, "/dev": true, "/etc": true, "/usr": true,
	"/proc": true, "/sys": true, "/bin": true, "/sbin": true, "/lib": true, "/home": true,
	"/root": true, "/usr/bin": true, "/usr/lib": true}

// chdirCommand applies a cd, pushd, popd or dirs that the shell itself
// runs (name with the words after it; env is the command's own
// environment, for a CDPATH given to it) to the directory state.
func (w *walker) chdirCommand(s *syntax.Stmt, name string, args []Word, env []Assign) {
	cur, curOK := w.vars[cwdKey]
	old, known := dirsOf(cur, curOK)
	stack, stackOK := w.vars[stackKey]
	switch name {
	case "dirs":
		for _, a := range args {
			switch {
			case a.Unknown:
				w.setStack("\x02")
			case strings.HasPrefix(a.Value, "-") && strings.Contains(a.Value, "c"):
				w.setStack("") // dirs -c empties the stack
			}
		}
		return
	case "popd":
		if len(args) > 0 || !known {
			w.unknownDirs()
			return
		}
		if !stackOK {
			return // "directory stack empty": nothing changes
		}
		if stack.Unknown {
			w.backToVisited()
			return
		}
		top, rest, _ := strings.Cut(stack.Value, "\x01")
		w.setStack(rest)
		w.setOldPwd(old)
		w.setDirs(Word{Value: top, Literal: true})
		return
	}
	ops, ok := cdOperands(args)
	if !ok {
		if ops == nil {
			return // an invalid option: cd fails
		}
		w.unknownDirs()
		return
	}
	var dir string
	switch {
	case len(ops) > 1:
		return // "too many arguments"
	case len(ops) == 0 && name == "pushd":
		// pushd alone swaps the two top directories.
		if !stackOK {
			return // "no other directory"
		}
		if stack.Unknown || !known {
			w.unknownDirs()
			return
		}
		top, rest, _ := strings.Cut(stack.Value, "\x01")
		w.setStack(strings.Join(old, "\x00") + "\x01" + rest)
		w.setOldPwd(old)
		w.setDirs(Word{Value: top, Literal: true})
		return
	case len(ops) == 0:
		dir = "~"
	default:
		dir = ops[0].Value
		if ops[0].Unknown || ops[0].Glob || name == "pushd" && (strings.HasPrefix(dir, "+") || strings.HasPrefix(dir, "-")) && len(dir) > 1 {
			w.unknownDirs()
			return
		}
	}
	if dir == "" {
		return // cd "" stays where it is
	}
	// $HOME keeps its spelling in a word's value (vars.go) and is read as
	// the home everywhere else: so here (cd $HOME; rm -rf * empties it).
	for _, spelling := range [...]string{"$HOME", "${HOME}"} {
		if rest, ok := strings.CutPrefix(dir, spelling); ok && (rest == "" || rest[0] == '/') {
			dir = "~" + rest
		}
	}
	if dir == "-" && name == "cd" {
		o, ok := w.vars["OLDPWD"]
		if !ok {
			w.backToVisited()
			return
		}
		dir = o.Value
	}
	if !known || physical(args) && strings.Contains(dir, "..") {
		// -P resolves ".." after symbolic links, which are not known.
		w.unknownDirs()
		return
	}
	if w.script.cdableVars && syntax.ValidName(dir) {
		// shopt -s cdable_vars: a name that is no directory is a
		// variable holding one.
		w.unknownDirs()
		return
	}
	targets := []string{dir}
	if st := w.script.files; st != nil {
		// A symbolic link the line made leads where it points
		// (dataflow.go): cd r after ln -s / r is in /.
		for _, l := range st.links {
			if t, ok := throughLink(Word{Value: dir, Literal: true}, l); ok {
				if t.Unknown {
					w.unknownDirs()
					return
				}
				targets = append(targets, t.Value)
			}
		}
	}
	if cdpath, ok := w.cdPath(env); ok && !strings.HasPrefix(dir, "/") && !strings.HasPrefix(dir, "~") &&
		dir != "." && dir != ".." && !strings.HasPrefix(dir, "./") && !strings.HasPrefix(dir, "../") {
		// A relative name is looked up in CDPATH's directories first.
		targets = targets[:0]
		for _, p := range strings.Split(cdpath, ":") {
			if p == "" {
				p = "."
			}
			targets = append(targets, path.Join(p, dir))
		}
		targets = append(targets, dir)
	}
	var next []string
	mayFail := false
	for _, t := range targets {
		for _, o := range old {
			d, ok := joinDir(o, t)
			if !ok {
				w.unknownDirs()
				return
			}
			next = append(next, d)
			mayFail = mayFail || !alwaysThere[d] && t != "." && t != ".."
		}
	}
	okState := dirsWord(slices.Clone(next))
	if mayFail {
		next = append(next, old...)
	}
	if name == "pushd" {
		if mayFail {
			w.setStack("\x02") // pushed or not
		} else {
			pushed := strings.Join(old, "\x00") + "\x01"
			if stackOK {
				pushed += stack.Value
			}
			w.setStack(pushed)
		}
	}
	if mayFail {
		w.setOldPwd(nil) // set only when the cd succeeds
	} else {
		w.setOldPwd(old)
		w.script.cdSure = true
	}
	w.setDirs(dirsWord(next))
	w.cd = cdSeen{stmt: s, ok: okState}
}

// cdOperands returns the operands after cd's options (-L, -P, -e, -@ and
// "--"). It reports false with nil for an option cd does not take (cd
// then fails and stays) and with the words for one not known.
func cdOperands(args []Word) ([]Word, bool) {
	for i, a := range args {
		switch {
		case a.Unknown:
			return args, false
		case a.Value == "--":
			return args[i+1:], true
		case len(a.Value) < 2 || a.Value[0] != '-':
			return args[i:], true
		case strings.Trim(a.Value[1:], "LPe@") != "":
			return nil, false
		}
	}
	return nil, true
}

// physical reports whether cd's options hold -P.
func physical(args []Word) bool {
	for _, a := range args {
		if a.Value == "--" || !strings.HasPrefix(a.Value, "-") {
			return false
		}
		if strings.Contains(a.Value, "P") {
			return true
		}
	}
	return false
}

// joinDir is where cd name leads from candidate directory from, or false
// when that is not known (".." above the home's own spelling).
func joinDir(from, name string) (string, bool) {
	if !strings.HasPrefix(name, "/") && !strings.HasPrefix(name, "~") {
		if from == "" {
			name = path.Clean(name)
			if name == "." {
				return "", true
			}
			return name, true
		}
		name = from + "/" + name
	}
	if strings.HasPrefix(name, "~") && name != "~" && !strings.HasPrefix(name, "~/") {
		return "", false // ~user
	}
	d := path.Clean(name)
	if strings.HasPrefix(name, "~") && !strings.HasPrefix(d, "~") {
		return "", false // ~/.. is the home's parent, not known here
	}
	return d, true
}

// cdPath returns the CDPATH a cd reads: its own environment's, or the
// shell's variable when known. One inherited from the environment the
// line runs in is not known and not followed.
func (w *walker) cdPath(env []Assign) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if env[i].Name == "CDPATH" {
			return env[i].Value.Value, !env[i].Value.Unknown
		}
	}
	v, ok := w.vars["CDPATH"]
	return v.Value, ok && v.Value != ""
}

// backToVisited is a cd - or popd whose OLDPWD or stack is not known:
// it returns to a directory the line was in, when a cd that surely
// succeeded set OLDPWD and the stack's entries from those; else it may
// go anywhere (OLDPWD from the environment).
func (w *walker) backToVisited() {
	v := dirsWord(append([]string{""}, w.script.visited...))
	if !w.script.cdSure || v.Unknown {
		w.unknownDirs()
		return
	}
	w.setOldPwd(nil)
	w.setStack("\x02")
	w.setDirs(v)
}

// unknownDirs records that bash may now be in any directory.
func (w *walker) unknownDirs() {
	w.setDirs(unknownDir)
	w.setOldPwd(nil)
	w.setStack("\x02")
}

// setOldPwd sets OLDPWD to the directory bash left, when it is one known
// absolute directory.
func (w *walker) setOldPwd(old []string) {
	w.touch("OLDPWD")
	delete(w.vars, "OLDPWD")
	if len(old) == 1 && (strings.HasPrefix(old[0], "/") || strings.HasPrefix(old[0], "~")) {
		if w.vars == nil {
			w.vars = make(map[string]Word, 2)
		}
		w.vars["OLDPWD"] = Word{Value: old[0], Literal: !strings.HasPrefix(old[0], "~")}
	}
}

// setStack sets pushd's stack; "" is empty, "\x02" not known.
func (w *walker) setStack(v string) {
	w.touch(stackKey)
	if w.vars == nil {
		w.vars = make(map[string]Word, 2)
	}
	switch v {
	case "":
		delete(w.vars, stackKey)
	case "\x02":
		w.vars[stackKey] = unknownDir
	default:
		w.vars[stackKey] = Word{Value: v, Literal: true}
	}
}

// shellDirCommand reports whether the command at word i of cs is run by the
// shell itself (not by a wrapper program such as sudo or env, which would
// run a cd binary in a child): first in its statement, or after the
// builtin and command keywords only.
func shellDirCommand(cs *cmdState, i int) bool {
	for _, wr := range cs.wrappers[len(cs.ctx.wrap):] {
		if wr.Program != "builtin" && wr.Program != "command" {
			return false
		}
	}
	return i == 0 || len(cs.wrappers) > len(cs.ctx.wrap)
}

// keepDirs returns a map holding only the directory state of vars, for a
// walk that forgets every variable: what a command may assign does not
// move the shell.
func keepDirs(vars map[string]Word) map[string]Word {
	var out map[string]Word
	for _, k := range [...]string{cwdKey, stackKey} {
		if v, ok := vars[k]; ok {
			if out == nil {
				out = make(map[string]Word, 2)
			}
			out[k] = v
		}
	}
	return out
}

// maxDirSplits bounds the dirChoices walks nested in one another: each
// walks the rest of its list once per directory.
const maxDirSplits = 2

// dirSplit returns the directories bash may be in before statement s when
// there are several and s reads which one it is in ($PWD, $OLDPWD, ~+, ~-,
// pwd, dirs); nil otherwise.
func (w *walker) dirSplit(s *syntax.Stmt) []string {
	v, ok := w.vars[cwdKey]
	if !ok || v.Unknown || !strings.Contains(v.Value, "\x00") || w.script.dirSplits >= maxDirSplits {
		return nil
	}
	t := w.text(s)
	if !strings.Contains(t, "PWD") && !strings.Contains(t, "~+") && !strings.Contains(t, "~-") &&
		!strings.Contains(t, "pwd") && !strings.Contains(t, "dirs") {
		return nil
	}
	return strings.Split(v.Value, "\x00")
}

// dirChoices walks (walk) once in each directory of ds, as paramChoices
// walks once per variable state, and joins what the walks leave.
func (w *walker) dirChoices(ds []string, walk func() string) string {
	start, funcs := len(w.script.Commands), w.funcCount()
	entry := w.vars
	untracked, stopped := w.script.untracked, false
	outs := make([]map[string]Word, 0, len(ds))
	ret := ""
	w.script.dirSplits++
	for _, d := range ds {
		w.vars = maps.Clone(entry)
		w.script.untracked = untracked
		w.setDirs(dirsWord([]string{d}))
		if r := walk(); r != "" {
			ret = r
		}
		stopped = stopped || w.script.untracked
		outs = append(outs, w.vars)
	}
	w.script.dirSplits--
	w.script.untracked = stopped
	w.vars = joinAll(outs)
	w.dedupeFrom(start, funcs)
	return ret
}
