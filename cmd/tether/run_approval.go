package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/tether-dev/tether/approval"
	"github.com/tether-dev/tether/config"
	"github.com/tether-dev/tether/mandate"
	"github.com/tether-dev/tether/runner"
	"github.com/tether-dev/tether/sandbox"
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
// not run the command (refused, usage error, sandbox failure), or cannot
// say how it ended: MayHaveRun when it was handed to a pooled sandbox and
// the result was lost (sandbox.ErrResultLost). Either way there is no
// status of the command's to pass through, so the exit is exitWrapper.
type errorJSON struct {
	ExitCode   int      `json:"exit_code"` // always exitWrapper
	Error      string   `json:"error"`
	Refused    bool     `json:"refused"`
	MayHaveRun bool     `json:"may_have_run,omitempty"`
	Stage      string   `json:"stage,omitempty"`
	Reason     string   `json:"reason,omitempty"`
	Rules      []string `json:"rules,omitempty"`
	Hint       string   `json:"hint,omitempty"`
}

// writeErrorJSON prints err as tether run's --json error document.
func writeErrorJSON(w io.Writer, err error) {
	doc := errorJSON{ExitCode: exitWrapper, Error: err.Error(), MayHaveRun: errors.Is(err, sandbox.ErrResultLost)}
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
// words. Neither or both, or an argument that cannot be quoted (a NUL
// byte), is a usage error.
func commandText(shell string, args []string) (string, error) {
	switch {
	case shell != "" && len(args) > 0:
		return "", usageErr("give either -c 'SHELL STRING' or -- PROGRAM ARGS, not both")
	case shell == "" && len(args) == 0:
		return "", usageErr("nothing to run: give -- PROGRAM [ARG...] or -c 'SHELL STRING' (see tether run --help)")
	}
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

// runPipeline is the pipeline of tether run and tether shell: the one
// every entry point assembles (runner.NewPipeline), with the terminal as
// the cli platform's route when there is one (without one, approval-tier
// commands are denied; see --help) and the mandate store opened only for
// a job's run, so an ordinary tether run pays nothing for it. The caller
// must Close it.
type runPipeline struct {
	*runner.Pipeline
	platform approval.Platform
	prompter *approval.Prompter // nil: nobody can be asked
}

func newRunPipeline(f approvalFlags, cfg *config.Config, sb *sandbox.Runner) (*runPipeline, error) {
	platform, err := approval.ParsePlatform(f.platform)
	if err != nil {
		return nil, usageErr("--platform: %v", err)
	}
	if f.job != "" && !mandate.ValidJob(f.job) {
		return nil, usageErr("--job %q is not a job name (letters, digits, '_', '.', '-')", f.job)
	}
	rp := &runPipeline{platform: platform}
	// Internal errors (an audit or evidence record that could not be
	// stored) are said on stderr.
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	opts := runner.PipelineOptions{Config: cfg, Sandbox: *sb, Mandates: runner.MandatesForJob, Job: f.job, Yolo: f.yolo, Logger: log}
	if platform == approval.PlatformCLI {
		// Ask on the controlling terminal, never on the command's stdin.
		if p, err := approval.OpenPrompter(); err == nil {
			rp.prompter, opts.Prompter = p, p
		}
	}
	if rp.Pipeline, err = runner.NewPipeline(opts); err != nil {
		rp.closePrompter()
		return nil, fmt.Errorf("assembling the pipeline: %w", err)
	}
	return rp, nil
}

func (rp *runPipeline) closePrompter() {
	if rp.prompter != nil {
		rp.prompter.Close()
	}
}

// Close closes the pipeline and the terminal prompter.
func (rp *runPipeline) Close() error {
	defer rp.closePrompter()
	return rp.Pipeline.Close()
}

// refusalOf is the refusal of a command the engine did not allow (d), with
// the next step when a question could not be asked on the cli platform.
func (rp *runPipeline) refusalOf(d approval.Decision, err error, yolo bool) *refusal {
	if !errors.Is(err, approval.ErrDenied) {
		return &refusal{Stage: string(approval.StageInternal), Reason: err.Error()}
	}
	r := &refusal{Stage: string(d.Stage), Reason: d.Reason, Rules: d.Rules}
	if d.Stage == approval.StageRoute && rp.prompter == nil && rp.platform == approval.PlatformCLI {
		r.Hint = refusalHint(d, yolo)
	}
	return r
}
