package shellparse

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// The command hash table. bash looks a command name up in its hash table
// before PATH, and hash -p PATH NAME or BASH_CMDS[NAME]=PATH put an entry
// there: BASH_CMDS[ls]=/sbin/reboot; ls runs reboot. A known entry makes a
// later command NAME (the shell's own, not one a wrapper such as sudo
// execs from PATH) a command of PATH; a function of that name still wins.
// An entry whose name or path is only known at run time may remap any later
// command: a dynamic program. (Assigning PATH or hash -r empties the table;
// keeping the entries can only rate higher.)

// hashEntry records that name now runs path.
func (w *walker) hashEntry(name, path Word, at syntax.Node) {
	if !name.Literal || !path.Literal || path.Value == "" {
		w.addOpaque(OpaqueDynamicProgram, "", w.text(at), w.span(at))
		return
	}
	if w.hashed == nil {
		w.hashed = map[string]Word{}
	}
	w.hashed[name.Value] = path
}

// hashAssign handles an assignment to BASH_CMDS: BASH_CMDS[NAME]=PATH or
// BASH_CMDS=([NAME]=PATH …).
func (w *walker) hashAssign(a *syntax.Assign) {
	entry := func(idx syntax.ArithmExpr, val *syntax.Word) {
		key, ok := idx.(*syntax.Word)
		if !ok || val == nil {
			w.addOpaque(OpaqueDynamicProgram, "", w.text(a), w.span(a))
			return
		}
		w.hashEntry(w.convWord(key), w.convWord(val), a)
	}
	switch {
	case a.Index != nil:
		entry(a.Index, a.Value)
	case a.Array != nil:
		for _, el := range a.Array.Elems {
			if el.Index != nil {
				entry(el.Index, el.Value)
			}
		}
	}
}

// hashCommand handles hash's arguments: -p PATH NAME… adds entries.
func (w *walker) hashCommand(args []Word, at syntax.Node) {
	if len(args) < 3 || !args[0].Literal || args[0].Value != "-p" {
		if len(args) > 0 && !args[0].Literal {
			w.addOpaque(OpaqueDynamicProgram, "", w.text(at), w.span(at))
		}
		return
	}
	for _, n := range args[2:] {
		w.hashEntry(n, args[1], at)
	}
}

// hashedWord returns the program word bash runs for the command word pw.
func (w *walker) hashedWord(pw Word) Word {
	if len(w.hashed) == 0 || strings.Contains(pw.Value, "/") || w.isFunction(pw.Value) {
		return pw
	}
	if p, ok := w.hashed[pw.Value]; ok {
		return p
	}
	return pw
}
