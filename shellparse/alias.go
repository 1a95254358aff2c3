package shellparse

import "strings"

// Alias expansion at the places bash does it (red-team class B15). An
// alias's value is rated where it is defined (interpreter), but bash also
// builds new text from aliases: the first word of a simple command that
// names an alias is replaced by its value, and when that value ends in a
// blank the next word is alias-expanded too ("alias s='sudo ' k='kill -9';
// s k -1" runs sudo kill -9 -1). Bash expands only with expand_aliases set
// (or interactively) and only on lines read after the definition; the walk
// expands every known alias at every use and also reads the command as
// written, so either way bash goes is rated.

// maxAliasWords bounds the words one expansion follows through blanks.
const maxAliasWords = 8

// expandAlias walks, as the shell's payload, the text the command cs
// becomes when its first word is an alias the script defined: the
// values of the aliased words, then the rest of the command as written.
// An alias is not expanded again inside its own expansion.
func (w *walker) expandAlias(cs *cmdState, c ctx) {
	defs := w.script.aliasDefs
	var b strings.Builder
	k := 0
	var used []string
	for k < len(cs.words) && k < maxAliasWords {
		wd := cs.words[k]
		v, ok := defs[wd.Value]
		if !ok || wd.Raw != wd.Value || w.script.expanding[wd.Value] {
			break // quoted or escaped words are not aliases
		}
		b.WriteString(v)
		used = append(used, wd.Value)
		k++
		if v == "" || (v[len(v)-1] != ' ' && v[len(v)-1] != '\t') {
			break
		}
	}
	if k == 0 {
		return
	}
	if k < len(cs.nodes) {
		s, _ := offsets(cs.nodes[k], len(w.src))
		_, e := offsets(cs.nodes[len(cs.nodes)-1], len(w.src))
		if b.Len() > 0 && !strings.HasSuffix(b.String(), " ") {
			b.WriteByte(' ')
		}
		b.WriteString(w.src[s:e])
	}
	if w.script.expanding == nil {
		w.script.expanding = map[string]bool{}
	}
	for _, n := range used {
		w.script.expanding[n] = true
	}
	ac := *cs
	ac.wrappers = append(cs.wrappers[:len(cs.wrappers):len(cs.wrappers)], Wrapper{Program: "alias", Args: used})
	cur, curSet := w.vars[cwdKey]
	w.payload("alias", b.String(), cs.nodes[0], cs.nodes[len(cs.nodes)-1], &ac, c)
	for _, n := range used {
		delete(w.script.expanding, n)
	}
	// The expansion runs in the shell itself: a cd in it moves the
	// shell (alias c='cd /'), or not when aliases are not expanded.
	if d, ok := joinDirs(cur, curSet, w.payloadEnd.dirs, w.payloadEnd.set); ok && (d != cur || !curSet) {
		w.setDirs(d)
	}
}
