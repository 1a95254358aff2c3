package shellparse

import (
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Fork loops: a loop that never ends by its condition (while true, while :,
// until false, for ((;;))) and whose body starts a background job without
// waiting for it starts jobs without bound, as a fork bomb does. The same
// holds for a function that starts a background job and then calls itself
// unconditionally (f(){ sleep 9 & f; }; f). A body that waits (wait) or
// sleeps at least a second in the foreground between jobs bounds their
// rate, and is not one; a single "cmd &" or a bounded loop is not either.
// The walker records these in Script.ForkLoops and Function.SelfSpawn, and
// package approval rates them hardline.fork-bomb.

// forkLoop reports whether a while/until or C-style for loop is a fork loop.
func forkLoop(n syntax.Command) bool {
	var body []*syntax.Stmt
	switch l := n.(type) {
	case *syntax.WhileClause:
		if !endlessCond(l.Cond, l.Until) {
			return false
		}
		body = l.Do
	case *syntax.ForClause:
		c, ok := l.Loop.(*syntax.CStyleLoop)
		if !ok || c.Cond != nil && !arithTrue(c.Cond, false) {
			return false
		}
		body = l.Do
	default:
		return false
	}
	return spawnsUnthrottled(body)
}

// endlessCond reports whether a loop condition never ends the loop: the
// last command is true, :, ((N)) with N not 0, or "[ WORD ]"/"test WORD"
// with a non-empty literal word (false, ((0)) for until).
func endlessCond(cond []*syntax.Stmt, until bool) bool {
	if len(cond) == 0 {
		return false
	}
	s := cond[len(cond)-1]
	if s.Background || s.Negated {
		return false
	}
	switch x := s.Cmd.(type) {
	case *syntax.CallExpr:
		if len(x.Assigns) > 0 || len(x.Args) == 0 {
			return false
		}
		name, ok := litWord(x.Args[0])
		if !ok {
			return false
		}
		name = name[strings.LastIndexByte(name, '/')+1:]
		switch {
		case !until && (name == "true" || name == ":") && len(x.Args) == 1:
			return true
		case until && name == "false" && len(x.Args) == 1:
			return true
		case !until && name == "[" && len(x.Args) == 3:
			v, ok := litWord(x.Args[1])
			return ok && v != "" && litIs(x.Args[2], "]")
		case !until && name == "test" && len(x.Args) == 2:
			v, ok := litWord(x.Args[1])
			return ok && v != ""
		}
	case *syntax.ArithmCmd:
		return arithTrue(x.X, until)
	}
	return false
}

// arithTrue reports whether an arithmetic expression is a literal number
// that is not 0 (is 0, for until).
func arithTrue(x syntax.ArithmExpr, zero bool) bool {
	w, ok := x.(*syntax.Word)
	if !ok {
		return false
	}
	v, ok := litWord(w)
	if !ok {
		return false
	}
	n, err := strconv.ParseInt(v, 0, 64)
	return err == nil && (n == 0) == zero
}

// litWord returns a word's value when it is one plain literal.
func litWord(w *syntax.Word) (string, bool) {
	if w == nil || len(w.Parts) != 1 {
		return "", false
	}
	l, ok := w.Parts[0].(*syntax.Lit)
	if !ok || strings.ContainsAny(l.Value, "\\$`") {
		return "", false
	}
	return l.Value, true
}

func litIs(w *syntax.Word, v string) bool {
	s, ok := litWord(w)
	return ok && s == v
}

// spawnsUnthrottled reports whether a loop or function body starts a
// background job, and neither waits nor sleeps a second or more in the
// foreground. Nested function definitions are not the body's.
func spawnsUnthrottled(body []*syntax.Stmt) bool {
	bg, throttled := false, false
	var visit func(n syntax.Node, fg bool) bool
	visit = func(n syntax.Node, fg bool) bool {
		switch x := n.(type) {
		case *syntax.FuncDecl:
			return false
		case *syntax.Stmt:
			if x.Background {
				bg = true
				if x.Cmd != nil {
					syntax.Walk(x.Cmd, func(m syntax.Node) bool { return visit(m, false) })
				}
				return false
			}
		case *syntax.CallExpr:
			if fg && throttles(x) {
				throttled = true
			}
		case *syntax.CmdSubst, *syntax.ProcSubst:
			return false
		}
		return true
	}
	for _, s := range body {
		syntax.Walk(s, func(m syntax.Node) bool { return visit(m, true) })
	}
	return bg && !throttled
}

// throttles reports whether a foreground command bounds how fast a loop
// starts jobs: wait, or sleep for a literal duration of a second or more.
func throttles(x *syntax.CallExpr) bool {
	if len(x.Args) == 0 {
		return false
	}
	name, ok := litWord(x.Args[0])
	if !ok {
		return false
	}
	switch name[strings.LastIndexByte(name, '/')+1:] {
	case "wait":
		return true
	case "sleep":
		for _, a := range x.Args[1:] {
			v, ok := litWord(a)
			if !ok {
				return false
			}
			v = strings.TrimRight(v, "smhd")
			if f, err := strconv.ParseFloat(v, 64); err == nil && f >= 1 {
				return true
			}
		}
	}
	return false
}

// selfSpawn reports whether a function's body starts a background job and
// calls the function itself as one of its own top-level statements, so
// that every call makes another: f(){ sleep 9 & f; }.
func selfSpawn(fd *syntax.FuncDecl) bool {
	if fd.Name == nil {
		return false
	}
	var stmts []*syntax.Stmt
	switch b := fd.Body.Cmd.(type) {
	case *syntax.Block:
		stmts = b.Stmts
	case *syntax.Subshell:
		stmts = b.Stmts
	default:
		return false
	}
	calls := false
	for _, s := range stmts {
		if ce, ok := s.Cmd.(*syntax.CallExpr); ok && !s.Background && len(ce.Args) > 0 && litIs(ce.Args[0], fd.Name.Value) {
			calls = true
		}
	}
	return calls && spawnsUnthrottled(stmts)
}
