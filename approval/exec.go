package approval

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// StageExec is the stage of a decision made at the sandbox's exec gate.
const StageExec Stage = "exec"

// StageProtected is the stage of a decision made at the sandbox's
// creation gate: a repository made mid-run (docs/workspace.md).
const StageProtected Stage = "protected-path"

// ExecRequest is one exec seen by a sandbox's exec gate: the argument
// vectors it may run as (the observed argv first; see sandbox.ExecEvent)
// and where it runs.
type ExecRequest struct {
	Argvs   [][]string
	Profile string
	Cwd     string // the workspace, for the analyser
	Home    string // the user's home directory, for the analyser
}

// ExecCall is the terminal call during which execs were refused.
type ExecCall struct {
	Profile  string
	Session  string
	Platform Platform
	Job      string
	Command  string // the call's own text
}

// ExecBlocked is one refused exec, as the sandbox reported it.
type ExecBlocked struct {
	Argv   []string
	Rule   string
	Reason string
}

// ExecRecorder is implemented by a MandateHook that records execs refused
// at the gate as drift of the call's job (package mandate's Hook does).
type ExecRecorder interface {
	RecordExec(ctx context.Context, call MandateCall, argv, reason string) (driftID string, err error)
}

// ExecRefusal is the error of a refused exec.
type ExecRefusal struct {
	Rules  []string
	Reason string
}

func (e *ExecRefusal) Error() string { return e.Reason }

// Rule returns the id of the rule that refused the exec.
func (e *ExecRefusal) Rule() string {
	if len(e.Rules) > 0 {
		return e.Rules[0]
	}
	return ""
}

// Is makes errors.Is(err, ErrDenied) hold.
func (e *ExecRefusal) Is(target error) bool { return target == ErrDenied }

// maxExecText is the size limit of an exec's command text (ExecText): the
// kernel's default limit on an exec's argv and environment together
// (ARG_MAX, a quarter of the 8 MiB stack: 2 MiB), quoted, which can at
// most quadruple it (a single quote becomes four bytes). A long linker line is
// analysed whole rather than refused at the 128 KiB of a terminal call.
const maxExecText = 4 * (2 << 20)

// CheckExec is the exec gate's check: each argument vector, shell-quoted
// into a command text, gets the same analysis as a terminal call, and the
// exec is refused (an *ExecRefusal) when any of them meets the hardline
// floor or one of the profile's deny globs. The approval tier is not
// consulted (the call was approved as a whole; nobody can be asked
// mid-exec), nor the mandate. A vector the analyser cannot check (over the
// size limit, maxExecText) is refused. CheckExec records nothing, so that it costs
// little on every exec of a build: the caller reports the refusals of a
// call with RecordExecBlocks once the call is over.
func (e *Engine) CheckExec(req ExecRequest) error {
	prof, err := e.profile(req.Profile, req.Cwd)
	if err != nil {
		return &ExecRefusal{Reason: err.Error()}
	}
	for _, argv := range req.Argvs {
		text := ExecText(argv)
		a, err := Analyze(text, AnalyzeOptions{Home: req.Home, Cwd: req.Cwd, MaxBytes: maxExecText})
		if err != nil || a == nil || a.Script == nil {
			why := "unparseable"
			if err != nil {
				why = err.Error()
			} else if a != nil && a.ParseErr != "" {
				why = a.ParseErr
			}
			return &ExecRefusal{Reason: fmt.Sprintf("the exec gate could not analyse %s: %s", clip(text), why)}
		}
		if a.Verdict == TierHardline {
			return &ExecRefusal{Rules: ruleIDs(a.Findings, TierHardline), Reason: "blocked by the hardline floor: " + describe(a.Findings, TierHardline)}
		}
		if f, ok := e.opts.Deny(prof.Approvals.Deny, a); ok {
			return &ExecRefusal{Rules: []string{f.Rule}, Reason: fmt.Sprintf("%s (profile %s)", f.Description, prof.Name)}
		}
	}
	return nil
}

// RecordExecBlocks audits each exec refused during call, and in a job
// records it as drift (when the mandate hook is an ExecRecorder). It
// returns the decisions, with their drift ids.
func (e *Engine) RecordExecBlocks(ctx context.Context, call ExecCall, blocks []ExecBlocked) []Decision {
	var out []Decision
	for _, b := range blocks {
		d := Decision{ID: newID(), Stage: StageExec, DecidedBy: "exec gate", Time: e.opts.Now().UTC(),
			Profile: e.profileName(call.Profile), Session: call.Session, Platform: call.Platform, Job: call.Job,
			Reason: b.Reason}
		if b.Rule != "" {
			d.Rules = []string{b.Rule}
		}
		d.Command = e.redact(d.Profile, ExecText(b.Argv))
		d.Message = "refused at the exec gate: " + d.Command + " (" + d.Reason + ")"
		if rec, ok := e.opts.Mandate.(ExecRecorder); ok && call.Job != "" {
			id, err := rec.RecordExec(ctx, MandateCall{Profile: d.Profile, Session: call.Session, Job: call.Job,
				Platform: call.Platform, Command: e.redact(d.Profile, call.Command)}, d.Command, d.Reason)
			if err != nil {
				e.log.Error("recording an exec block as drift", "job", call.Job, "err", err)
			}
			d.DriftID = id
		}
		if err := e.audit.Append(ctx, d); err != nil {
			e.log.Error("appending to the audit log", "id", d.ID, "err", err)
		}
		out = append(out, d)
	}
	return out
}

// CreateBlocked is one creation of a repository the sandbox's creation
// gate refused (a .git, or a HEAD outside a git directory).
type CreateBlocked struct {
	Op     string // the system call: mkdir, rename, symlink, link, mknod, open
	Path   string // the name as the sandboxed process passed it
	Reason string
}

// RecordCreateBlocks audits each creation refused during call (stage
// "protected-path", decided by "creation gate") and returns the decisions.
// They are not drift: no mandate rule lifts a protected path.
func (e *Engine) RecordCreateBlocks(ctx context.Context, call ExecCall, blocks []CreateBlocked) []Decision {
	var out []Decision
	for _, b := range blocks {
		d := Decision{ID: newID(), Stage: StageProtected, DecidedBy: "creation gate", Time: e.opts.Now().UTC(),
			Profile: e.profileName(call.Profile), Session: call.Session, Platform: call.Platform, Job: call.Job,
			Reason: b.Reason, Command: e.redact(e.profileName(call.Profile), call.Command)}
		d.Message = fmt.Sprintf("refused at the creation gate: %s %s (%s)", b.Op, strconv.Quote(b.Path), b.Reason)
		if err := e.audit.Append(ctx, d); err != nil {
			e.log.Error("appending to the audit log", "id", d.ID, "err", err)
		}
		out = append(out, d)
	}
	return out
}

// StageLandlock is the stage of a decision recording an access the
// kernel's Landlock ruleset (the job's enforced paths family) refused.
const StageLandlock Stage = "landlock"

// PathRefusal is one access the kernel refused, as the sandbox reported
// it.
type PathRefusal struct {
	Path string
	// Addr is, for a TCP connect the kernel refused, its address
	// ("IP:port"; sandbox.PathRefused.Addr), and Path is empty.
	Addr string
	// Op is what the refused call did, for a refusal of the mount plan
	// (sandbox.PathRefused.Op: unlink, chmod, rename, ...); empty for
	// Landlock's, which its blockers describe.
	Op       string
	Blockers []string
}

// PathRecorder is implemented by a MandateHook that records the kernel's
// refusals under a job's enforced mandate as drift (package mandate's
// Hook does).
type PathRecorder interface {
	RecordPathRefused(ctx context.Context, call MandateCall, path, op, blockers string) (driftID string, err error)
}

// ConnectRecorder is implemented by a MandateHook that records the TCP
// connects the kernel refused under a job's enforced mandate as drift in
// the hosts family (package mandate's Hook does).
type ConnectRecorder interface {
	RecordConnectRefused(ctx context.Context, call MandateCall, addr string) (driftID string, err error)
}

// RecordPathRefusals audits each access the kernel refused during call
// and, in a job, records it as drift through the mandate hook (a refused
// connect in the hosts family, any other in the paths family). It
// returns one decision a refusal, with its drift id.
func (e *Engine) RecordPathRefusals(ctx context.Context, call ExecCall, refused []PathRefusal) []Decision {
	var out []Decision
	for _, p := range refused {
		blockers := strings.Join(p.Blockers, ",")
		d := Decision{ID: newID(), Stage: StageLandlock, DecidedBy: "kernel (landlock)", Time: e.opts.Now().UTC(),
			Profile: e.profileName(call.Profile), Session: call.Session, Platform: call.Platform, Job: call.Job,
			Rules: []string{RuleMandate}, Reason: "outside the job's mandate: the kernel refused " + blockers}
		d.Command = e.redact(d.Profile, call.Command)
		mc := MandateCall{Profile: d.Profile, Session: call.Session, Job: call.Job, Platform: call.Platform, Command: d.Command}
		var record func() (string, error)
		if p.Addr != "" {
			d.Message = "refused by the kernel: a connect to " + p.Addr + " is outside the job's mandate (" + blockers + ")"
			if rec, ok := e.opts.Mandate.(ConnectRecorder); ok {
				record = func() (string, error) { return rec.RecordConnectRefused(ctx, mc, p.Addr) }
			}
		} else {
			d.Paths = []string{e.redact(d.Profile, p.Path)}
			what := d.Paths[0]
			if p.Op != "" {
				what = p.Op + " of " + what
			}
			d.Message = "refused by the kernel: " + what + " is outside the job's mandate (" + blockers + ")"
			if rec, ok := e.opts.Mandate.(PathRecorder); ok {
				record = func() (string, error) { return rec.RecordPathRefused(ctx, mc, d.Paths[0], p.Op, blockers) }
			}
		}
		if record != nil && call.Job != "" {
			id, err := record()
			if err != nil {
				e.log.Error("recording a kernel refusal as drift", "job", call.Job, "err", err)
			}
			d.DriftID = id
		}
		if err := e.audit.Append(ctx, d); err != nil {
			e.log.Error("appending to the audit log", "id", d.ID, "err", err)
		}
		out = append(out, d)
	}
	return out
}

// ExecText is argv as a shell command text that the analyser reads back
// as exactly those words, argv[0] as the program: a first word that the
// shell would read as a reserved word ("if", "!") or an assignment
// ("X=1") is quoted, as the shell then takes it for a command name.
func ExecText(argv []string) string {
	words := make([]string, len(argv))
	for i, a := range argv {
		switch {
		case a != "" && strings.Trim(a, bareChars) == "" && !(i == 0 && (syntax.IsKeyword(a) || strings.ContainsRune(a, '='))):
			words[i] = a
		default:
			// Any other byte, invalid UTF-8 included, is quoted ($'\xad'):
			// a word the parser cannot read would hide the whole argv.
			q, err := syntax.Quote(a, syntax.LangBash)
			if err != nil {
				// Not representable (a NUL byte, which no argv holds):
				// a word no rule matches, which the parser rejects.
				q = "$'\\x00" + strings.ReplaceAll(a, "'", "\\'") + "'"
			}
			words[i] = q
		}
	}
	return strings.Join(words, " ")
}

// bareChars are the bytes an exec's word may hold unquoted.
const bareChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-"

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
