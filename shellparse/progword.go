package shellparse

import (
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/tether-dev/tether/grammar"
	"mvdan.cc/sh/v3/syntax"
)

// Command words bash expands without running anything. A program word that
// is not literal is opaque (approval), but two of its expansions are known
// statically, and what they run is analysed too so that a hardline command
// behind them is found:
//
//   - Brace expansion comes first and makes words of the alternatives:
//     "{rm,-rf,~}" is the command rm -rf ~ (tilde expansion follows, so
//     the home), "{reboot,}" is reboot.
//   - A glob in the program word is matched against the file system, which
//     the analysis does not see; its base name is matched against the
//     names of the programs the grammar and the shell tables know
//     ("/usr/sbin/rebo?t", "/s*/reboot"), and each match is analysed in
//     its place: the strictest one decides. A pattern matching more than
//     maxGlobPrograms names is left opaque.

// maxGlobPrograms bounds the candidate programs of a globbed command word.
const maxGlobPrograms = 16

// knownPrograms are the program names a globbed command word is matched
// against, sorted.
var knownPrograms = sync.OnceValue(func() []string {
	var out []string
	for _, s := range grammar.Programs() {
		out = append(out, s.Name)
		out = append(out, s.Aliases...)
	}
	for n := range shells() {
		out = append(out, n)
	}
	for n := range interpreters() {
		out = append(out, n)
	}
	slices.Sort(out)
	return slices.Compact(out)
})

// staticProgram analyses the command lines a non-literal program word at
// word i may expand to without running code, as payloads of the command.
func (w *walker) staticProgram(cs *cmdState, i int, c ctx) {
	pw := cs.words[i]
	if !pw.Glob || pw.Unknown || i >= len(cs.nodes) || cs.nodes[i] == nil {
		return
	}
	var rest strings.Builder
	for _, wd := range cs.words[i+1:] {
		rest.WriteByte(' ')
		rest.WriteString(wd.Raw)
	}
	span := w.stmtSpan(cs.stmt)
	if words := braceWords(cs.nodes[i]); words != nil {
		w.payloadAt("", strings.Join(words, " ")+rest.String(), span, cs, c)
		return
	}
	base := path.Base(pw.Value)
	if !strings.ContainsAny(base, "*?[") {
		// "/s*/reboot": the directory is globbed, the name is not.
		if strings.ContainsAny(pw.Value, "*?[") {
			w.payloadAt("", shellQuote(base)+rest.String(), span, cs, c)
		}
		return
	}
	var found []string
	for _, n := range knownPrograms() {
		if ok, _ := path.Match(base, n); ok {
			found = append(found, n)
			if len(found) > maxGlobPrograms {
				return
			}
		}
	}
	for _, n := range found {
		w.payloadAt("", shellQuote(n)+rest.String(), span, cs, c)
	}
}

// maxBraceWords bounds the words a brace expansion of a program word makes.
const maxBraceWords = 64

// braceWords returns the source text of the words bash's brace expansion
// makes of sw, or nil when sw has no brace expansion or one this does not
// expand (a {x..y} sequence, more than maxBraceWords words). mvdan's
// expand package has brace expansion too, but it imports os/exec, which
// the analysis packages must not.
func braceWords(sw *syntax.Word) []string {
	cp := *sw
	cp.Parts = slices.Clone(sw.Parts)
	if !syntax.SplitBraces(&cp) {
		return nil
	}
	alts, ok := expandParts(cp.Parts)
	if !ok {
		return nil
	}
	var out []string
	pr := syntax.NewPrinter()
	for _, parts := range alts {
		var b strings.Builder
		if pr.Print(&b, &syntax.Word{Parts: parts}) != nil {
			return nil
		}
		if b.Len() > 0 { // an empty alternative vanishes: "{reboot,}" is reboot
			out = append(out, b.String())
		}
	}
	return out
}

// expandParts expands the first brace expression of parts, alternatives
// (themselves expanded) in order, then the rest.
func expandParts(parts []syntax.WordPart) ([][]syntax.WordPart, bool) {
	for i, p := range parts {
		be, ok := p.(*syntax.BraceExp)
		if !ok {
			continue
		}
		if be.Sequence {
			return nil, false
		}
		rest, ok := expandParts(parts[i+1:])
		if !ok {
			return nil, false
		}
		var out [][]syntax.WordPart
		for _, e := range be.Elems {
			inner, ok := expandParts(e.Parts)
			if !ok {
				return nil, false
			}
			for _, in := range inner {
				for _, r := range rest {
					if len(out) >= maxBraceWords {
						return nil, false
					}
					w := append(append(slices.Clone(parts[:i]), in...), r...)
					out = append(out, w)
				}
			}
		}
		return out, true
	}
	return [][]syntax.WordPart{parts}, true
}
