package main

import (
	"context"
	"errors"

	"github.com/tether-dev/tether/config"
	"github.com/tether-dev/tether/runner"
	"github.com/tether-dev/tether/sandbox"
)

// runInPool runs a tether run command in a sandbox of the daemon's pool
// when a daemon serves this state root and cgroup prefix and has a pool
// for exactly this run: the same configuration (runner.PolicyDigest), the
// profile's workspace, the same sandbox placement and profile limits
// (flags that narrow the policy give another placement). gate is the
// approval decision: nothing runs before it approved, and a refusal is
// returned as is (ok true: nothing ran, and nothing will). It returns
// ok false when nothing ran and the caller builds its own sandbox (no
// daemon, no such pool, none ready); the daemon's exec gate checks every
// exec as the cold path's does, with the same configuration.
func runInPool(ctx context.Context, sb *sandbox.Runner, conf *config.Config, pl placement, c sandbox.Command, gate func() error) (res *sandbox.Result, ok bool, err error) {
	if !sandbox.Poolable(pl.cfg) {
		return nil, false, nil
	}
	req := sandbox.PoolRequest{CgroupPrefix: sb.CgroupPrefix, Profile: sb.Profile, Policy: runner.PolicyDigest(conf),
		Spec: sandbox.SessionSpec{Config: pl.cfg, ProfileLimits: pl.profLimits},
		Args: c.Args, Shell: c.Shell, Timeout: pl.cfg.Limits.Timeout, OutputBytes: pl.cfg.Limits.OutputBytes,
		Stdin: c.Stdin != nil}
	// The approval runs while the daemon takes the sandbox; the command
	// runs only once it approved.
	res, err = sandbox.RunPooled(ctx, sb.StateRoot, req, gate, c.Stdin, c.Stdout, c.Stderr)
	if errors.Is(err, sandbox.ErrPoolEmpty) {
		return nil, false, nil
	}
	return res, true, err
}
