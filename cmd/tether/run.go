package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	units "github.com/docker/go-units"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"

	"github.com/tether-dev/tether/approval"
	"github.com/tether-dev/tether/config"
	"github.com/tether-dev/tether/rootfs"
	"github.com/tether-dev/tether/runner"
	"github.com/tether-dev/tether/sandbox"
)

func init() { addCommand("run", newRunCmd) }

// runFlags are tether run's options.
type runFlags struct {
	profile, cwd, rootfs, network, seccomp string
	memory, outputLimit, tmpfsSize, disk   string
	pids                                   int64
	cpus                                   float64
	timeout, grace                         time.Duration
	shell                                  string
	env                                    []string
	asJSON, userns                         bool
	stateRoot, cgroupPrefix                string
	gate                                   approvalFlags
	session, socket                        string
	closeSession                           bool
}

// runJSON is the --json document: the sandbox Result plus the captured output.
type runJSON struct {
	*sandbox.Result
	Stdout string `json:"stdout"`
	Stderr string `json:"stderr"`
	Error  string `json:"error,omitempty"`
}

func newRunCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:         "run [flags] -- PROGRAM [ARG...] | run [flags] -c 'SHELL STRING'",
		Annotations: map[string]string{annoWrapper: "yes"},
		Short:       "Run a command in a sandbox (namespaces, cgroups, read-only root)",
		Long: `Run a command in a fresh sandbox and remove every trace of it afterwards.

The sandbox has its own mount, pid, ipc, uts, cgroup and network namespaces
(network "none" = loopback only), a read-only root (--rootfs host binds the
host's /usr, /bin, /lib... and a few /etc files read-only; --rootfs DIR uses a
prepared root from "tether rootfs build"), a sized tmpfs /tmp, Docker's
default capabilities minus CAP_MKNOD and CAP_NET_RAW, no_new_privs, and
Docker's seccomp profile with io_uring denied.

The command is placed as the daemon places a command of the same profile
(--profile, from the configuration below): its workspace (terminal.cwd, else
the current directory or --cwd DIR; --cwd cannot move a workspace the
profile fixes), root filesystem, network, per-sandbox limits
(terminal.limits: sandbox_memory, sandbox_pids, cpus, tmpfs, timeout, output)
and environment (HOME=/tmp, the profile's env_passthrough, its secrets, plus
--env). The workspace is bound read-write at the same path and the command
starts there; its protected files (.git/hooks, .git/config, shell rc files)
are read-only. Flags may narrow the policy (lower limits, --network none)
and widen it only where the profile allows (--network host needs
terminal.network.mode: host); a flag that would widen it is an error. A
profile whose network is the egress proxy (terminal.network.mode: proxy)
gets its own proxy, as behind the daemon: the command's network namespace
holds only loopback and the proxy, which allows the profile's hosts (and,
for a --job with an approved mandate, the mandate's) and records each
connection (needs root; --network none narrows it to no network).
--seccomp and --userns are not part of a profile. The profile's secrets are
masked (***) in everything the command prints, on the terminal as in
--json: what a script sees is what the model would be told. This is the
agent's pipeline, assembled as tether serve assembles it (runner.NewPipeline).
The command is pid 1 of its pid
namespace: processes it leaves behind (background jobs, setsid, nohup) are
killed when it exits.

Before anything runs, the command goes through the approval engine of the
profile (--config, $TETHER_CONFIG, then the XDG and /etc paths, else the
embedded default): the hardline floor, the profile's deny rules, yolo or
mode off, the allowlist, then a route. On --platform cli (the default) a
command that needs approval is asked on the controlling terminal (once /
session / always / deny; no answer before the timeout is a deny); with no
terminal it is denied. --yolo approves the approval tier, never the
hardline floor or deny rules. Unattended platforms (cron, webhook, api,
single-query) follow the profile's cron_mode / unattended_mode. Every
decision is appended to the audit log in the state directory, with the
profile's secrets redacted. --job J makes the command a call of mandate job
J, as behind the daemon: observed while the job is in observe mode, checked
against its approved mandate once enforcing (--platform cron for a cron
run), and then confined by the kernel to the mandate's paths (a Landlock
ruleset; an access outside them fails with EACCES, is reported on stderr
and recorded as drift; see docs/landlock.md).

Limits apply to the command's cgroup, a child of the profile's parent cgroup
(<prefix>/<profile>). Without root tether uses a user namespace and cannot
enforce cgroup limits: it says which on stderr and in --json "not_enforced".

Exit status:
  the command's own status; 126 not executable; 127 not found;
  128+N killed by signal N. A command stopped by --timeout gets SIGTERM, then
  SIGKILL after the grace period, so it exits 143 or 137 (--json reports
  "timed_out": true). An OOM kill is 137 with "oom_killed": true.
  125 tether itself did not run it: refused by the approval engine, a usage
  or configuration error (flags included), or a sandbox that could not be set
  up. It is also the status of a command handed to a daemon's pooled
  sandbox whose result was lost (the connection ended): it may have run, the
  error says so, and --json carries "may_have_run": true. tether run is a
  wrapper like env, timeout, nice and chroot: every other status is the
  command's own (its own 2 or 3 included). With --json a 125 prints
  {"exit_code":125,"error":…,"refused":…,"stage":…,"reason":…} on stdout.

Output (stdout and stderr together) is capped at the profile's
limits.output (1MiB by default) or --output-limit; the rest is discarded and
reported ("tether: output truncated", --json "output_truncated": true).

--json captures the command's output and prints one JSON object with
exit_code, signal, timed_out, oom_killed, output_truncated, cpu_time_ns,
peak_memory_bytes, duration_ns, not_enforced, stdout and stderr.

State lives under $TETHER_STATE_ROOT, else /run/tether as root, else
$XDG_RUNTIME_DIR/tether; run first reaps what a crashed tether left there.

` + sessionHelp,
		Example: `  tether run -- ls -la
  tether run --session work -c 'cd src && make' ; tether run --session work -c 'ls'
  tether run --memory 128M --pids 32 --timeout 30s -c 'make test'
  tether run --job nightly --platform cron -- make test
  tether run --rootfs ./root --network none --json -- id`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRun(cmd, f, args)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.profile, "profile", "", "profile name (default: the configuration's default_profile; its parent cgroup is <prefix>/<profile>)")
	addPolicyFlags(fl, &f)
	fl.DurationVar(&f.timeout, "timeout", 0, "wall-clock limit, e.g. 30s, at most the profile's (default: its terminal.limits.timeout)")
	fl.DurationVar(&f.grace, "grace", 2*time.Second, "time between SIGTERM and SIGKILL on timeout or interrupt")
	fl.StringVar(&f.outputLimit, "output-limit", "", "cap on stdout+stderr bytes, e.g. 1M; 0: none, not with --json (default: the profile's limits.output)")
	fl.StringVar(&f.disk, "disk", "", "cap on what the command may add to the workspace, e.g. 1G (project quotas; default: none)")
	fl.StringArrayVarP(&f.env, "env", "e", nil, "add KEY=VALUE to the command's environment (repeatable)")
	fl.StringVarP(&f.shell, "command", "c", "", "run this string with /bin/sh -c")
	fl.BoolVar(&f.asJSON, "json", false, "capture output and print the result as JSON")
	fl.StringVar(&f.stateRoot, "state-root", "", "state directory (default: $TETHER_STATE_ROOT, /run/tether or $XDG_RUNTIME_DIR/tether)")
	fl.StringVar(&f.cgroupPrefix, "cgroup-prefix", "", "cgroup directory of all sandboxes (default: $TETHER_CGROUP_PREFIX or tether)")
	fl.StringVar(&f.gate.configPath, "config", "", "configuration file (default: $TETHER_CONFIG, XDG, /etc, else the embedded default)")
	fl.StringVar(&f.gate.platform, "platform", "cli", "where the call comes from: cli, gateway, cron, webhook, api or single-query")
	fl.StringVar(&f.gate.job, "job", "", "mandate job the command belongs to: observed, or enforced once its mandate is approved (as behind the daemon)")
	fl.BoolVar(&f.gate.yolo, "yolo", false, "approve the approval tier without asking (never the hardline floor or deny rules)")
	fl.StringVar(&f.session, "session", "", "run in the daemon's persistent session sandbox S (needs tether serve; see below)")
	fl.StringVar(&f.socket, "socket", "", "daemon socket for --session (default: $TETHER_SOCKET, else the daemon's default socket)")
	fl.BoolVar(&f.closeSession, "close-session", false, "with --session S: clear the daemon session S and forget it")
	_ = fl.MarkHidden("state-root")
	_ = fl.MarkHidden("cgroup-prefix")
	return cmd
}

// addPolicyFlags adds the flags of tether run and tether shell that narrow
// the profile's terminal policy (placeFromProfile).
func addPolicyFlags(fl *pflag.FlagSet, f *runFlags) {
	fl.StringVar(&f.cwd, "cwd", "", "workspace and working directory (default: the profile's terminal.cwd, else the current directory)")
	fl.StringVar(&f.rootfs, "rootfs", "host", `root filesystem: "host" or a prepared directory (default: the profile's terminal.rootfs)`)
	fl.StringVar(&f.network, "network", "none", `network: "none" (loopback only) or "host" if the profile allows it (default: the profile's)`)
	fl.StringVar(&f.memory, "memory", "", "memory limit, e.g. 512M, at most the profile's (default: its terminal.limits.sandbox_memory)")
	fl.Int64Var(&f.pids, "pids", 0, "maximum number of processes and threads, at most the profile's (default: its terminal.limits.sandbox_pids)")
	fl.Float64Var(&f.cpus, "cpus", 0, "CPU limit in cores, e.g. 0.5, at most the profile's (default: its terminal.limits.cpus)")
	fl.StringVar(&f.tmpfsSize, "tmpfs-size", "", "size of the sandbox's /tmp, at most the profile's (default: its terminal.limits.tmpfs)")
	fl.StringVar(&f.seccomp, "seccomp", "required", `seccomp filter: "required", "optional" or "off"`)
	fl.BoolVar(&f.userns, "userns", false, "deprecated, no effect: every sandbox has its own user namespace (docs/workspace.md)")
}

// usageErr reports bad input: nothing ran.
func usageErr(format string, args ...any) error {
	return &exitError{Code: exitUsage, Err: fmt.Errorf(format, args...)}
}

// runnerFor builds the Runner from flags and environment.
func runnerFor(stateRoot, prefix, profile string, grace time.Duration) *sandbox.Runner {
	if stateRoot == "" {
		stateRoot = os.Getenv("TETHER_STATE_ROOT")
	}
	if prefix == "" {
		prefix = os.Getenv("TETHER_CGROUP_PREFIX")
	}
	return &sandbox.Runner{StateRoot: stateRoot, CgroupPrefix: prefix, Profile: profile, Grace: grace}
}

func runRun(cmd *cobra.Command, f runFlags, args []string) error {
	if cmd.Flags().Changed("session") {
		return runSession(cmd, f, args)
	}
	if f.socket != "" || f.closeSession {
		return usageErr("--socket and --close-session go with --session S")
	}
	command, err := commandText(f.shell, args)
	if err != nil {
		return err
	}
	sandbox.Trace("client run")
	conf, prof, err := runProfile(f.gate, f.profile)
	if err != nil {
		return err
	}
	sandbox.Trace("client config loaded")
	sb := runnerFor(f.stateRoot, f.cgroupPrefix, f.profile, f.grace)
	rp, err := newRunPipeline(f.gate, conf, sb)
	if err != nil {
		return err
	}
	defer rp.Close()
	sandbox.Trace("client pipeline assembled")
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, unix.SIGTERM)
	defer stop()
	pl, err := placeFromProfile(ctx, cmd.Flags(), f, rp.Runner, prof)
	if err != nil {
		return err
	}
	sandbox.Trace("client placed")
	cfg := pl.Config
	// --json holds the output in this process (outside every cgroup), so
	// it never goes without a cap.
	if f.asJSON && cfg.Limits.OutputBytes == 0 {
		return usageErr("--json holds the output in memory: give --output-limit a size (default: the profile's limits.output)")
	}

	var outBuf, errBuf bytes.Buffer
	c := sandbox.Command{Args: args, Shell: f.shell, Stdin: os.Stdin, Stdout: cmd.OutOrStdout(), Stderr: cmd.ErrOrStderr()}
	if f.asJSON {
		c.Stdin, c.Stdout, c.Stderr = nil, &outBuf, &errBuf
	}
	// The agent's pipeline: the engine decides while the sandbox is built,
	// the exec gate, the egress proxy of a proxy profile, and the output
	// masked with the profile's secrets, on the terminal as in --json.
	inv, runErr := rp.Runner.Invoke(ctx, runner.Invocation{Profile: prof.Name, Session: f.gate.session, Platform: rp.platform,
		Job: f.gate.job, Text: command, Command: c, Placement: pl, Allowed: func(d approval.Decision) {
			if d.Stage != approval.StageAnalysis {
				fmt.Fprintf(cmd.ErrOrStderr(), "tether: approved at %s by %s\n", d.Stage, d.DecidedBy)
			}
		}})
	if errors.Is(runErr, runner.ErrRefused) {
		return rp.refusalOf(inv.Decision, runErr, f.gate.yolo)
	}
	sandbox.Trace("client invoked")
	var res *sandbox.Result
	if inv != nil {
		res = inv.Result
		for _, d := range append(inv.ExecBlocked, inv.PathsRefused...) {
			fmt.Fprintf(cmd.ErrOrStderr(), "tether: %s\n", d.Message)
		}
		for _, d := range inv.CreateBlocked {
			fmt.Fprintf(cmd.ErrOrStderr(), "tether: %s\n", d.Message)
		}
	}
	if res != nil && len(res.NotEnforced) > 0 {
		// rootless without delegated cgroups: memory, pids, cpus; no
		// project quota on the workspace's filesystem: disk.
		fmt.Fprintf(cmd.ErrOrStderr(), "tether: not enforced here: %s\n", strings.Join(res.NotEnforced, ", "))
	}
	if res != nil && res.DiskLimitHit {
		fmt.Fprintln(cmd.ErrOrStderr(), "tether: the workspace reached its --disk limit")
	}
	if f.asJSON {
		if res == nil {
			// Nothing ran: the error document (main) says why.
			return runErr
		}
		// Masked on the way in (Invoke), as the model would be told it.
		doc := runJSON{Result: res, Stdout: outBuf.String(), Stderr: errBuf.String()}
		if runErr != nil {
			doc.Error = runErr.Error()
		}
		enc := json.NewEncoder(cmd.OutOrStdout())
		enc.SetIndent("", "  ")
		if err := enc.Encode(doc); err != nil {
			return err
		}
		return exitFor(res.ExitCode, nil)
	}
	switch {
	case res == nil:
		return runErr
	case res.TimedOut:
		fmt.Fprintf(cmd.ErrOrStderr(), "tether: timed out after %s\n", cfg.Limits.Timeout)
	case res.OOMKilled:
		fmt.Fprintln(cmd.ErrOrStderr(), "tether: a process was killed for exceeding the memory limit")
	}
	if res.OutputTruncated {
		fmt.Fprintf(cmd.ErrOrStderr(), "tether: output truncated at %d bytes (the profile's limits.output, or --output-limit)\n", cfg.Limits.OutputBytes)
	}
	return exitFor(res.ExitCode, runErr)
}

// exitFor is the command's own status code (with err, what went wrong
// around it), which tether run and shell pass through.
func exitFor(code int, err error) error {
	if code == 0 && err == nil {
		return nil
	}
	return &exitError{Code: code, Err: err, Own: true}
}

// placeFromProfile places the command as the daemon places a command of
// the profile (runner.Runner.Place: workspace, rootfs, network, per-sandbox
// limits, protected binds, environment) and applies the flags: they may
// narrow it (lower limits, no network) and widen it only where the profile
// allows; a flag that would widen it is a usage error. --seccomp and
// --userns are not part of a profile.
func placeFromProfile(ctx context.Context, fl *pflag.FlagSet, f runFlags, r *runner.Runner, prof *config.Profile) (runner.Placement, error) {
	var pl runner.Placement
	wd, err := f.workDir()
	if err != nil {
		return pl, err
	}
	if pc := prof.Terminal.Cwd; pc != "" && fl.Changed("cwd") && !sameDir(pc, wd) {
		return pl, usageErr("--cwd %s: profile %s fixes the workspace at %s (terminal.cwd); drop --cwd or use another profile", wd, prof.Name, pc)
	}
	// tether's own config and state are hidden in the sandbox (or the
	// workspace refused), as the daemon hides them.
	pl, err = r.Place(ctx, prof.Name, wd, f.env)
	if err != nil {
		return pl, usageErr("%v", err)
	}
	pol, cfg := pl.Policy, pl.Config

	switch {
	case fl.Changed("network") && f.network == "none":
		cfg.Network, cfg.AllowHostNetwork, pl.Proxy = sandbox.NetworkNone, false, false
	case fl.Changed("network") && f.network == "host":
		if pol.Network.Mode != config.NetworkHost {
			return pl, usageErr("--network host widens profile %s's network (%s): set terminal.network.mode: host in the profile to allow it", prof.Name, pol.Network.Mode)
		}
	case fl.Changed("network"):
		return pl, usageErr(`--network %q: want "none" or "host"`, f.network)
	}
	if fl.Changed("rootfs") {
		layout, err := rootfs.Parse(f.rootfs)
		if err != nil {
			return pl, usageErr("--rootfs %s: %v", f.rootfs, err)
		}
		// A prepared root instead of the host's directories shows less
		// of the host; any other change would widen the profile's.
		if pol.Rootfs != "" && !(f.rootfs != "host" && sameDir(f.rootfs, pol.Rootfs)) {
			return pl, usageErr("--rootfs %s: profile %s runs commands on the root %s (terminal.rootfs)", f.rootfs, prof.Name, pol.Rootfs)
		}
		cfg.Rootfs = layout
	}

	size := func(name, v string) (int64, error) {
		n, err := units.RAMInBytes(v)
		if err != nil || n < 0 {
			return 0, usageErr("--%s %q: want a size such as 512M or 2G", name, v)
		}
		return n, nil
	}
	// narrow applies a flag that may only lower the profile's limit (0
	// means none, which is no lower than any limit).
	narrow := func(name, key string, v int64, limit *int64, show func(int64) string) error {
		if !fl.Changed(name) {
			return nil
		}
		if v < 0 {
			return usageErr("--%s: negative %s limit", name, name)
		}
		if *limit > 0 && (v == 0 || v > *limit) {
			return usageErr("--%s %s is above profile %s's terminal.limits.%s (%s): lower it, or raise the limit in the profile", name, show(v), prof.Name, key, show(*limit))
		}
		*limit = v
		return nil
	}
	bytesOf := func(n int64) string { return units.BytesSize(float64(n)) }
	count := func(n int64) string { return strconv.FormatInt(n, 10) }
	lim := &cfg.Limits
	if fl.Changed("memory") {
		n, err := size("memory", f.memory)
		if err != nil {
			return pl, err
		}
		if err := narrow("memory", "sandbox_memory", n, &lim.MemoryBytes, bytesOf); err != nil {
			return pl, err
		}
	}
	if fl.Changed("tmpfs-size") {
		n, err := size("tmpfs-size", f.tmpfsSize)
		if err != nil {
			return pl, err
		}
		if err := narrow("tmpfs-size", "tmpfs", n, &lim.TmpfsBytes, bytesOf); err != nil {
			return pl, err
		}
	}
	if err := narrow("pids", "sandbox_pids", f.pids, &lim.Pids, count); err != nil {
		return pl, err
	}
	if fl.Lookup("timeout") != nil {
		t := int64(lim.Timeout)
		if err := narrow("timeout", "timeout", int64(f.timeout), &t, func(n int64) string { return time.Duration(n).String() }); err != nil {
			return pl, err
		}
		lim.Timeout = time.Duration(t)
	}
	if fl.Changed("cpus") {
		if f.cpus < 0 || (lim.CPUs > 0 && (f.cpus == 0 || f.cpus > lim.CPUs)) {
			return pl, usageErr("--cpus %g is above profile %s's terminal.limits.cpus (%g): lower it, or raise the limit in the profile", f.cpus, prof.Name, lim.CPUs)
		}
		lim.CPUs = f.cpus
	}
	if fl.Changed("output-limit") {
		n, err := size("output-limit", f.outputLimit)
		if err != nil {
			return pl, err
		}
		lim.OutputBytes = n
	}
	if fl.Changed("disk") {
		n, err := size("disk", f.disk)
		if err != nil {
			return pl, err
		}
		lim.DiskBytes = n
	}
	cfg.Seccomp = sandbox.SeccompMode(f.seccomp)
	if err := cfg.Validate(); err != nil {
		return pl, usageErr("%v", err)
	}
	pl.Config = cfg
	return pl, nil
}

// workDir returns the directory --cwd names, else the current one, as an
// absolute path; a usage error when it is not a directory.
func (f runFlags) workDir() (string, error) {
	wd := f.cwd
	if wd == "" {
		d, err := os.Getwd()
		if err != nil {
			return "", usageErr("finding the current directory: %v", err)
		}
		wd = d
	}
	wd, err := filepath.Abs(wd)
	if err != nil {
		return "", usageErr("resolving --cwd: %v", err)
	}
	if fi, err := os.Stat(wd); err != nil || !fi.IsDir() {
		return "", usageErr("--cwd %s is not a directory", wd)
	}
	return wd, nil
}

// sameDir reports whether a and b name the same directory.
func sameDir(a, b string) bool {
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}
