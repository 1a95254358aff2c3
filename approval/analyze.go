package approval

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tether-dev/tether/shellparse"
)

// ErrTooLarge is returned by Analyze for commands over the size limit. Such
// commands are refused outright, never analysed in part.
var ErrTooLarge = shellparse.ErrTooLarge

// MaxCommandBytes is the size limit of one command string.
const MaxCommandBytes = shellparse.DefaultMaxBytes

// AnalyzeOptions gives the analyzer the facts it cannot know from the text.
// The zero value is valid: no home folding beyond "~" and "$HOME", no cwd.
type AnalyzeOptions struct {
	Home string // the user's home directory, folded to "~" (works for any HOME, including /root)
	Cwd  string // the working directory the command will run in; relative paths are resolved against it
	// MaxBytes is the size limit of the command; 0 means MaxCommandBytes.
	// CheckExec raises it for an exec's argv, which the kernel bounds
	// (maxExecText).
	MaxBytes int
}

// Analyze parses command and applies the rule catalog. The error is non-nil
// only for input over the size limit (errors.Is(err, ErrTooLarge)); a command
// that does not parse yields an Analysis with Verdict TierApproval and
// ParseErr set, never allow.
//
// Every simple command shellparse finds (including those inside payloads,
// substitutions and function bodies) goes through every rule; every opaque
// segment becomes one approval finding, so an allow verdict never coexists
// with an opaque segment. The verdict is the strongest finding's tier. Safe
// is set only when the verdict is allow and every command is in the safe
// class. Analyze is safe for concurrent use.
func Analyze(command string, opts AnalyzeOptions) (*Analysis, error) {
	return analyze(command, opts, 0, false)
}

// analyze analyses command; posix is set for a text whose commands run
// where POSIXLY_CORRECT may be in the environment (see posixMaySet).
func analyze(command string, opts AnalyzeOptions, depth int, posix bool) (an *Analysis, err error) {
	s, perr := parseCommand(command, opts.MaxBytes)
	if perr != nil && errors.Is(perr, shellparse.ErrTooLarge) {
		return nil, fmt.Errorf("analyzing command: %w", perr)
	}
	a := &analyzer{src: command, opts: opts, depth: depth}
	a.posix = posix || posixMaySet(command, s)
	if opts.Home != "" {
		a.home = cleanPath(opts.Home)
	}
	if opts.Cwd != "" && opts.Cwd[0] == '/' {
		a.cwd = foldHome(cleanPath(opts.Cwd), a.home)
	}
	an = &Analysis{Command: command}
	whole := shellparse.Span{Start: 0, End: len(command)}
	if perr != nil {
		an.ParseErr = perr.Error()
		a.hit(RuleUnparseable, command, whole)
		a.findings[len(a.findings)-1].Reason = an.ParseErr
	} else {
		an.Script = s
		a.script = s
		a.run()
	}

	if hasControlChars(command) {
		a.hit(RuleControlChars, command, whole)
	}
	if s != nil {
		for i := range s.Commands {
			if oddProgram(s.Commands[i].Program) {
				a.hit(RuleControlChars, s.Commands[i].Text, s.Commands[i].Span)
			}
		}
	}
	variantDiffers := false
	if v := normalizeVariant(command); v != command {
		variantDiffers = true
		if sub := a.sub(v); sub != nil {
			for _, f := range sub.Findings {
				if f.Rule != RuleUnparseable {
					a.hit(f.Rule, command, whole)
				}
			}
		}
	}

	an.Findings = a.findings
	for _, f := range a.findings {
		if f.Tier > an.Verdict {
			an.Verdict = f.Tier
		}
	}
	if s != nil && len(s.Opaque) > 0 && an.Verdict == TierAllow {
		// Unreachable by construction (each opaque segment is a finding);
		// kept so that a future change cannot break the invariant silently.
		an.Verdict = TierApproval
	}
	an.Safe = an.Verdict == TierAllow && s != nil && !variantDiffers && allSafe(s)
	return an, nil
}

// parseCommand runs shellparse, turning a panic inside it into a parse error so
// that a parser bug fails closed (approval) instead of crashing the caller.
func parseCommand(command string, maxBytes int) (s *shellparse.Script, err error) {
	defer func() {
		if r := recover(); r != nil {
			s, err = nil, fmt.Errorf("%s: %v", internalPanic, r)
		}
	}()
	return shellparse.Parse(command, shellparse.Options{MaxBytes: maxBytes})
}

// internalPanic prefixes the parse error recorded when shellparse panics.
const internalPanic = "internal error: shellparse panicked"

// allSafe reports whether the script has commands, all of them safe, and
// nothing opaque or self-defined.
func allSafe(s *shellparse.Script) bool {
	if len(s.Commands) == 0 || len(s.Opaque) > 0 || len(s.Functions) > 0 {
		return false
	}
	for i := range s.Commands {
		if !isSafeCommand(&s.Commands[i]) {
			return false
		}
	}
	return true
}

// posixVar makes glibc's getopt stop reading options at the first operand.
const posixVar = "POSIXLY_CORRECT"

// posixMaySet reports whether POSIXLY_CORRECT may be in the environment of
// the script's commands: the text names it, a command is given it, or a
// builtin that assigns or exports a variable is handed a name the analyzer
// cannot read ("export "$v"=1", "declare $(echo N)=1"). It errs towards
// yes: reading a script as if the variable were set only makes a dry-run
// option after an operand count for less (grammar.ParsePosix).
func posixMaySet(src string, s *shellparse.Script) bool {
	if strings.Contains(src, posixVar) {
		return true
	}
	if s == nil {
		return false
	}
	for i := range s.Commands {
		c := &s.Commands[i]
		for _, e := range c.Env {
			if e.Name == posixVar {
				return true
			}
		}
		switch c.Program {
		case "export", "declare", "typeset", "readonly", "local", "read", "mapfile", "readarray", "printf", "getopts":
			for _, w := range c.Args {
				name, _, _ := strings.Cut(w.Value, "=")
				if strings.HasPrefix(name, posixVar) || (!w.Literal && strings.ContainsAny(name, "$`")) {
					return true
				}
			}
		}
	}
	return false
}
