package runner

import (
	"strings"

	"github.com/tether-dev/tether/approval"
)

// Class is what happened to a call, as the model and the host see it.
type Class string

// Classes.
const (
	// ClassRefused: a guardrail refused the call before authorization
	// (unknown tool, malformed arguments, a loop guardrail, no terminal
	// policy). Nothing ran. Never counted as a failure.
	ClassRefused Class = "refused"
	// ClassPending: the call needs an approval nobody has given yet (no
	// one could be asked, or no answer came in time). Nothing ran.
	ClassPending Class = "pending_approval"
	// ClassBlocked: authorization refused it (hardline floor, deny glob,
	// mandate, protected path, a person or policy said no). Nothing ran.
	ClassBlocked Class = "blocked"
	// ClassFailed: it ran and failed (non-zero exit, timeout, error).
	ClassFailed Class = "failed"
	// ClassSucceeded: it ran and succeeded.
	ClassSucceeded Class = "succeeded"
)

// Effect says whether a call changed anything.
type Effect string

// Effects.
const (
	EffectNone      Effect = "none"       // nothing ran, or a read-only tool ran
	EffectLanded    Effect = "landed"     // a file mutation verifiably landed
	EffectNotLanded Effect = "not_landed" // a file mutation ran but did not verifiably land
	EffectPossible  Effect = "possible"   // an effect-capable tool ran: it may have changed anything
)

// Gates, as named in results (DESIGN.md §1).
const (
	GateValidation    = "validation"
	GatePlacement     = "placement"
	GateAuthorization = "authorization"
	GateExecution     = "execution"
	GateGuardrail     = "guardrail"
	// GateExec: the sandbox's exec gate refused a program the command
	// executed (a script's, an interpreter's); the command ran until then.
	GateExec = "exec"
	// GateLandlock: the kernel refused an access outside the job's
	// enforced mandate (its paths family as a Landlock ruleset); the
	// command ran, with that access refused.
	GateLandlock = "landlock"
)

// Result is the structured outcome of one call. Message is what the model
// is told; the other fields are for the host and the logs.
type Result struct {
	CallID   string             `json:"call_id"`
	Tool     string             `json:"tool"`
	Class    Class              `json:"class"`
	Effect   Effect             `json:"effect"`
	Ran      bool               `json:"ran"`
	Gate     string             `json:"gate"`
	Rule     string             `json:"rule,omitempty"`
	Message  string             `json:"message"`
	Output   map[string]any     `json:"output,omitempty"`
	Warning  string             `json:"warning,omitempty"` // loop guardrail, unrecorded observation, unstored audit result
	Decision *approval.Decision `json:"decision,omitempty"`
}

// refused, blocked, failed and succeeded build results; Classify fills
// in the effect.
func refused(gate, rule, msg string) Result {
	return Result{Class: ClassRefused, Gate: gate, Rule: rule, Message: msg}
}

func blocked(rule, msg string) Result {
	return Result{Class: ClassBlocked, Gate: GateAuthorization, Rule: rule, Message: msg}
}

func failed(msg string, out map[string]any) Result {
	return Result{Class: ClassFailed, Gate: GateExecution, Ran: true, Message: msg, Output: out}
}

func succeeded(msg string, out map[string]any) Result {
	return Result{Class: ClassSucceeded, Gate: GateExecution, Ran: true, Message: msg, Output: out}
}

// fromDecision turns a denied approval decision into a result: pending
// when an approval was needed and nobody answered, blocked otherwise.
func fromDecision(d approval.Decision) Result {
	r := blocked("", d.Message)
	if len(d.Rules) > 0 {
		r.Rule = d.Rules[0]
	}
	if d.Stage == approval.StageRoute && unanswered(d) {
		r.Class = ClassPending
		r.Message = "approval needed and not given (" + d.Reason + "); nothing ran"
	}
	dd := d
	dd.Analysis = nil
	r.Decision = &dd
	return r
}

// unanswered reports whether a route decision carries no answer from
// anyone: the route failed, timed out or was unavailable. A route that
// answered sets DecidedBy to who answered ("gateway:…", "config:…",
// "mcp:user"), which differs from the route's own name.
func unanswered(d approval.Decision) bool {
	if strings.HasPrefix(d.DecidedBy, "config:") {
		return false // an unattended policy answered
	}
	return d.DecidedBy == d.Route || d.DecidedBy == "engine"
}

// Classify fills in r's effect from what the tool is and what it
// reported, and demotes a mutation that claims success without proof:
// write_file landed only with a numeric bytes_written, patch only with
// success: true. Tools without a known kind (plugins, MCP tools) are
// effect-capable: when they ran, their effect is "possible".
func Classify(t *Tool, r Result) Result {
	if (r.Gate == GateExec || r.Gate == GateLandlock) && r.Ran {
		// Blocked mid-run: what ran around the refused exec or access
		// may have changed anything.
		r.Effect = EffectPossible
		return r
	}
	if !r.Ran || r.Class == ClassRefused || r.Class == ClassBlocked || r.Class == ClassPending {
		r.Ran = false
		r.Effect = EffectNone
		return r
	}
	kind := KindEffect
	name := r.Tool
	if t != nil {
		kind, name = t.Kind, t.Name
	}
	switch kind {
	case KindRead:
		r.Effect = EffectNone
	case KindWrite:
		r.Effect = EffectPossible
		switch name {
		case "write_file":
			if _, ok := r.Output["bytes_written"].(int); ok && r.Class == ClassSucceeded {
				r.Effect = EffectLanded
			} else if _, ok := r.Output["bytes_written"].(float64); ok && r.Class == ClassSucceeded {
				r.Effect = EffectLanded
			} else {
				r.Effect = EffectNotLanded
			}
		case "patch":
			if ok, _ := r.Output["success"].(bool); ok && r.Class == ClassSucceeded {
				r.Effect = EffectLanded
			} else {
				r.Effect = EffectNotLanded
			}
		}
		if r.Effect == EffectNotLanded && r.Class == ClassSucceeded {
			r.Class = ClassFailed
			r.Message = "the tool reported success without proof that the change landed"
		}
	default:
		r.Effect = EffectPossible
	}
	return r
}
