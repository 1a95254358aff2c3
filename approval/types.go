package approval

import "github.com/tether-dev/tether/shellparse"

// Tier is the strength of a rule or verdict, weakest first.
type Tier int

// Tiers. A verdict is the strongest tier among its findings.
const (
	TierAllow    Tier = iota // nothing found
	TierApproval             // a dangerous finding or an opaque segment: a person must approve
	TierHardline             // never runs, whoever approves
)

// String returns "allow", "approval" or "hardline".
func (t Tier) String() string {
	switch t {
	case TierAllow:
		return "allow"
	case TierApproval:
		return "approval"
	case TierHardline:
		return "hardline"
	}
	return "unknown"
}

// Finding is one rule that matched, with the source text that made it match.
type Finding struct {
	Rule        string          `json:"rule"`             // stable id, e.g. "hardline.fork-bomb"
	Tier        Tier            `json:"-"`                // the rule's tier
	Description string          `json:"description"`      // one line; also the approval key
	Text        string          `json:"text"`             // exact source text that matched
	Span        shellparse.Span `json:"span"`             // where Text sits in the top-level source
	Reason      string          `json:"reason,omitempty"` // extra detail, e.g. the parse error
}

// Analysis is the analyzer's verdict on one command string.
type Analysis struct {
	Command  string             `json:"command"`
	Verdict  Tier               `json:"-"`
	Safe     bool               `json:"safe"` // read-only by construction; implies Verdict == TierAllow
	Findings []Finding          `json:"findings"`
	Script   *shellparse.Script `json:"-"`                     // nil when the command did not parse
	ParseErr string             `json:"parse_error,omitempty"` // set when unparseable (Verdict is then TierApproval)
}
