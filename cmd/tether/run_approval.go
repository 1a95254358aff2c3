package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/tether-dev/tether/approval"
	"github.com/tether-dev/tether/config"
)

// exitRefused is tether run's status when the approval engine refused the
// command (hardline floor, deny rule, mandate, or no approval): nothing ran.
const exitRefused = 3

// approvalFlags are tether run's gate options.
type approvalFlags struct {
	configPath string
	platform   string
	session    string
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
// when there is a terminal) and decides command in profile prof. It
// returns the engine, which the sandbox's exec gate goes on asking (the
// caller must Close it), or an *exitError when nothing may run.
func authorize(ctx context.Context, stderr io.Writer, f approvalFlags, cfg *config.Config, prof *config.Profile, command, cwd string) (*approval.Engine, error) {
	platform, err := approval.ParsePlatform(f.platform)
	if err != nil {
		return nil, usageErr("--platform: %v", err)
	}
	opts := approval.Options{Yolo: f.yolo}
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
		Platform: platform, Cwd: cwd, Home: home})
	if errors.Is(err, approval.ErrDenied) {
		hint := ""
		if d.Stage == approval.StageRoute && opts.Prompter == nil && platform == approval.PlatformCLI {
			hint = " (no terminal to ask on: run it from a terminal, or pass --yolo to approve the approval tier)"
		}
		return nil, &exitError{Code: exitRefused, Err: fmt.Errorf("refused at %s: %s%s", d.Stage, d.Reason, hint)}
	}
	if err != nil {
		return nil, &exitError{Code: exitRefused, Err: err}
	}
	if d.Stage != approval.StageAnalysis {
		fmt.Fprintf(stderr, "tether: approved at %s by %s\n", d.Stage, d.DecidedBy)
	}
	keep = true
	return engine, nil
}
