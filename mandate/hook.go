package mandate

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tether-dev/tether/approval"
	"github.com/tether-dev/tether/config"
)

// Hook plugs a Store into the approval engine (approval.Options.Mandate).
// It is safe for concurrent use when its fields are not changed after
// first use.
type Hook struct {
	// Store holds the mandates; nil blocks every call of a job.
	Store *Store
	// Violation returns a profile's interactive_violation ("block" or
	// "approve"), which applies to jobs without a setting of their own
	// (`tether mandate set`; see ResolveViolation); nil means "block" for
	// those.
	Violation func(profile string) string
	// Workspace returns the directory a profile's paths are relative to;
	// nil leaves paths as given.
	Workspace func(profile string) string
}

var _ approval.MandateHook = (*Hook)(nil)

// NewHook returns a Hook on s that takes each profile's
// interactive_violation and workspace (terminal.cwd) from cfg. A profile
// missing from cfg gets "block" and no workspace.
func NewHook(s *Store, cfg *config.Config) *Hook {
	return &Hook{
		Store: s,
		Violation: func(profile string) string {
			if p, ok := cfg.Profile(profile); ok && p.Mandate.InteractiveViolation == config.ViolationApprove {
				return "approve"
			}
			return "block"
		},
		Workspace: func(profile string) string {
			if p, ok := cfg.Profile(profile); ok {
				return p.Terminal.Cwd
			}
			return ""
		},
	}
}

// runMode maps where a call comes from to the run mode the mandate uses.
// Unattended platforms other than cron are treated like cron: nobody can
// be asked, so a call outside the mandate is only ever blocked. An unknown
// platform might be cron.
func runMode(p approval.Platform) (RunMode, string) {
	switch p {
	case approval.PlatformCLI, approval.PlatformGateway:
		return RunInteractive, ""
	case approval.PlatformCron:
		return RunCron, "platform:cron"
	case approval.PlatformWebhook, approval.PlatformAPI, approval.PlatformSingleQuery:
		return RunCron, "platform:" + string(p)
	}
	return RunUnknown, ""
}

// RunFor is the run a call of job in session (empty: none) from platform
// belongs to: the session is the run ("no-session" without one), and its
// mode comes from the platform (unattended platforms are cron-like).
func RunFor(job, session string, p approval.Platform) Run {
	mode, ident := runMode(p)
	run := Run{Job: job, ID: session, Mode: mode, CronIdentity: ident}
	if run.ID == "" {
		run.ID = "no-session"
	}
	return run
}

// CheckCall implements approval.MandateHook. A call without a job, or of a
// job in observe mode, is not applicable (and is recorded as an
// observation). The run id is the session (or "no-session").
func (h *Hook) CheckCall(ctx context.Context, call approval.MandateCall) (v approval.MandateVerdict) {
	if call.Job == "" {
		return approval.MandateVerdict{Outcome: approval.MandateNotApplicable}
	}
	defer func() {
		if p := recover(); p != nil {
			v = approval.MandateVerdict{Outcome: approval.MandateBlock, Reason: fmt.Sprintf("mandate evaluation failed: %v", p)}
		}
	}()
	if h.Store == nil {
		return approval.MandateVerdict{Outcome: approval.MandateBlock, Reason: "no mandate store is configured"}
	}
	run := RunFor(call.Job, call.Session, call.Platform)
	if h.Violation != nil {
		run.Violation = h.Violation(call.Profile)
	}
	c := Call{Tool: ToolTerminal, Command: call.Command, HostsAtRunTime: call.HostsAtRunTime}
	if call.Analysis != nil && call.Analysis.Script != nil {
		c.Script = call.Analysis.Script
	}
	if h.Workspace != nil {
		c.Workspace = h.Workspace(call.Profile)
	}
	d := h.Store.Check(ctx, run, c)
	// The engine prefixes "outside the job's mandate: ".
	v = approval.MandateVerdict{DriftID: d.DriftID, Reason: strings.TrimPrefix(d.Reason, "outside the mandate: "), Warning: d.Warning}
	switch {
	case d.Mode == "observe":
		v.Outcome = approval.MandateNotApplicable
	case d.Verdict == Allow:
		v.Outcome = approval.MandateAllow
	case d.Verdict == Escalate:
		v.Outcome = approval.MandateEscalate
	default:
		v.Outcome = approval.MandateBlock
	}
	if d.Mode == "enforce" && d.Paths != nil && (v.Outcome == approval.MandateAllow || v.Outcome == approval.MandateEscalate) {
		v.Paths = &approval.MandatePaths{Rules: d.Paths, Hosts: d.Hosts, Workspace: c.Workspace, Version: d.Version}
	}
	return v
}

// RecordPathRefused implements approval.PathRecorder: an access the
// kernel refused in a call of a job becomes drift in the paths family.
// Calls without a job record nothing.
func (h *Hook) RecordPathRefused(ctx context.Context, call approval.MandateCall, path, op, blockers string) (string, error) {
	if call.Job == "" {
		return "", nil
	}
	run, c, err := h.refusedCall(call)
	if err != nil {
		return "", err
	}
	return h.Store.RecordPathRefused(ctx, run, c, path, op, blockers)
}

// RecordConnectRefused implements approval.ConnectRecorder: a TCP connect
// the kernel refused in a call of a job becomes drift in the hosts family.
// Calls without a job record nothing.
func (h *Hook) RecordConnectRefused(ctx context.Context, call approval.MandateCall, addr string) (string, error) {
	if call.Job == "" {
		return "", nil
	}
	run, c, err := h.refusedCall(call)
	if err != nil {
		return "", err
	}
	return h.Store.RecordConnectRefused(ctx, run, c, addr)
}

// refusedCall is the run and the call a kernel refusal in call belongs to.
func (h *Hook) refusedCall(call approval.MandateCall) (Run, Call, error) {
	if h.Store == nil {
		return Run{}, Call{}, errors.New("recording a kernel refusal: no mandate store is configured")
	}
	mode, ident := runMode(call.Platform)
	run := Run{Job: call.Job, ID: call.Session, Mode: mode, CronIdentity: ident}
	if run.ID == "" {
		run.ID = "no-session"
	}
	c := Call{Tool: ToolTerminal, Command: call.Command}
	if h.Workspace != nil {
		c.Workspace = h.Workspace(call.Profile)
	}
	return run, c, nil
}

var _ approval.PathRecorder = (*Hook)(nil)
