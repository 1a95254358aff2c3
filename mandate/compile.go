package mandate

import (
	"path"
	"sort"
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
	for _, o := range obs {
		f := o.Facts
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
	m.Paths = rulesOf(generalisePaths(paths))
	m.Commands = rulesOf(cmds)
	m.Hosts = rulesOf(hosts)
	for _, n := range writes {
		m.MaxWritesPerRun = max(m.MaxWritesPerRun, n)
	}
	return m
}

func rulesOf(counts map[string]int) []Rule {
	rules := make([]Rule, 0, len(counts))
	for v, n := range counts {
		rules = append(rules, Rule{Value: v, Seen: n})
	}
	sort.Slice(rules, func(i, j int) bool { return rules[i].Value < rules[j].Value })
	return rules
}

// generalisePaths collapses directories holding CollapseThreshold or more
// distinct observed files into "DIR/**" and folds covered rules into the
// rule covering them.
func generalisePaths(counts map[string]int) map[string]int {
	byDir := map[string][]string{}
	for p := range counts {
		if strings.HasSuffix(p, "/**") || climbs(p) {
			continue
		}
		d := path.Dir(p)
		switch d {
		case ".", "/", "~", "$HOME", "":
			continue
		}
		byDir[d] = append(byDir[d], p)
	}
	out := map[string]int{}
	for p, n := range counts {
		out[p] = n
	}
	for d, files := range byDir {
		if len(files) < CollapseThreshold {
			continue
		}
		sum := 0
		for _, f := range files {
			sum += out[f]
			delete(out, f)
		}
		out[d+"/**"] += sum
	}
	// Fold rules covered by a broader "DIR/**" rule into the outermost one.
	keys := make([]string, 0, len(out))
	for p := range out {
		keys = append(keys, p)
	}
	sort.Strings(keys)
	for _, p := range keys {
		if c := outermostCover(p, out); c != "" {
			out[c] += out[p]
			delete(out, p)
		}
	}
	return out
}

// outermostCover returns the outermost "DIR/**" rule in rules, other than p
// itself, that covers p, or "".
func outermostCover(p string, rules map[string]int) string {
	if climbs(p) {
		return ""
	}
	target := strings.TrimSuffix(p, "/**")
	for i := 0; i < len(target); i++ {
		if target[i] != '/' {
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
