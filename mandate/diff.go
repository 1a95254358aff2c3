package mandate

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tether-dev/tether/grammar"
)

// Reach kinds: what new reach an added rule grants (see RuleChange.Reach).
const (
	ReachNewTool = "new-tool" // a tool the approved mandate does not allow
	ReachNewHost = "new-host" // a host (or every subdomain) not allowed before
	ReachWrite   = "write"    // paths not writable before, or an option that writes a file
	ReachRead    = "read"     // paths not readable before (a read-only "read:" rule)
	ReachExec    = "exec"     // an option, program, variable or segment that executes code
	ReachConfig  = "config"   // an option that changes where the program reads its configuration
	ReachBroader = "broader"  // a pattern that covers (replaces) an exact rule
)

// Reach is one kind of new reach a rule grants, with what it is about.
type Reach struct {
	Kind   string `json:"kind"`
	Detail string `json:"detail"`
}

// RuleChange is a rule the pending version adds (or that replaces rules of
// the approved one), with what it newly allows among the job's recorded
// calls and the reach it grants.
type RuleChange struct {
	Rule     string `json:"rule"`
	Evidence int    `json:"evidence"`
	// Replaces lists the approved rules this one takes the place of (a
	// changed rule); empty for a plain addition.
	Replaces []string `json:"replaces,omitempty"`
	// NewlyAllows counts distinct recorded calls (by their redacted text)
	// that the approved version refuses, the pending one allows, and
	// that need this rule for at least one of their aspects.
	NewlyAllows int      `json:"newly_allows"`
	Examples    []string `json:"examples,omitempty"` // up to MaxPreviewExamples, oldest first
	Reach       []Reach  `json:"reach,omitempty"`
}

// FamilyDiff is one family's part of a Diff.
type FamilyDiff struct {
	Family    string       `json:"family"`
	Added     []RuleChange `json:"added"`
	Changed   []RuleChange `json:"changed"`
	Removed   []Rule       `json:"removed"`
	Unchanged []Rule       `json:"unchanged"`
}

// Diff is the pending version of a job against its approved (active)
// version: what approving it would change. Pending is 0 when there is no
// pending version (the diff is then empty); Approved is 0 in observe mode
// (everything pending is new).
type Diff struct {
	Job            string       `json:"job"`
	Approved       int          `json:"approved_version"`
	ApprovedSHA256 string       `json:"approved_sha256,omitempty"`
	Pending        int          `json:"pending_version"`
	PendingSHA256  string       `json:"pending_sha256,omitempty"`
	Source         string       `json:"source,omitempty"` // how the pending version was made
	Families       []FamilyDiff `json:"families"`
	MaxWritesFrom  int          `json:"max_writes_per_run_from"`
	MaxWritesTo    int          `json:"max_writes_per_run_to"`
	// NewlyAllows counts the distinct recorded calls the approved version
	// refuses and the pending one allows; Examples shows up to
	// MaxPreviewExamples of them.
	NewlyAllows int      `json:"newly_allows"`
	Examples    []string `json:"examples,omitempty"`
	// Notes are the pending version's notes on evidence that made no
	// rule (Mandate.Notes: names tried that led to no file, files with
	// more than one name).
	Notes []string `json:"notes,omitempty"`
}

// Changes reports how many rules the diff adds, changes and removes.
func (d Diff) Changes() (added, changed, removed int) {
	for _, f := range d.Families {
		added += len(f.Added)
		changed += len(f.Changed)
		removed += len(f.Removed)
	}
	return
}

// RecordedCall is one recorded call as the diff sees it: its redacted text
// and its facts.
type RecordedCall struct {
	Text  string
	Facts Facts
}

// Diff compares the job's newest pending version with its active one and
// judges the added rules against every call recorded for the job.
func (s *Store) Diff(ctx context.Context, job string) (Diff, error) {
	return s.diff(ctx, s.db, job)
}

// Preconditions: q is the caller's transaction or the database.
func (s *Store) diff(ctx context.Context, q querier, job string) (Diff, error) {
	vs, err := s.versions(ctx, q, job)
	if err != nil {
		return Diff{}, err
	}
	var active, pending *Version
	for i := range vs {
		if vs[i].Active {
			active = &vs[i]
		}
		if vs[i].Status == StatusPending {
			pending = &vs[i] // the newest wins
		}
	}
	d := Diff{Job: job, Families: []FamilyDiff{}}
	from := &Mandate{Job: job}
	if active != nil {
		d.Approved, d.ApprovedSHA256 = active.Number, active.SHA256
		if from, err = Load([]byte(active.Text)); err != nil {
			return d, fmt.Errorf("loading approved %s v%d: %w", job, active.Number, err)
		}
	}
	if pending == nil {
		d.MaxWritesFrom, d.MaxWritesTo = from.MaxWritesPerRun, from.MaxWritesPerRun
		return d, nil
	}
	to, err := Load([]byte(pending.Text))
	if err != nil {
		return d, fmt.Errorf("loading pending %s v%d: %w", job, pending.Number, err)
	}
	calls, err := s.recordedCalls(ctx, q, job)
	if err != nil {
		return d, err
	}
	out := DiffMandates(from, to, calls)
	out.Job, out.Approved, out.ApprovedSHA256 = job, d.Approved, d.ApprovedSHA256
	out.Pending, out.PendingSHA256, out.Source = pending.Number, pending.SHA256, pending.Source
	out.Notes = textNotes(pending.Text)
	return out, nil
}

// textNotes returns the notes Marshal wrote in text: the comment lines
// before the first family.
func textNotes(text string) []string {
	var notes []string
	for _, line := range strings.Split(text, "\n") {
		if n, ok := strings.CutPrefix(line, "# "); ok {
			notes = append(notes, n)
		} else if strings.HasPrefix(line, FamilyTools+":") {
			break
		}
	}
	return notes
}

// recordedCalls returns every call recorded for job, oldest first, one per
// distinct redacted text and facts.
//
// Preconditions: q is the caller's transaction or the database.
func (s *Store) recordedCalls(ctx context.Context, q querier, job string) ([]RecordedCall, error) {
	rows, err := q.QueryContext(ctx, `SELECT call_text, facts FROM calls WHERE job = ? GROUP BY call_text, facts ORDER BY MIN(id)`, job)
	if err != nil {
		return nil, fmt.Errorf("reading recorded calls of %s: %w", job, err)
	}
	defer rows.Close()
	var out []RecordedCall
	for rows.Next() {
		var c RecordedCall
		var fj string
		if err := rows.Scan(&c.Text, &fj); err != nil {
			return nil, fmt.Errorf("reading recorded call: %w", err)
		}
		if err := json.Unmarshal([]byte(fj), &c.Facts); err != nil {
			continue // an unreadable record is never counted as allowed
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// DiffMandates compares to (pending) with from (approved) rule by rule and
// judges each added rule against calls (oldest first): the distinct calls
// it newly allows and the reach it grants. It is a pure function.
func DiffMandates(from, to *Mandate, calls []RecordedCall) Diff {
	d := Diff{Job: to.Job, Families: []FamilyDiff{}, MaxWritesFrom: from.MaxWritesPerRun, MaxWritesTo: to.MaxWritesPerRun}
	oldX, newX := NewMatcher(from), NewMatcher(to)
	type ruleRef struct{ fam, rule string }
	index := map[ruleRef]*RuleChange{}
	for _, fam := range Families {
		fd := FamilyDiff{Family: fam, Added: []RuleChange{}, Changed: []RuleChange{}, Removed: []Rule{}, Unchanged: []Rule{}}
		oldRules, newRules := *from.family(fam), *to.family(fam)
		inOld := map[string]bool{}
		for _, r := range oldRules {
			inOld[r.Value] = true
		}
		inNew := map[string]bool{}
		for _, r := range newRules {
			inNew[r.Value] = true
		}
		var removed []Rule
		for _, r := range oldRules {
			if !inNew[r.Value] {
				removed = append(removed, r)
			}
		}
		replaced := map[string]bool{}
		var changes []RuleChange
		for _, r := range newRules {
			if inOld[r.Value] {
				fd.Unchanged = append(fd.Unchanged, r)
				continue
			}
			rc := RuleChange{Rule: r.Value, Evidence: r.Seen}
			for _, o := range removed {
				if replaces(fam, r.Value, o.Value) {
					rc.Replaces = append(rc.Replaces, o.Value)
					replaced[o.Value] = true
				}
			}
			rc.Reach = reachOf(fam, r.Value, from, to, oldX)
			changes = append(changes, rc)
		}
		for _, r := range removed {
			if !replaced[r.Value] {
				fd.Removed = append(fd.Removed, r)
			}
		}
		for _, rc := range changes {
			if len(rc.Replaces) > 0 {
				fd.Changed = append(fd.Changed, rc)
			} else {
				fd.Added = append(fd.Added, rc)
			}
		}
		d.Families = append(d.Families, fd)
	}
	for i := range d.Families {
		fd := &d.Families[i]
		for j := range fd.Added {
			index[ruleRef{fd.Family, fd.Added[j].Rule}] = &fd.Added[j]
		}
		for j := range fd.Changed {
			index[ruleRef{fd.Family, fd.Changed[j].Rule}] = &fd.Changed[j]
		}
	}
	// Single-rule matchers of the new rules, to tell which of them a newly
	// allowed call needs.
	single := map[ruleRef]*Matcher{}
	for ref := range index {
		m := &Mandate{}
		*m.family(ref.fam) = []Rule{{Value: ref.rule}}
		single[ref] = NewMatcher(m)
	}
	refs := make([]ruleRef, 0, len(index))
	for ref := range index {
		refs = append(refs, ref)
	}
	slices.SortFunc(refs, func(a, b ruleRef) int { return strings.Compare(a.fam+"\x00"+a.rule, b.fam+"\x00"+b.rule) })
	seenText := map[string]bool{}
	seenByRule := map[ruleRef]map[string]bool{}
	for _, c := range calls {
		f := c.Facts
		f.Wrote = false // max_writes_per_run depends on the run
		if len(oldX.Evaluate(f, 0)) == 0 || len(newX.Evaluate(f, 0)) > 0 {
			continue
		}
		if !seenText[c.Text] {
			seenText[c.Text] = true
			d.NewlyAllows++
			if len(d.Examples) < MaxPreviewExamples {
				d.Examples = append(d.Examples, c.Text)
			}
		}
		refused := oldX.refusedAspects(f)
		for _, ref := range refs {
			x := single[ref]
			if !slices.ContainsFunc(refused, x.allowsAspect) {
				continue
			}
			if seenByRule[ref] == nil {
				seenByRule[ref] = map[string]bool{}
			}
			if seenByRule[ref][c.Text] {
				continue
			}
			seenByRule[ref][c.Text] = true
			rc := index[ref]
			rc.NewlyAllows++
			if len(rc.Examples) < MaxPreviewExamples {
				rc.Examples = append(rc.Examples, c.Text)
			}
		}
	}
	return d
}

// replaces reports whether new rule a of family fam takes the place of old
// rule b: a command rule for the same program and subcommand (and the
// same operands), or a path or host pattern covering b.
func replaces(fam, a, b string) bool {
	if fam == FamilyCommands {
		ra, err1 := parseCommandRule(a)
		rb, err2 := parseCommandRule(b)
		return err1 == nil && err2 == nil && !ra.isExact && !rb.isExact && slices.Equal(ra.head, rb.head)
	}
	return covers(fam, a, b)
}

// covers reports whether rule a of family fam allows everything rule b
// allows.
func covers(fam, a, b string) bool {
	if a == b {
		return true
	}
	switch fam {
	case FamilyPaths:
		// A read-only rule covers only reads; a read-write rule both.
		a, roA := PathMode(a)
		b, roB := PathMode(b)
		if roA && !roB {
			return false
		}
		if a == b {
			return true
		}
		d, ok := treeDir(a)
		if name, _ := LiteralName(b); !ok || climbs(name) {
			return false
		}
		return beneath(b, d+"/")
	case FamilyHosts:
		d, ok := strings.CutPrefix(a, "*.")
		if !ok || strings.HasPrefix(b, "=") {
			return false
		}
		return strings.HasSuffix(strings.TrimPrefix(b, "*."), "."+d)
	case FamilyCommands:
		ra, err1 := parseCommandRule(a)
		rb, err2 := parseCommandRule(b)
		if err1 != nil || err2 != nil || ra.isExact || rb.isExact || !slices.Equal(ra.head, rb.head) || !subset(rb.env, ra.env) {
			return false
		}
		switch {
		case !ra.anyFlags:
			return !rb.anyFlags && subset(rb.flags, ra.flags)
		case rb.anyFlags:
			return subset(rb.flags, ra.flags)
		}
		program, sub := ruleProgram(ra)
		for _, f := range rb.flags {
			if e, _ := optionEffect(program, sub, f); e != 0 && !slices.Contains(ra.flags, f) {
				return false
			}
		}
		return true
	}
	return false
}

// ruleProgram returns the program of a command rule and the words after it
// (its subcommand words and assignments).
func ruleProgram(r cmdRule) (string, []string) {
	for i, w := range r.head {
		if !isWrapperWord(w) || i == len(r.head)-1 {
			return w, r.head[i+1:]
		}
	}
	return r.head[0], nil
}

// isWrapperWord reports whether a head word is a peeled wrapper: one with
// bound arguments ("sudo(-u,bob)") or a program the command grammar
// describes as running another command ("nohup").
func isWrapperWord(w string) bool {
	if strings.HasSuffix(w, ")") && strings.Contains(w, "(") {
		return true
	}
	s := grammar.Lookup(w)
	return s != nil && s.Wrap != nil
}

// reachOf is what rule v of family fam, new in to, grants that from does
// not (x is from's matcher).
func reachOf(fam, v string, from, to *Mandate, x *Matcher) []Reach {
	var out []Reach
	add := func(kind, detail string) { out = append(out, Reach{Kind: kind, Detail: detail}) }
	broader := func(pattern bool) {
		if !pattern {
			return
		}
		var covered []string
		for _, m := range []*Mandate{from, to} {
			for _, r := range *m.family(fam) {
				if r.Value != v && covers(fam, v, r.Value) && !covers(fam, r.Value, v) && !slices.Contains(covered, r.Value) {
					covered = append(covered, r.Value)
				}
			}
		}
		switch {
		case len(covered) > 0:
			add(ReachBroader, "broader than "+strings.Join(covered, ", "))
		case fam == FamilyCommands:
			add(ReachBroader, "-* allows any option the command grammar does not mark as executing code, writing files or changing configuration")
		}
	}
	switch fam {
	case FamilyTools:
		if !x.tools[v] {
			add(ReachNewTool, "the tool "+v)
		}
	case FamilyPaths:
		p, ro := PathMode(v)
		d, pattern := treeDir(p)
		kind, verb := ReachWrite, "write"
		if ro {
			kind, verb = ReachRead, "read"
		}
		switch {
		case pattern && !slices.ContainsFunc(from.Paths, func(r Rule) bool { return covers(fam, r.Value, v) }):
			add(kind, "file tools and commands may "+verb+" anything below "+d)
		case !pattern && !x.pathAllowed(v):
			add(kind, "file tools and commands may "+verb+" "+p)
		}
		broader(pattern)
	case FamilyHosts:
		d, pattern := strings.CutPrefix(v, "*.")
		switch {
		case strings.HasPrefix(v, "="):
			add(ReachNewHost, "a host named by the argument text "+strings.TrimPrefix(v, "=")+", whatever it expands to")
		case pattern && !slices.ContainsFunc(from.Hosts, func(r Rule) bool { return covers(fam, r.Value, v) }):
			add(ReachNewHost, "every subdomain of "+d)
		case !pattern && !x.hostAllowed(v):
			add(ReachNewHost, v)
		}
		broader(pattern)
	case FamilyCommands:
		r, err := parseCommandRule(v)
		if err != nil {
			return nil
		}
		if r.isExact {
			add(ReachExec, "runs the opaque segment "+strconv.Quote(r.exact)+" verbatim: its effect cannot be known")
			return out
		}
		program, rest := ruleProgram(r)
		if programExecutes(program) {
			add(ReachExec, program+" runs code that its arguments or files choose")
		}
		for _, e := range r.env {
			if envExecutes(program, e) {
				add(ReachExec, "sets "+e+", which makes programs run code")
			}
		}
		for _, w := range rest {
			if name, val, ok := strings.Cut(w, "="); ok && isAssignment(w) {
				if envExecutes(program, name) {
					add(ReachExec, "assignment "+name+"="+val+" makes "+program+" run code")
				} else {
					add(ReachConfig, "assignment "+w+" changes what "+program+" does")
				}
			}
		}
		sub := subOf(rest)
		for _, f := range r.flags {
			// Each flag read on its own, as the program would read it
			// after its subcommand and as a global option before it (a
			// rule writes both after the subcommand words): a cluster
			// ("-rf") is its options. The union is reported.
			var e effect
			known := false
			for _, args := range [][]string{append(slices.Clone(sub), f), {f}} {
				inv := grammar.Parse(program, args)
				for _, o := range inv.Options {
					known = known || o.Known || inv.Spec == nil
					e |= effectOf(o.Effects | o.ValueEffects)
				}
			}
			if !known {
				add(ReachExec, "option "+f+" is not in the command grammar of "+program+": it may execute code, write files or read other configuration")
				continue
			}
			if e&effExec != 0 {
				add(ReachExec, "option "+f+" executes code")
			}
			if e&effWrite != 0 {
				add(ReachWrite, "option "+f+" writes a file or device")
			}
			if e&effConfig != 0 {
				add(ReachConfig, "option "+f+" changes where "+program+" reads its configuration")
			}
		}
		broader(r.anyFlags)
	}
	return out
}

// subOf drops assignments from the words after a rule's program.
func subOf(rest []string) []string {
	var out []string
	for _, w := range rest {
		if !isAssignment(w) {
			out = append(out, w)
		}
	}
	return out
}

// aspect is one thing about a call that one family's rules must allow.
type aspect struct {
	family string
	value  string       // tool, path, host, or opaque text
	cmd    *CommandFact // a command
}

// refusedAspects returns the aspects of f that x refuses (max writes aside).
func (x *Matcher) refusedAspects(f Facts) []aspect {
	var out []aspect
	if !x.tools[f.Tool] {
		out = append(out, aspect{family: FamilyTools, value: f.Tool})
	}
	for _, p := range f.Paths {
		if !x.pathAllowed(p) {
			out = append(out, aspect{family: FamilyPaths, value: p})
		}
	}
	for i := range f.Commands {
		if !x.commandAllowed(f.Commands[i]) {
			out = append(out, aspect{family: FamilyCommands, cmd: &f.Commands[i]})
		}
	}
	for _, o := range f.Opaque {
		if !x.exact[o] {
			out = append(out, aspect{family: FamilyCommands, value: o})
		}
	}
	for _, h := range f.Hosts {
		if !x.hostAllowed(h) {
			out = append(out, aspect{family: FamilyHosts, value: h})
		}
	}
	return out
}

// allowsAspect reports whether x allows one aspect of a call.
func (x *Matcher) allowsAspect(a aspect) bool {
	switch a.family {
	case FamilyTools:
		return x.tools[a.value]
	case FamilyPaths:
		return x.pathAllowed(a.value)
	case FamilyCommands:
		if a.cmd != nil {
			return x.commandAllowed(*a.cmd)
		}
		return x.exact[a.value]
	case FamilyHosts:
		return x.hostAllowed(a.value)
	}
	return false
}
