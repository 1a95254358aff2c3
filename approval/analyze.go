package approval

import (
	"errors"

	"github.com/tether-dev/tether/shellparse"
)

// ErrTooLarge is returned by Analyze for commands over the size limit. Such
// commands are refused outright, never analysed in part.
var ErrTooLarge = shellparse.ErrTooLarge

// AnalyzeOptions gives the analyzer the facts it cannot know from the text.
// The zero value is valid: no home folding beyond "~" and "$HOME", no cwd.
type AnalyzeOptions struct {
	Home string // the user's home directory, folded to "~" (works for any HOME, including /root)
	Cwd  string // the working directory the command will run in
}

// Analyze parses command and applies the rule catalog. The error is non-nil
// only for input over the size limit (errors.Is(err, ErrTooLarge)); a command
// that does not parse yields an Analysis with Verdict TierApproval and
// ParseErr set, never allow.
//
// SCAFFOLD: the rule catalog replaces this first version.
func Analyze(command string, opts AnalyzeOptions) (*Analysis, error) {
	s, err := shellparse.Parse(command, shellparse.Options{})
	if errors.Is(err, shellparse.ErrTooLarge) {
		return nil, err
	}
	a := &Analysis{Command: command, Script: s}
	if err != nil {
		a.Verdict = TierApproval
		a.ParseErr = err.Error()
		a.Findings = append(a.Findings, Finding{Rule: "approval.unparseable", Tier: TierApproval,
			Description: "command does not parse", Text: command, Span: shellparse.Span{End: len(command)}})
	}
	return a, nil
}
