package shellparse

import (
	"slices"
	"strings"

	"github.com/tether-dev/tether/grammar"
)

// Programs that read, as their script, a file the line wrote. A program the
// grammar gives a Script (crontab FILE, at -f FILE, gdb -x FILE, cmake -P
// FILE, python3 FILE, make -f FILE …) or a shell reading its standard input
// from a redirection (batch < FILE, sh < FILE) runs what the file holds.
// When this line wrote the file with known text (a heredoc, echo, printf,
// a copy of such a file), the text is read as that program given it on
// standard input: its shell commands (a crontab's entries, an at job, a
// makefile's recipes), or the program's command line with the text inline
// (python3 -c TEXT, gdb -ex LINE …), walked like bash -c's payload. Content
// the line wrote but cannot know is an opaque written-file segment. This
// only adds readings: the command itself is judged as written too.

// scriptFiles walks the known text of each script file the program at word
// i reads: the value of an option the grammar lists in Script.From, the
// first operand of an interpreter or of crontab.
func (w *walker) scriptFiles(name string, cs *cmdState, i int, c ctx) {
	if st := w.script.files; (st == nil || len(st.facts) == 0) && len(w.script.Commands) == 0 {
		return // nothing before it wrote a file
	}
	w.configFiles(name, cs, c)
	if spec := grammar.Lookup(name); spec == nil || spec.Stdin == nil || i+1 >= len(cs.words) {
		return // no script read from a file
	}
	args := cs.words[i+1:]
	inv := grammar.Parse(name, values(args))
	sc := inv.Script()
	if sc == nil || inv.Effects.Has(grammar.DryRun) {
		return
	}
	for _, o := range inv.Options {
		if !o.HasValue || grammar.IsStdinPath(o.Value) || !slices.Contains(sc.From, o.Name) || !args[o.ValueArg].Literal {
			continue
		}
		alt := values(args)
		if o.ValueArg == o.Arg {
			alt[o.Arg] = strings.TrimSuffix(alt[o.Arg], o.Value) + "/dev/stdin"
		} else {
			alt[o.ValueArg] = "/dev/stdin"
		}
		w.fileScript(name, grammar.Parse(name, alt), o.Value, cs, c)
	}
	if sc.Lang != "crontab" && !(inv.SubSpec != nil && inv.SubSpec.StopAtOperand) {
		return
	}
	if len(inv.Operands) == 0 {
		return
	}
	// The first operand is the script; the others are its arguments.
	op := inv.Operands[0]
	if grammar.IsStdinPath(op.Value) || !args[op.Arg].Literal {
		return
	}
	alt := values(args)
	alt[op.Arg] = "-"
	w.fileScript(name, grammar.Parse(name, alt), op.Value, cs, c)
}

// configFiles walks, for a program the grammar gives ConfigFiles (git), the
// commands the settings of each such file run when this line wrote it with
// known text ("printf '[core]\n\tfsmonitor = reboot\n' > ~/.gitconfig; git
// status"), as commands the program runs. A file the line wrote without
// known text is approval's business: writing it is a configuration change.
func (w *walker) configFiles(name string, cs *cmdState, c ctx) {
	spec := grammar.Lookup(name)
	if spec == nil || spec.ConfigFiles == nil {
		return
	}
	if slices.ContainsFunc(cs.wrappers, func(wr Wrapper) bool { return wr.Program == name }) {
		return // a command the file's settings run: read once
	}
	cf := spec.ConfigFiles
	files := slices.Clone(cf.Paths)
	for _, a := range cs.env {
		if slices.Contains(cf.Env, a.Name) && a.Value.Literal {
			files = append(files, a.Value.Value)
		}
	}
	for _, p := range files {
		for _, ct := range w.written(p) {
			if ct.kind != factText {
				continue
			}
			if cmds := cf.Shell(ct.text); cmds != "" {
				fed := *cs
				fed.stdin, fed.stdinBytes = nil, nil
				fed.wrappers = append(cs.wrappers[:len(cs.wrappers):len(cs.wrappers)], Wrapper{Program: name})
				w.payloadAt(name, cmds, w.stmtSpan(cs.stmt), &fed, c)
			}
		}
	}
}

// fileScript walks what program, invoked as inv with its script on standard
// input, does when that input is the file p this line wrote.
func (w *walker) fileScript(program string, inv *grammar.Invocation, p string, cs *cmdState, c ctx) {
	for _, ct := range w.written(p) {
		switch ct.kind {
		case factText:
			w.stdinScript(program, inv, ct.text, cs, c)
		case factUnknown:
			w.addOpaque(OpaqueWritten, program, w.stmtText(cs.stmt), w.stmtSpan(cs.stmt))
		}
		// A copy of a file the line did not write: that file's own
		// content, which the command as written is judged by.
	}
}

// stdinScript walks text as the script program reads on standard input: a
// shell's (or source's, at's) commands; for a program with a grammar
// Script, what Invocation.ScriptCommand says it does with it.
func (w *walker) stdinScript(program string, inv *grammar.Invocation, text string, cs *cmdState, c ctx) {
	fed := *cs
	fed.stdin, fed.stdinBytes = nil, nil
	if readsShell(program) {
		fed.wrappers = append(cs.wrappers[:len(cs.wrappers):len(cs.wrappers)], Wrapper{Program: program})
		w.payloadAt(program, text, w.stmtSpan(cs.stmt), &fed, c)
		return
	}
	if inv == nil || inv.Script() == nil {
		return
	}
	cmd := inv.ScriptCommand(text)
	if inv.Script().Shell != nil {
		// The text's own commands, run by the program (cron, make).
		fed.wrappers = append(cs.wrappers[:len(cs.wrappers):len(cs.wrappers)], Wrapper{Program: program})
	}
	w.payloadAt(program, cmd, w.stmtSpan(cs.stmt), &fed, c)
}

// redirectedScript walks the file a read redirection of standard input
// names, when this line wrote it, as the script program reads there
// (batch < job, sh < s.sh).
func (w *walker) redirectedScript(program string, target Word, cs *cmdState) {
	if !target.Literal || w.script.files == nil || len(w.script.files.facts) == 0 {
		return
	}
	var inv *grammar.Invocation
	if !readsShell(program) {
		inv = grammar.Parse(program, values(cmdArgs(cs, program)))
	}
	w.fileScript(program, inv, target.Value, cs, cs.ctx)
}

// cmdArgs returns the words after the program program in cs (the last word
// with that base name).
func cmdArgs(cs *cmdState, program string) []Word {
	for k := len(cs.words) - 1; k >= 0; k-- {
		if baseName(cs.words[k].Value) == program {
			return cs.words[k+1:]
		}
	}
	return nil
}

// fileText returns the text this line wrote to the file p, when it is one
// known text.
func (w *walker) fileText(p string) (string, bool) {
	if w.script.files == nil {
		return "", false
	}
	got := w.written(p)
	if len(got) != 1 || got[0].kind != factText {
		return "", false
	}
	return got[0].text, true
}
