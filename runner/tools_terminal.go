package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tether-dev/tether/approval"
	"github.com/tether-dev/tether/config"
	"github.com/tether-dev/tether/rootfs"
	"github.com/tether-dev/tether/sandbox"
)

// schemaTerminal is built on first use, not at init (see schemaReadFile).
var schemaTerminal = sync.OnceValue(func() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"command":    map[string]any{"type": "string", "description": "Shell command (bash syntax) to run in the workspace."},
			"timeout":    map[string]any{"type": "integer", "description": "Seconds before the command is stopped (at most the profile's limit).", "minimum": 1.0, "x-coerce-number": true},
			"background": map[string]any{"type": "boolean", "description": "Start the command in the background of the session's sandbox and return at once."},
			"session":    map[string]any{"type": "boolean", "description": "Run in the session's persistent sandbox (default true when the call belongs to a session)."},
		},
		"required":             []any{"command"},
		"additionalProperties": false,
	}
})

func terminalTool() Tool {
	return Tool{Name: "terminal", Toolset: "terminal", Kind: KindTerminal, Schema: schemaTerminal(), Handler: terminal, Decided: true,
		Description: "Run a shell command in the profile's sandbox, in the workspace. Returns stdout, stderr and exit_code."}
}

// Builtins returns a registry holding the built-in tools: terminal and
// process (toolset "terminal"), read_file, write_file, patch and
// search_files (toolset "files").
func Builtins() *Registry {
	r := NewRegistry()
	for _, t := range append([]Tool{terminalTool(), processTool()}, fileTools()...) {
		if err := r.Register(t); err != nil {
			panic(err) // the built-in names are distinct
		}
	}
	return r
}

func terminal(ctx context.Context, env *Env, c *Call) Result {
	r := env.Runner
	pol, err := TerminalScopeFrom(ctx)
	if err != nil {
		return refused(GatePlacement, "placement.terminal-policy", err.Error()+"; nothing ran")
	}
	if r.Engine == nil {
		return refused(GateAuthorization, "authorization.unavailable", "no approval engine is configured; nothing ran")
	}
	command := argString(c.Args, "command")
	d, err := predecided(ctx, c)
	if errors.Is(err, errNotPredecided) {
		d, err = decideTerminal(ctx, env, pol, command)
	}
	if err != nil {
		return fromDecision(d)
	}
	dd := d
	dd.Analysis = nil

	background := argBool(c.Args, "background")
	useSession := env.Session != "" && r.Sessions != nil
	if v, ok := c.Args["session"].(bool); ok {
		useSession = useSession && v
	}
	if background && !useSession {
		res := failed("background commands need a session sandbox (create a session first); nothing ran", nil)
		res.Ran, res.Decision = false, &dd
		return res
	}
	timeout := pol.Limits.Timeout.D()
	if t, ok := argInt(c.Args, "timeout"); ok && time.Duration(t)*time.Second < timeout {
		timeout = time.Duration(t) * time.Second
	}
	cmdEnv, err := CommandEnv(pol, env.Secrets, r.lookupEnv())
	if err != nil {
		return refused(GatePlacement, "placement.secret-scope", err.Error()+"; nothing ran")
	}

	var res Result
	if pol.Backend == config.BackendHost {
		if background {
			res = failed("background commands need the sandbox backend; nothing ran", nil)
			res.Ran = false
		} else {
			res = runHost(ctx, env, command, cmdEnv, timeout, int64(pol.Limits.Output))
		}
	} else {
		res = runSandbox(ctx, env, pol, command, cmdEnv, timeout, useSession, background, KernelPolicy(d.MandatePaths, env.Root, pol.Network.Mode == config.NetworkProxy))
	}
	if res.Decision == nil {
		res.Decision = &dd
	}
	return res
}

// decideTerminal runs the approval engine on a terminal command of env.
func decideTerminal(ctx context.Context, env *Env, pol TerminalPolicy, command string) (approval.Decision, error) {
	home, _ := os.UserHomeDir()
	// Behind the egress proxy the hosts a command contacts are seen and
	// enforced at run time; the mandate does not guess them from its text.
	proxied := pol.Backend != config.BackendHost && pol.Network.Mode == config.NetworkProxy
	return env.Runner.Engine.Decide(ctx, approval.Request{Command: command, Profile: env.Profile.Name, Session: env.Session,
		Platform: env.Platform, Job: env.Job, Cwd: env.Root, Home: home, HostsAtRunTime: proxied})
}

func (r *Runner) lookupEnv() func(string) (string, bool) {
	if r.LookupEnv != nil {
		return r.LookupEnv
	}
	return os.LookupEnv
}

// SandboxConfig translates a profile's terminal policy into the sandbox
// config of one command in workspace root (canonical, absolute) with
// environment cmdEnv (CommandEnv), hiding the paths hide (tether's own
// config and state). It is the one translation: the daemon, the MCP
// server and tether run all place commands with it. The sandbox itself
// freezes the workspace's protected paths (package protect), so a command
// cannot plant hooks or rc files. The profile's terminal.mounts become
// binds (mountBinds). Proxy network mode starts as no network
// here; runSandbox joins the command to its egress namespace (egress.go).
func SandboxConfig(pol TerminalPolicy, root string, cmdEnv []string, timeout time.Duration, hide []string) (sandbox.Config, error) {
	layout, err := rootfs.Layout{}, error(nil)
	if pol.Rootfs != "" {
		layout, err = rootfs.Parse(pol.Rootfs)
		if err != nil {
			return sandbox.Config{}, fmt.Errorf("%w: rootfs %s: %w", ErrTerminalPolicyUnavailable, pol.Rootfs, err)
		}
	}
	cfg := sandbox.Config{
		Rootfs:    layout,
		Workspace: root,
		Env:       withDefaultEnv(cmdEnv),
		Network:   sandbox.NetworkNone,
		// Each sandbox's own budget inside the profile's (profLimits in
		// runSandbox): one session or client cannot starve another.
		Limits: sandbox.Limits{
			MemoryBytes: int64(pol.Limits.SandboxMemory),
			Pids:        int64(pol.Limits.SandboxPids),
			CPUs:        pol.Limits.CPUs,
			Timeout:     timeout,
			OutputBytes: int64(pol.Limits.Output),
			TmpfsBytes:  int64(pol.Limits.Tmpfs),
			DiskBytes:   int64(pol.Limits.Disk),
		},
	}
	if pol.Network.Mode == config.NetworkHost {
		cfg.Network, cfg.AllowHostNetwork = sandbox.NetworkHost, true
	}
	// tether's own config and state are hidden in the sandbox when they
	// lie in the workspace (sandbox.Config.Hide).
	cfg.Hide = hide
	cfg.NoExec = refusedProgramFiles
	// The profile's extra mounts, checked on the host as it is now: one
	// translation for one-shot and session sandboxes alike.
	if cfg.Binds, err = mountBinds(pol.Mounts, root, hide); err != nil {
		return sandbox.Config{}, fmt.Errorf("%w: terminal.mounts: %w", ErrTerminalPolicyUnavailable, err)
	}
	return cfg, nil
}

// withDefaultEnv is env on top of sandbox.DefaultEnv (PATH, HOME=/tmp,
// LANG): a command gets a PATH and a HOME even when the profile passes
// nothing through; env's entries win.
func withDefaultEnv(env []string) []string {
	out := make([]string, 0, len(sandbox.DefaultEnv)+len(env))
	for _, kv := range sandbox.DefaultEnv {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.ContainsFunc(env, func(e string) bool { return strings.HasPrefix(e, k+"=") }) {
			out = append(out, kv)
		}
	}
	return append(out, env...)
}

// ProfileLimits are the limits of the profile's whole cgroup, which every
// sandbox of the profile shares (sandbox.Runner.ProfileLimits).
func ProfileLimits(pol TerminalPolicy) sandbox.Limits {
	return sandbox.Limits{MemoryBytes: int64(pol.Limits.Memory), Pids: int64(pol.Limits.Pids), CPUs: pol.Limits.CPUs}
}

// runSandbox runs command in the profile's sandbox (the session's when
// useSession), confined by landlock when the job's mandate is enforced
// (KernelPolicy; nil confines nothing).
func runSandbox(ctx context.Context, env *Env, pol TerminalPolicy, command string, cmdEnv []string, timeout time.Duration, useSession, background bool, landlock *sandbox.Landlock) Result {
	r := env.Runner
	pl, err := r.place(env, pol, cmdEnv, timeout)
	if err != nil {
		return refused(GatePlacement, "placement.terminal-policy", err.Error()+"; nothing ran")
	}
	pl.Config.Landlock = landlock
	// A job whose mandate observes gets the kernel's view of the call as
	// evidence; other sandboxes do not pay for it.
	pl.Config.Observe = env.observing(ctx)
	cfg := pl.Config
	var stdout, stderr bytes.Buffer
	cmd := sandbox.Command{Shell: command, Stdout: &stdout, Stderr: &stderr}
	profLimits := pl.ProfileLimits
	var res *sandbox.Result
	if useSession {
		spec := sandbox.SessionSpec{Config: cfg, ProfileLimits: profLimits, Options: sandbox.SessionOptions{
			PersistCwd: pol.PersistCwd == nil || *pol.PersistCwd, IdleTimeout: time.Duration(pol.LifetimeSeconds) * time.Second}}
		// The per-command timeout is an ExecOptions field: the session's
		// spec must stay the same from call to call.
		spec.Config.Limits.Timeout = pol.Limits.Timeout.D()
		// A live session keeps the sandbox it was created with; only a
		// new one takes the current spec.
		sess, ok := r.Sessions.Lookup(pol.Profile, env.Session)
		if !ok {
			sess, err = openSession(ctx, env, pol, spec)
			if err != nil {
				return notRun(fmt.Sprintf("opening the session sandbox: %v; nothing ran", err))
			}
		}
		if !reflect.DeepEqual(sess.Spec().Config.Landlock, landlock) {
			// Its processes hold the ruleset they started with (the
			// kernel can only narrow it): a session opened under another
			// mandate, or none, must not run this job's call.
			return notRun("the session's sandbox was opened under another version of the job's mandate (or none); close the session (tether sessions close) to start one under the current version; nothing ran")
		}
		if err := beginSessionEgress(ctx, env, pol, sess); err != nil {
			return notRun(fmt.Sprintf("setting up network egress: %v; nothing ran", err))
		}
		if background {
			bg, err := sess.Start(sandbox.Command{Shell: command})
			if err != nil {
				return notRun(fmt.Sprintf("starting the background command: %v; nothing ran", err))
			}
			return succeeded(fmt.Sprintf("started in the background as process %d", bg.ID()),
				map[string]any{"background": true, "process_id": bg.ID()})
		}
		res, err = sess.Exec(ctx, cmd, sandbox.ExecOptions{Timeout: timeout, OutputBytes: int64(pol.Limits.Output)})
		if res == nil {
			// The session may have closed while the command ran: it may
			// have had effects, so this is not "nothing ran".
			return failed(fmt.Sprintf("running in the session sandbox: %v; the command may have partly run", err), nil)
		}
	} else {
		res, err = r.oneShot(ctx, env, pl, cmd, nil)
		if res == nil {
			return notRun(fmt.Sprintf("%v; nothing ran", err))
		}
	}
	if cfg.Observe && (len(res.Accesses) > 0 || res.AccessesLost > 0) {
		env.recordRuntime(ctx, command, res, pol.Network.Mode == config.NetworkProxy)
	}
	out := commandResult(res.ExitCode, stdout.String(), stderr.String(), res.TimedOut, res.OOMKilled, res.OutputTruncated, res.Duration, res.NotEnforced)
	if res.DiskLimitHit {
		out.Output["disk_limit_hit"] = true
		out.Message += "; the workspace reached its disk limit (limits.disk): writes beyond it failed"
	}
	if len(res.CreateBlocked) > 0 {
		createBlocked(ctx, env, command, res.CreateBlocked, &out)
	}
	if len(res.ExecBlocked) > 0 {
		out = execBlocked(ctx, env, command, res.ExecBlocked, out)
	}
	if len(res.PathsRefused) > 0 {
		out = pathsRefused(ctx, env, command, res.PathsRefused, out)
	}
	return out
}

func notRun(msg string) Result {
	r := failed(msg, nil)
	r.Ran = false
	r.Gate = GateExecution
	return r
}

func commandResult(code int, stdout, stderr string, timedOut, oom, truncated bool, dur time.Duration, notEnforced []string) Result {
	out := map[string]any{"exit_code": code, "stdout": stdout, "stderr": stderr,
		"timed_out": timedOut, "oom_killed": oom, "output_truncated": truncated, "duration_ms": dur.Milliseconds()}
	if len(notEnforced) > 0 {
		out["not_enforced"] = notEnforced
	}
	switch {
	case timedOut:
		return failed("the command timed out and was stopped", out)
	case oom:
		return failed("the command was killed for exceeding the memory limit", out)
	case code != 0:
		return failed(fmt.Sprintf("the command exited with status %d", code), out)
	}
	return succeeded("the command succeeded", out)
}

// capWriter keeps at most max bytes.
type capWriter struct {
	buf       *bytes.Buffer
	max       int64
	truncated *bool
}

func (w capWriter) Write(p []byte) (int, error) {
	room := w.max - int64(w.buf.Len())
	if room <= 0 {
		*w.truncated = true
		return len(p), nil
	}
	if int64(len(p)) > room {
		*w.truncated = true
		w.buf.Write(p[:room])
		return len(p), nil
	}
	return w.buf.Write(p)
}

// runHost runs command directly on the host (backend: host): no
// isolation, as the profile asked, but the same environment, cwd, timeout
// and output cap.
func runHost(ctx context.Context, env *Env, command string, cmdEnv []string, timeout time.Duration, maxOut int64) Result {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	truncated := false
	if maxOut <= 0 {
		maxOut = 1 << 20
	}
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", command)
	cmd.Dir, cmd.Env = env.Root, cmdEnv
	cmd.Stdout = capWriter{&stdout, maxOut / 2, &truncated}
	cmd.Stderr = capWriter{&stderr, maxOut / 2, &truncated}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	start := time.Now()
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
		if code < 0 {
			code = 137
		}
	case err != nil:
		return notRun(fmt.Sprintf("starting the command: %v; nothing ran", err))
	}
	return commandResult(code, stdout.String(), stderr.String(), ctx.Err() == context.DeadlineExceeded, false, truncated, time.Since(start), nil)
}
