package mandate

import (
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
)

// CollapseThreshold is how many distinct observed files directly in one
// directory make Compile write "DIR/**" instead of each file.
const CollapseThreshold = 3

// Observation is one recorded call and the run it belonged to.
type Observation struct {
	Run   string
	Facts Facts
}

// Compile builds the mandate that allows exactly the observed calls, with
// paths generalised as the package documentation describes. The result
// depends only on the multiset of observations, never on their order.
// Commands whose rule cannot be written (a word holding a space, for
// example) are left out, so such calls stay outside the mandate.
func Compile(job string, obs []Observation) *Mandate {
	tools := map[string]int{}
	paths := map[string]int{}
	cmds := map[string]int{}
	hosts := map[string]int{}
	writes := map[string]int{}
	missing := map[string]int{}
	linked := map[string]bool{}
	for _, o := range obs {
		f := o.Facts
		for d, n := range f.Missing {
			missing[d] += n
		}
		for _, p := range f.Linked {
			linked[p] = true
		}
		if v, err := canonRule(FamilyTools, f.Tool); err == nil && !f.Runtime {
			tools[v]++
		}
		for _, p := range uniqSorted(f.Paths) {
			if v, err := canonRule(FamilyPaths, p); err == nil {
				paths[v]++
			}
		}
		once := map[string]bool{}
		for _, c := range f.Commands {
			if s, ok := representable(c); ok {
				once[s] = true
			}
		}
		for _, t := range f.Opaque {
			if v, err := canonRule(FamilyCommands, "="+t); err == nil {
				once[v] = true
			}
		}
		for s := range once {
			cmds[s]++
		}
		for _, h := range uniqSorted(f.Hosts) {
			if v, err := canonRule(FamilyHosts, h); err == nil {
				hosts[v]++
			}
		}
		if f.Wrote {
			writes[o.Run]++
		}
	}
	m := &Mandate{Job: job}
	m.Tools = rulesOf(tools)
	m.Paths = rulesOf(generaliseModes(paths, linked))
	m.Notes = compileNotes(missing, linked)
	m.Commands = rulesOf(cmds)
	m.Hosts = rulesOf(hosts)
	for _, n := range writes {
		m.MaxWritesPerRun = max(m.MaxWritesPerRun, n)
	}
	return m
}

// compileNotes are the comment lines of a compiled mandate about the
// evidence that made no rule: names tried that led to no file, and files
// touched by a name that is one of several (hard links).
func compileNotes(missing map[string]int, linked map[string]bool) []string {
	var notes []string
	for d, n := range missing {
		notes = append(notes, fmt.Sprintf("tried %d missing names in %s (failed opens: not evidence, no rule)", n, strconv.Quote(d)))
	}
	for p := range linked {
		notes = append(notes, fmt.Sprintf("no rule for %s: the file has more than one name (a hard link), and its other names are not evidence", strconv.Quote(p)))
	}
	sort.Strings(notes)
	return notes
}

func rulesOf(counts map[string]int) []Rule {
	rules := make([]Rule, 0, len(counts))
	for v, n := range counts {
		rules = append(rules, Rule{Value: v, Seen: n})
	}
	sort.Slice(rules, func(i, j int) bool { return rules[i].Value < rules[j].Value })
	return rules
}

// generaliseModes generalises a paths family whose values carry modes
// (pathmode.go). A directory holding CollapseThreshold or more distinct
// observed files, read or written, collapses:
// into "DIR/**" when that many of them were written, else into
// "read:DIR/**" beside its written files, which stay exact; reads never
// widen into writes. A rule covered by a broader one that allows as much
// (a read-write rule covers both modes) folds into the outermost. A
// directory holding one of linked (a file observed by one of several
// names) at any depth never collapses: its tree would grant the file by
// the name the evidence left out.
func generaliseModes(counts map[string]int, linked map[string]bool) map[string]int {
	ro, rw := map[string]int{}, map[string]int{}
	for v, n := range counts {
		if p, readOnly := PathMode(v); readOnly {
			ro[p] += n
		} else {
			rw[p] += n
		}
	}
	foldSame(ro, rw) // a file both read and written is a written file
	type dirFiles struct{ read, written []string }
	byDir := map[string]*dirFiles{}
	for i, m := range []map[string]int{ro, rw} {
		for p := range m {
			d, ok := collapsibleDir(p)
			if !ok {
				continue
			}
			if byDir[d] == nil {
				byDir[d] = &dirFiles{}
			}
			if i == 1 {
				byDir[d].written = append(byDir[d].written, p)
			} else {
				byDir[d].read = append(byDir[d].read, p)
			}
		}
	}
	move := func(files []string, from, to map[string]int, rule string) {
		for _, f := range files {
			to[rule] += from[f]
			delete(from, f)
		}
	}
	holdsLinked := func(d string) bool {
		for p := range linked {
			if strings.HasPrefix(p, d+"/") {
				return true
			}
		}
		return false
	}
	for d, f := range byDir {
		switch {
		case len(f.read)+len(f.written) < CollapseThreshold, holdsLinked(d):
		case len(f.written) >= CollapseThreshold:
			move(f.written, rw, rw, d+"/**")
			move(f.read, ro, rw, d+"/**")
		default:
			move(f.read, ro, ro, d+"/**")
		}
	}
	foldCovered(rw, rw)
	foldSame(ro, rw)
	foldCovered(ro, rw)
	foldCovered(ro, ro)
	out := map[string]int{}
	for p, n := range rw {
		out[pathValue(p, false)] += n
	}
	for p, n := range ro {
		out[pathValue(p, true)] += n
	}
	return out
}

// foldSame folds each read-only rule that is also a read-write rule
// into it.
func foldSame(ro, rw map[string]int) {
	for p, n := range ro {
		if _, ok := rw[p]; ok {
			rw[p] += n
			delete(ro, p)
		}
	}
}

// collapsibleDir returns the directory of an observed file that may
// collapse into "DIR/**": not a pattern, not climbing, not the workspace
// or "/" or home itself.
func collapsibleDir(p string) (string, bool) {
	if _, tree := treeDir(p); tree || climbs(p) {
		return "", false
	}
	name, literal := LiteralName(p)
	d := path.Dir(name)
	switch {
	case d == "." || d == "/" || d == "~" || d == "$HOME" || d == "":
		return "", false
	case literal && needsLiteral(d):
		// "=$X/a": the directory is a name no tree rule can write.
		return "", false
	}
	return d, true
}

// foldCovered folds each rule of rules that a broader "DIR/**" rule of
// covers (other than itself) covers into the outermost such rule. rules
// and covers may be the same map.
func foldCovered(rules, covers map[string]int) {
	keys := make([]string, 0, len(rules))
	for p := range rules {
		keys = append(keys, p)
	}
	sort.Strings(keys)
	for _, p := range keys {
		if c := outermostCover(p, covers); c != "" {
			covers[c] += rules[p]
			delete(rules, p)
		}
	}
}

// outermostCover returns the outermost "DIR/**" rule in rules, other than p
// itself, that covers p, or "".
func outermostCover(p string, rules map[string]int) string {
	name, _ := LiteralName(p)
	if climbs(name) {
		return ""
	}
	target := name
	if d, tree := treeDir(p); tree {
		target = d
	}
	for i := 0; i < len(target); i++ {
		if target[i] != '/' || !beneath(p, target[:i+1]) {
			continue
		}
		c := target[:i] + "/**"
		if i == 0 {
			c = "/**"
		}
		if c != p {
			if _, ok := rules[c]; ok {
				return c
			}
		}
	}
	return ""
}

func climbs(p string) bool {
	return p == ".." || strings.HasPrefix(p, "../") || strings.Contains(p, "/../") || strings.HasSuffix(p, "/..")
}
