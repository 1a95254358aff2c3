package shellparse

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Namerefs. declare -n r=v (local -n, typeset -n) makes r another name for
// v: every assignment to r assigns v, every expansion of r expands v. A
// nameref whose target is known is followed, so "f() { local -n r=$1;
// r=reboot; }; f v; $v" runs reboot (callFunction binds $1, and the body's
// assignments to names it did not declare local outlive the call). A
// target not known makes any assignment through the name forget every
// value, and its expansion unknown; a nameref declared without a value
// takes the first value assigned to it as its target. Namerefs declared in
// a function body are the body's own; one made global there (declare -gn)
// stops the tracking.

// refUnknown is the target of a nameref whose target is not known.
const refUnknown = "\x00"

// maxRefChain bounds the namerefs followed from one name.
const maxRefChain = 8

// declareRef applies one NAME[=TARGET] argument of a declaration with -n.
func (w *walker) declareRef(a *syntax.Assign, as Assign, local bool) {
	name := a.Name.Value
	if w.namerefs == nil {
		w.namerefs = map[string]string{}
	}
	if local {
		w.declLocal(name)
	}
	delete(w.vars, name)
	switch {
	case a.Value == nil && a.Array == nil:
		w.namerefs[name] = ""
	case as.Value.Literal && refTarget(as.Value.Value):
		w.namerefs[name] = as.Value.Value
	default:
		w.namerefs[name] = refUnknown
	}
}

// refTarget reports whether s can be a nameref's target as the analysis
// follows it: a variable name, not a subscripted one (whose subscript is
// evaluated, see reread.go).
func refTarget(s string) bool {
	return syntax.ValidName(s) && !strings.HasPrefix(s, "BASH")
}

// deref returns the variable name finally refers to through namerefs, or
// "" when a target on the way is not known.
func (w *walker) deref(name string) string {
	for range maxRefChain {
		t, ok := w.namerefs[name]
		if !ok {
			return name
		}
		if t == "" || t == refUnknown {
			return ""
		}
		name = t
	}
	return ""
}

// assignRef resolves the name an assignment of v to name assigns: its
// target when name is a nameref. It reports false when the assignment was
// handled here: the first value of a nameref without a target names its
// target, and an assignment through an unknown target may set any
// variable.
func (w *walker) assignRef(name string, v Word) (string, bool) {
	t, ok := w.namerefs[name]
	if !ok {
		return name, true
	}
	if t == "" {
		if v.Literal && refTarget(v.Value) {
			w.namerefs[name] = v.Value
		} else {
			w.namerefs[name] = refUnknown
			w.forgetAll()
		}
		return "", false
	}
	if d := w.deref(name); d != "" {
		return d, true
	}
	w.forgetAll()
	return "", false
}

// declLocal records that the function call being walked declares name
// local: its assignments do not outlive the call.
func (w *walker) declLocal(name string) {
	if !w.inCall {
		return
	}
	if w.callLocals == nil {
		w.callLocals = make(map[string]bool)
	}
	w.callLocals[name] = true
}

// retarget makes the nameref name refer to the variable v names, as a for
// loop over a nameref does with each item.
func (w *walker) retarget(name string, v Word) {
	if v.Literal && refTarget(v.Value) {
		w.namerefs[name] = v.Value
		return
	}
	w.namerefs[name] = refUnknown
	w.forgetAll()
}

// declUnref reports whether a declaration's options remove the nameref
// attribute (+n): the name then holds its target's name as its value.
func declUnref(w *walker, d *syntax.DeclClause) bool {
	for _, a := range d.Args {
		if a.Naked && a.Name == nil && a.Value != nil {
			if v := w.convWord(a.Value); v.Literal && strings.HasPrefix(v.Value, "+") && strings.ContainsRune(v.Value, 'n') {
				return true
			}
		}
	}
	return false
}

// unref removes the nameref attribute of name: its value is the name of
// its target.
func (w *walker) unref(name string) {
	t, ok := w.namerefs[name]
	if !ok {
		return
	}
	delete(w.namerefs, name)
	if t == "" || t == refUnknown {
		w.forget(name)
		return
	}
	w.setVar(name, Word{Value: t, Literal: true})
}
