package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/tether-dev/tether/approval"
	"github.com/tether-dev/tether/config"
	"github.com/tether-dev/tether/mandate"
	"github.com/tether-dev/tether/runner"
)

// refusal is the approval engine's (or the daemon's) refusal of a command:
// nothing ran. Hint is the next step the user can take, if any.
type refusal struct {
	Stage  string
	Reason string
	Rules  []string
	Hint   string
}

func (r *refusal) Error() string {
	msg := fmt.Sprintf("refused at %s: %s", r.Stage, r.Reason)
	if r.Hint != "" {
		msg += " (" + r.Hint + ")"
	}
	return msg
}

// errorJSON is the --json document of tether run when tether itself did
// not run the command (refused, usage error, sandbox failure).
type errorJSON struct {
	ExitCode int      `json:"exit_code"` // always exitWrapper
	Error    string   `json:"error"`
	Refused  bool     `json:"refused"`
	Stage    string   `json:"stage,omitempty"`
	Reason   string   `json:"reason,omitempty"`
	Rules    []string `json:"rules,omitempty"`
	Hint     string   `json:"hint,omitempty"`
}

// writeErrorJSON prints err as tether run's --json error document.
func writeErrorJSON(w io.Writer, err error) {
	doc := errorJSON{ExitCode: exitWrapper, Error: err.Error()}
	var r *refusal
	if errors.As(err, &r) {
		doc.Refused, doc.Stage, doc.Reason, doc.Rules, doc.Hint = true, r.Stage, r.Reason, r.Rules, r.Hint
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(doc) // stdout is gone: the exit status still says it
}

// refusalHint is the next step after decision d was refused on the CLI
// without a terminal to ask on ("" when there is none to give).
func refusalHint(d approval.Decision, yolo bool) string {
	switch {
	case d.Escalation != "":
		// Yolo, mode off and the allowlist do not answer an
		// escalation: only a person at a terminal can.
		return "run it from a terminal to answer the question; --yolo does not approve it"
	case !yolo:
		return "run it from a terminal, or pass --yolo to approve the approval tier"
	}
	return "run it from a terminal to answer the question"
}

// approvalFlags are tether run's gate options.
type approvalFlags struct {
	configPath string
	platform   string
	session    string
	job        string
	yolo       bool
}

// commandText is the shell text the engine decides on: the -c string, or
// the program and arguments quoted so the analyzer sees them as literal
// words. An argument that cannot be quoted (a NUL byte) is refused.
func commandText(shell string, args []string) (string, error) {
	if shell != "" {
		return shell, nil
	}
	quoted := make([]string, len(args))
	for i, a := range args {
		q, err := syntax.Quote(a, syntax.LangBash)
		if err != nil {
			return "", usageErr("argument %d cannot be passed through the shell analyzer: %v", i+1, err)
		}
		quoted[i] = q
	}
	return strings.Join(quoted, " "), nil
}

// runProfile loads the configuration and finds the profile a run uses;
// errors are usage errors (*exitError).
func runProfile(f approvalFlags, profile string) (*config.Config, *config.Profile, error) {
	cfg, err := config.Resolve(f.configPath)
	if err != nil {
		return nil, nil, &exitError{Code: exitUsage, Err: err}
	}
	prof, ok := cfg.Profile(profile)
	if !ok {
		return nil, nil, usageErr("unknown profile %q in %s", profile, cfg.Source)
	}
	return cfg, prof, nil
}

// authorize builds the approval engine of cfg (with a terminal prompter
// when there is a terminal, and the job's mandate store when not nil) and
// decides command in profile prof. It
// returns the engine, which the sandbox's exec gate goes on asking (the
// caller must Close it), or an *exitError when nothing may run.
// jobStore opens the mandate store of a run with --job (nil without):
// only a job's run pays for it. The store lives as long as this process:
// the engine, which the exec gate goes on asking, holds its hook.
func jobStore(f approvalFlags, cfg *config.Config) (*mandate.Store, error) {
	if f.job == "" {
		return nil, nil
	}
	if !mandate.ValidJob(f.job) {
		return nil, usageErr("--job %q is not a job name (letters, digits, '_', '.', '-')", f.job)
	}
	s, err := mandate.Open(cfg.StateDir, mandate.Options{})
	if err != nil {
		return nil, fmt.Errorf("opening the mandate store: %w", err)
	}
	return s, nil
}

func authorize(ctx context.Context, stderr io.Writer, f approvalFlags, cfg *config.Config, prof *config.Profile, store *mandate.Store, command, cwd string) (*approval.Engine, error) {
	platform, err := approval.ParsePlatform(f.platform)
	if err != nil {
		return nil, usageErr("--platform: %v", err)
	}
	// The daemon's engine options (secret redaction in the audit log and
	// questions, the mandate hook, with store: nil unless a job's run).
	opts := runner.EngineOptions(cfg, store, nil)
	opts.Yolo = f.yolo
	if platform == approval.PlatformCLI {
		// Ask on the controlling terminal, never on the command's stdin.
		// Without one, approval-tier commands are denied (see --help).
		if p, err := approval.OpenPrompter(); err == nil {
			defer p.Close()
			opts.Prompter = p
		}
	}
	engine, err := approval.NewEngine(cfg, opts)
	if err != nil {
		return nil, &exitError{Code: exitUsage, Err: err}
	}
	keep := false
	defer func() {
		if !keep {
			engine.Close()
		}
	}()
	home, _ := os.UserHomeDir()
	d, err := engine.Decide(ctx, approval.Request{Command: command, Profile: prof.Name, Session: f.session,
		Platform: platform, Job: f.job, Cwd: cwd, Home: home})
	if errors.Is(err, approval.ErrDenied) {
		r := &refusal{Stage: string(d.Stage), Reason: d.Reason, Rules: d.Rules}
		if d.Stage == approval.StageRoute && opts.Prompter == nil && platform == approval.PlatformCLI {
			r.Hint = refusalHint(d, f.yolo)
		}
		return nil, r
	}
	if err != nil {
		return nil, &refusal{Stage: string(approval.StageInternal), Reason: err.Error()}
	}
	if d.Stage != approval.StageAnalysis {
		fmt.Fprintf(stderr, "tether: approved at %s by %s\n", d.Stage, d.DecidedBy)
	}
	keep = true
	return engine, nil
}
