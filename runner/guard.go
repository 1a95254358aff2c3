package runner

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/tether-dev/tether/config"
)

// GuardConfig sets the loop guardrail thresholds of one turn. A threshold
// of 0 takes the default. Each counter warns at its Warn count, refuses
// further matching calls at Block, and at Halt refuses every call for the
// rest of the turn when hard stops are on.
type GuardConfig struct {
	// Identical failing calls (same tool, same arguments): default 2/3/5.
	IdenticalWarn, IdenticalBlock, IdenticalHalt int
	// Failures of one tool, whatever the arguments: default 3/5/8.
	ToolWarn, ToolBlock, ToolHalt int
	// Identical calls with identical results, success or not (no
	// progress): default 3/4/6.
	RepeatWarn, RepeatBlock, RepeatHalt int
	// InvalidTurns is how many consecutive batches of only invalid calls
	// end the turn: default 3.
	InvalidTurns int
	// HardStop turns halting on. Nil means on for unattended platforms
	// and off for attended ones (where a person can intervene).
	HardStop *bool
}

// guard returns the guardrail thresholds of profile: Runner.Guard with
// the profile's guardrails (config.Guardrails) over it.
func (r *Runner) guard(profile string) GuardConfig {
	c := r.Guard
	if r.Config == nil {
		return c
	}
	p, ok := r.Config.Profile(profile)
	if !ok {
		return c
	}
	g := p.Guardrails
	set := func(v *int, x int) {
		if x > 0 {
			*v = x
		}
	}
	for _, th := range []struct {
		t                 config.Threshold
		warn, block, halt *int
	}{
		{g.IdenticalFailures, &c.IdenticalWarn, &c.IdenticalBlock, &c.IdenticalHalt},
		{g.ToolFailures, &c.ToolWarn, &c.ToolBlock, &c.ToolHalt},
		{g.NoProgress, &c.RepeatWarn, &c.RepeatBlock, &c.RepeatHalt},
	} {
		set(th.warn, th.t.Warn)
		set(th.block, th.t.Block)
		set(th.halt, th.t.Halt)
	}
	set(&c.InvalidTurns, g.InvalidBatches)
	if g.HardStop != nil {
		v := *g.HardStop
		c.HardStop = &v
	}
	return c
}

func (c GuardConfig) withDefaults() GuardConfig {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&c.IdenticalWarn, 2)
	def(&c.IdenticalBlock, 3)
	def(&c.IdenticalHalt, 5)
	def(&c.ToolWarn, 3)
	def(&c.ToolBlock, 5)
	def(&c.ToolHalt, 8)
	def(&c.RepeatWarn, 3)
	def(&c.RepeatBlock, 4)
	def(&c.RepeatHalt, 6)
	def(&c.InvalidTurns, 3)
	return c
}

// Turn holds the loop guardrail counters of one turn (the model's calls
// between two user messages, over any number of batches). It is safe for
// concurrent use.
type Turn struct {
	cfg      GuardConfig
	hardStop bool

	// fingerprint returns the workspace's current fingerprint
	// (workspaceFingerprint); nil until Watch.
	fingerprint func() string

	mu        sync.Mutex
	root      string            // the watched workspace; guarded by mu
	after     map[string]string // fingerprint after each counted call, by Key; guarded by mu
	identical map[string]int    // failing calls by Key; guarded by mu
	tool      map[string]int    // failures by tool name
	repeat    map[string]int    // calls by Key+result
	invalid   int               // consecutive all-invalid batches
	halted    string            // why the turn halted, "" when it has not
}

// NewTurn returns the counters of a new turn. unattended says nobody can
// intervene (hard stops default on).
func NewTurn(cfg GuardConfig, unattended bool) *Turn {
	cfg = cfg.withDefaults()
	hard := unattended
	if cfg.HardStop != nil {
		hard = *cfg.HardStop
	}
	return &Turn{cfg: cfg, hardStop: hard, identical: map[string]int{}, tool: map[string]int{}, repeat: map[string]int{},
		after: map[string]string{}}
}

// Halted returns why the turn was halted, or "".
func (t *Turn) Halted() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.halted
}

// Batch records whether a batch had only invalid calls and reports
// whether the turn must end early.
func (t *Turn) Batch(allInvalid bool) (end bool, reason string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !allInvalid {
		t.invalid = 0
		return false, ""
	}
	t.invalid++
	if t.invalid >= t.cfg.InvalidTurns {
		return true, fmt.Sprintf("%d consecutive batches had only invalid calls; the turn ends here", t.invalid)
	}
	return false, ""
}

// Watch makes the turn watch the workspace root: a call whose workspace
// changed since it last counted (another call, a background process or a
// person changed, added or removed a file) starts its identical-failure
// and no-progress counts afresh, as after a landed file mutation.
func (t *Turn) Watch(root string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.root != root {
		t.root = root
		clear(t.after)
		t.fingerprint = func() string { return workspaceFingerprint(root) }
	}
}

// changed reports whether the workspace differs from what it was after
// c last counted. It scans the workspace outside t.mu.
func (t *Turn) changed(c *Call) bool {
	t.mu.Lock()
	prev, counted := t.after[c.Key]
	fp := t.fingerprint
	t.mu.Unlock()
	return counted && fp != nil && fp() != prev
}

// Before returns a refusal when a guardrail stops c before it runs.
func (t *Turn) Before(c *Call) *Result {
	changed := t.changed(c)
	t.mu.Lock()
	defer t.mu.Unlock()
	if changed {
		t.forget(c.Key)
	}
	refuse := func(rule, msg string) *Result {
		r := refused(GateGuardrail, rule, msg)
		r.CallID, r.Tool, r.Effect = c.ID, c.Name, EffectNone
		return &r
	}
	if t.halted != "" {
		return refuse("guardrail.halt", "the turn was halted ("+t.halted+"); nothing more runs in this turn")
	}
	if n := t.identical[c.Key]; n >= t.cfg.IdenticalBlock {
		return refuse("guardrail.identical-failures", fmt.Sprintf("this exact call already failed %d times in this turn; it was not run again. Change the approach.", n))
	}
	if n := t.tool[c.Name]; n >= t.cfg.ToolBlock {
		return refuse("guardrail.tool-failures", fmt.Sprintf("%s already failed %d times in this turn; it is blocked for the rest of the turn", c.Name, n))
	}
	for k, n := range t.repeat {
		if n >= t.cfg.RepeatBlock && len(k) > len(c.Key) && k[:len(c.Key)] == c.Key && k[len(c.Key)] == 0 {
			return refuse("guardrail.no-progress", fmt.Sprintf("this exact call returned the same result %d times in this turn; it was not run again", n))
		}
	}
	return nil
}

// After counts r (the result of c) and returns r with any warning; it may
// halt the turn. Refusals, blocked and pending calls never count as
// failures. A file mutation that landed resets the per-call counters
// (identical failures, no progress): the workspace changed, so running
// the same call again is a new attempt (the fix-and-retest loop), not a
// loop. The per-tool failure count stays.
func (t *Turn) After(c *Call, r Result) Result {
	if r.Class == ClassRefused || r.Class == ClassBlocked || r.Class == ClassPending {
		return r
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if r.Effect == EffectLanded {
		clear(t.identical)
		clear(t.repeat)
	}
	if fp := t.fingerprint; fp != nil && (r.Class == ClassFailed || t.after[c.Key] != "" || t.repeatOf(c.Key) > 0) {
		// What the workspace is once the call is over (its own writes
		// included): only a later change resets its counts.
		t.mu.Unlock()
		now := fp()
		t.mu.Lock()
		t.after[c.Key] = now
	}
	var warn []string
	halt := ""
	if r.Class == ClassFailed {
		t.identical[c.Key]++
		t.tool[c.Name]++
		n, m := t.identical[c.Key], t.tool[c.Name]
		switch {
		case n >= t.cfg.IdenticalHalt:
			halt = fmt.Sprintf("the same call failed %d times", n)
		case n >= t.cfg.IdenticalWarn:
			warn = append(warn, fmt.Sprintf("this exact call has failed %d times in this turn; at %d it will be refused", n, t.cfg.IdenticalBlock))
		}
		switch {
		case m >= t.cfg.ToolHalt:
			halt = fmt.Sprintf("%s failed %d times", c.Name, m)
		case m >= t.cfg.ToolWarn:
			warn = append(warn, fmt.Sprintf("%s has failed %d times in this turn; at %d it will be blocked", c.Name, m, t.cfg.ToolBlock))
		}
	}
	out, _ := json.Marshal(struct {
		C Class
		O map[string]any
	}{r.Class, r.Output})
	rk := c.Key + "\x00" + string(out)
	t.repeat[rk]++
	if n := t.repeat[rk]; n >= t.cfg.RepeatHalt {
		halt = fmt.Sprintf("the same call returned the same result %d times", n)
	} else if n >= t.cfg.RepeatWarn {
		warn = append(warn, fmt.Sprintf("this call returned the same result %d times in this turn (no progress); at %d it will be refused", n, t.cfg.RepeatBlock))
	}
	if halt != "" {
		if t.hardStop {
			t.halted = halt
			warn = append(warn, "the turn is halted: "+halt+"; nothing more runs in this turn")
		} else {
			warn = append(warn, "loop detected: "+halt+"; stop and change the approach")
		}
	}
	for i, w := range warn {
		if i == 0 && r.Warning == "" {
			r.Warning = w
		} else {
			r.Warning += "; " + w
		}
	}
	return r
}

// forget drops the per-call counts of key (identical failures, no
// progress).
//
// Preconditions: t.mu is held.
func (t *Turn) forget(key string) {
	delete(t.identical, key)
	delete(t.after, key)
	for k := range t.repeat {
		if len(k) > len(key) && k[:len(key)] == key && k[len(key)] == 0 {
			delete(t.repeat, k)
		}
	}
}

// repeatOf returns how many times key was counted with one result.
//
// Preconditions: t.mu is held.
func (t *Turn) repeatOf(key string) int {
	n := 0
	for k, v := range t.repeat {
		if len(k) > len(key) && k[:len(key)] == key && k[len(key)] == 0 {
			n = max(n, v)
		}
	}
	return n
}
