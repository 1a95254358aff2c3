package mandate

import (
	"strconv"
	"strings"
)

// Failure is one aspect of a call a mandate does not allow. Value is, in the
// family's rule syntax, the exact rule that would allow it.
type Failure struct {
	Family string `json:"family"`
	Value  string `json:"value"`
	// Unwritable reports that no rule text can express Value (a word
	// holding a space, a program starting with '='), so widening cannot
	// cover it.
	Unwritable bool `json:"unwritable,omitempty"`
	// Risky are, for a command, the options "-*" would not cover (see
	// CommandFact.Risky): a pattern widening names them.
	Risky []string `json:"risky,omitempty"`
	// Exec marks an exec the sandbox's exec gate refused (RecordExec):
	// Value is its argv, and no rule can widen it.
	Exec bool `json:"exec,omitempty"`
	// Op is, for a path the kernel refused under the mount plan
	// (RecordPathRefused), what the call did: unlink, rmdir, chmod,
	// chown, utimes, setxattr, truncate, open-write, rename, link, or a
	// creation (open, mkdir, mknod, symlink); "connect" for an address
	// the kernel refused (RecordConnectRefused). Empty otherwise.
	Op string `json:"op,omitempty"`
}

// Matcher answers whether calls fall inside one mandate. Build it once with
// NewMatcher; it is immutable and safe for concurrent use.
type Matcher struct {
	tools        map[string]bool
	paths        map[string]bool
	pathPrefixes map[string]bool // "dir/" for a "dir/**" rule
	// readPaths and readPrefixes are the read-only rules' ("read:").
	readPaths    map[string]bool
	readPrefixes map[string]bool
	hosts        map[string]bool
	hostSuffixes map[string]bool // ".domain" for a "*.domain" rule
	cmds         map[string][]cmdRule
	exact        map[string]bool
	maxWrites    int
	pathRules    []string // the paths family as written, for the kernel
	hostRules    []string // the hosts family as written, for the kernel
}

// NewMatcher compiles m for matching. m must come from Load or Compile (its
// rules valid); an invalid rule is skipped, which only ever narrows.
func NewMatcher(m *Mandate) *Matcher {
	x := &Matcher{
		tools: map[string]bool{}, paths: map[string]bool{}, pathPrefixes: map[string]bool{},
		readPaths: map[string]bool{}, readPrefixes: map[string]bool{},
		hosts: map[string]bool{}, hostSuffixes: map[string]bool{}, cmds: map[string][]cmdRule{},
		exact: map[string]bool{}, maxWrites: m.MaxWritesPerRun,
	}
	for _, r := range m.Tools {
		x.tools[r.Value] = true
	}
	for _, r := range m.Paths {
		x.pathRules = append(x.pathRules, r.Value)
		exact, prefixes := x.paths, x.pathPrefixes
		v, ro := PathMode(r.Value)
		if ro {
			exact, prefixes = x.readPaths, x.readPrefixes
		}
		if p, ok := treeDir(v); ok {
			prefixes[p+"/"] = true
		} else {
			exact[v] = true
		}
	}
	for _, r := range m.Hosts {
		x.hostRules = append(x.hostRules, r.Value)
		// A rule's port is the kernel's (KernelPorts): a host fact has
		// none, and the rule allows its host.
		h := ruleHost(r.Value)
		if d, ok := strings.CutPrefix(h, "*."); ok {
			x.hostSuffixes["."+d] = true
		} else {
			x.hosts[h] = true
		}
	}
	for _, r := range m.Commands {
		cr, err := parseCommandRule(r.Value)
		if err != nil {
			continue
		}
		if cr.isExact {
			x.exact[cr.exact] = true
			continue
		}
		cr.flags = canonicalRuleFlags(cr.head, cr.flags)
		k := headKey(cr.head)
		x.cmds[k] = append(x.cmds[k], cr)
	}
	return x
}

func headKey(head []string) string { return strings.Join(head, "\x00") }

// Evaluate returns every aspect of f the mandate does not allow, in family
// order; none means the call is inside the mandate. writesBefore is the
// number of writing calls the run already made.
func (x *Matcher) Evaluate(f Facts, writesBefore int) []Failure {
	var out []Failure
	if !x.tools[f.Tool] {
		out = append(out, Failure{Family: FamilyTools, Value: f.Tool})
	}
	for _, p := range f.Paths {
		if !x.pathAllowed(p) {
			out = append(out, Failure{Family: FamilyPaths, Value: p})
		}
	}
	for _, c := range f.Commands {
		if !x.commandAllowed(c) {
			v, ok := representable(c)
			if !ok {
				v = factRule(c).String()
			}
			out = append(out, Failure{Family: FamilyCommands, Value: v, Unwritable: !ok, Risky: c.Risky})
		}
	}
	for _, o := range f.Opaque {
		if !x.exact[o] {
			out = append(out, Failure{Family: FamilyCommands, Value: "=" + o})
		}
	}
	for _, h := range f.Hosts {
		if !x.hostAllowed(h) {
			out = append(out, Failure{Family: FamilyHosts, Value: h})
		}
	}
	if f.Wrote && writesBefore+1 > x.maxWrites {
		out = append(out, Failure{Family: FamilyMaxWrites, Value: strconv.Itoa(writesBefore + 1)})
	}
	return out
}

// pathAllowed reports whether the paths fact v is allowed: a read
// ("read:p") by any rule covering p, anything else by a read-write rule.
func (x *Matcher) pathAllowed(v string) bool {
	p, ro := PathMode(v)
	return pathIn(p, x.paths, x.pathPrefixes) || ro && pathIn(p, x.readPaths, x.readPrefixes)
}

// pathIn reports whether p (a rule path: a literal name "=NAME" is
// matched as NAME) is one of exact or lies beneath one of prefixes
// ("dir/").
func pathIn(p string, exact, prefixes map[string]bool) bool {
	if exact[p] {
		return true
	}
	name, _ := LiteralName(p)
	if climbs(name) {
		return false // only an exact rule may name a path that climbs
	}
	for i := 0; i < len(name); i++ {
		if name[i] == '/' && prefixes[name[:i+1]] && beneath(p, name[:i+1]) {
			return true
		}
	}
	return false
}

func (x *Matcher) hostAllowed(h string) bool {
	if x.hosts[h] {
		return true
	}
	for i := 0; i < len(h); i++ {
		if h[i] == '.' && i > 0 && x.hostSuffixes[h[i:]] {
			return true
		}
	}
	return false
}

func (x *Matcher) commandAllowed(c CommandFact) bool {
	r := factRule(c)
	for _, cr := range x.cmds[headKey(r.head)] {
		if !subset(c.Env, cr.env) {
			continue
		}
		// "-*" covers every option but the risky ones, which the rule
		// must name (by their canonical names, as Risky holds them).
		if cr.anyFlags && subset(c.Risky, cr.flags) || !cr.anyFlags && subset(c.Flags, cr.flags) {
			return true
		}
	}
	return false
}

// subset reports whether sorted a is a subset of sorted b.
func subset(a, b []string) bool {
	j := 0
	for _, s := range a {
		for j < len(b) && b[j] < s {
			j++
		}
		if j == len(b) || b[j] != s {
			return false
		}
		j++
	}
	return true
}
