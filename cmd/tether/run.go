package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	units "github.com/docker/go-units"
	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/tether-dev/tether/approval"
	"github.com/tether-dev/tether/rootfs"
	"github.com/tether-dev/tether/sandbox"
)

func init() { addCommand(newRunCmd) }

// Exit statuses of tether run besides the command's own.
const (
	exitUsage      = 2   // bad flags or config: nothing ran
	exitSandboxErr = 125 // the sandbox could not be set up: nothing ran
)

// runFlags are tether run's options.
type runFlags struct {
	profile, cwd, rootfs, network, seccomp string
	memory, outputLimit, tmpfsSize         string
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
		Use:   "run [flags] -- PROGRAM [ARG...] | run [flags] -c 'SHELL STRING'",
		Short: "Run a command in a sandbox (namespaces, cgroups, read-only root)",
		Long: `Run a command in a fresh sandbox and remove every trace of it afterwards.

The sandbox has its own mount, pid, ipc, uts, cgroup and network namespaces
(network "none" = loopback only), a read-only root (--rootfs host binds the
host's /usr, /bin, /lib... and a few /etc files read-only; --rootfs DIR uses a
prepared root from "tether rootfs build"), a sized tmpfs /tmp, Docker's
default capabilities minus CAP_MKNOD and CAP_NET_RAW, no_new_privs, and
Docker's seccomp profile with io_uring denied.

The workspace is the current directory (or --cwd DIR), bound read-write at
the same path; the command starts there. The command is pid 1 of its pid
namespace: processes it leaves behind (background jobs, setsid, nohup) are
killed when it exits. It gets a minimal environment (PATH, HOME=/tmp,
LANG=C.UTF-8) plus --env, never tether's own (which may hold secrets).

Before anything runs, the command goes through the approval engine of the
profile (--config, $TETHER_CONFIG, then the XDG and /etc paths, else the
embedded default): the hardline floor, the profile's deny rules, yolo or
mode off, the allowlist, then a route. On --platform cli (the default) a
command that needs approval is asked on the controlling terminal (once /
session / always / deny; no answer before the timeout is a deny); with no
terminal it is denied. --yolo approves the approval tier, never the
hardline floor or deny rules. Unattended platforms (cron, webhook, api,
single-query) follow the profile's cron_mode / unattended_mode. Every
decision is appended to the audit log in the state directory.

Limits apply to the command's cgroup, a child of the profile's parent cgroup
(<prefix>/<profile>). Without root tether uses a user namespace and cannot
enforce cgroup limits: it says which on stderr and in --json "not_enforced".

Exit status:
  the command's own status; 126 not executable; 127 not found;
  128+N killed by signal N. A command stopped by --timeout gets SIGTERM, then
  SIGKILL after the grace period, so it exits 143 or 137 (--json reports
  "timed_out": true). An OOM kill is 137 with "oom_killed": true.
  2 usage or config error, 3 refused by the approval engine (nothing ran),
  125 the sandbox could not be set up (nothing ran).

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
  tether run --memory 512M --pids 256 --timeout 30s -c 'make test'
  tether run --rootfs ./root --network none --json -- /bin/sh -c 'id'`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRun(cmd, f, args)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.profile, "profile", "default", "profile name (parent cgroup <prefix>/<profile>)")
	fl.StringVar(&f.cwd, "cwd", "", "workspace and working directory (default: current directory)")
	fl.StringVar(&f.rootfs, "rootfs", "host", `root filesystem: "host" or a prepared directory`)
	fl.StringVar(&f.network, "network", "none", `network: "none" (loopback only) or "host"`)
	fl.StringVar(&f.memory, "memory", "", "memory limit, e.g. 512M (default: none)")
	fl.Int64Var(&f.pids, "pids", 1024, "maximum number of processes and threads (0: none)")
	fl.Float64Var(&f.cpus, "cpus", 0, "CPU limit in cores, e.g. 1.5 (0: none)")
	fl.DurationVar(&f.timeout, "timeout", 0, "wall-clock limit, e.g. 30s (0: none)")
	fl.DurationVar(&f.grace, "grace", 2*time.Second, "time between SIGTERM and SIGKILL on timeout or interrupt")
	fl.StringVar(&f.outputLimit, "output-limit", "", "cap on stdout+stderr bytes, e.g. 1M; 0: none, not with --json (default: the profile's limits.output)")
	fl.StringVar(&f.tmpfsSize, "tmpfs-size", "64M", "size of the sandbox's /tmp")
	fl.StringVar(&f.seccomp, "seccomp", "required", `seccomp filter: "required", "optional" or "off"`)
	fl.BoolVar(&f.userns, "userns", false, "deprecated, no effect: every sandbox has its own user namespace (docs/workspace.md)")
	fl.StringArrayVarP(&f.env, "env", "e", nil, "add KEY=VALUE to the command's environment (repeatable)")
	fl.StringVarP(&f.shell, "command", "c", "", "run this string with /bin/sh -c")
	fl.BoolVar(&f.asJSON, "json", false, "capture output and print the result as JSON")
	fl.StringVar(&f.stateRoot, "state-root", "", "state directory (default: $TETHER_STATE_ROOT, /run/tether or $XDG_RUNTIME_DIR/tether)")
	fl.StringVar(&f.cgroupPrefix, "cgroup-prefix", "", "cgroup directory of all sandboxes (default: $TETHER_CGROUP_PREFIX or tether)")
	fl.StringVar(&f.gate.configPath, "config", "", "configuration file (default: $TETHER_CONFIG, XDG, /etc, else the embedded default)")
	fl.StringVar(&f.gate.platform, "platform", "cli", "where the call comes from: cli, gateway, cron, webhook, api or single-query")
	fl.BoolVar(&f.gate.yolo, "yolo", false, "approve the approval tier without asking (never the hardline floor or deny rules)")
	fl.StringVar(&f.session, "session", "", "run in the daemon's persistent session sandbox S (needs tether serve; see below)")
	fl.StringVar(&f.socket, "socket", "", "daemon socket for --session (default: $TETHER_SOCKET, else the daemon's default socket)")
	fl.BoolVar(&f.closeSession, "close-session", false, "with --session S: clear the daemon session S and forget it")
	_ = fl.MarkHidden("state-root")
	_ = fl.MarkHidden("cgroup-prefix")
	return cmd
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
	if f.shell != "" && len(args) > 0 {
		return usageErr("give either -c 'SHELL STRING' or -- PROGRAM ARGS, not both")
	}
	if f.shell == "" && len(args) == 0 {
		return usageErr("nothing to run: give -- PROGRAM [ARG...] or -c 'SHELL STRING' (see tether run --help)")
	}
	cfg, err := configFromFlags(f)
	if err != nil {
		return err
	}
	command, err := commandText(f.shell, args)
	if err != nil {
		return err
	}
	conf, prof, err := runProfile(f.gate, f.profile)
	if err != nil {
		return err
	}
	// Output is capped at the profile's limit unless --output-limit says
	// otherwise; --json holds the output in this process (outside every
	// cgroup), so it never goes without a cap.
	if !cmd.Flags().Changed("output-limit") {
		cfg.Limits.OutputBytes = int64(prof.Terminal.Limits.Output)
	}
	if f.asJSON && cfg.Limits.OutputBytes == 0 {
		return usageErr("--json holds the output in memory: give --output-limit a size (default: the profile's limits.output)")
	}
	runner := runnerFor(f.stateRoot, f.cgroupPrefix, f.profile, f.grace)

	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, unix.SIGTERM)
	defer stop()
	// The approval decision (configuration, analysis, the audit record
	// synced to disk, maybe a question on the terminal) runs while the
	// kernel builds the sandbox; the program is executed only once it
	// approved (RunGated's gate). A refusal wins over any sandbox error:
	// nothing ran. When the sandbox failed before RunGated asked, the
	// decision is made here.
	var decided sync.Once
	var verdict error
	var engine atomic.Pointer[approval.Engine]
	gate := func() error {
		decided.Do(func() {
			var eng *approval.Engine
			eng, verdict = authorize(ctx, cmd.ErrOrStderr(), f.gate, conf, prof, command, cfg.Workspace)
			engine.Store(eng)
		})
		return verdict
	}
	defer func() {
		if eng := engine.Load(); eng != nil {
			eng.Close()
		}
	}()
	// The program runs only after gate approved it, so every exec finds
	// the engine set.
	home, _ := os.UserHomeDir()
	runner.ExecGate = func(ev sandbox.ExecEvent) error {
		eng := engine.Load()
		if eng == nil {
			return errors.New("no approval engine to check the exec")
		}
		return eng.CheckExec(approval.ExecRequest{Argvs: append([][]string{ev.Argv}, ev.Runs...),
			Profile: f.profile, Cwd: cfg.Workspace, Home: home})
	}

	var outBuf, errBuf bytes.Buffer
	c := sandbox.Command{Args: args, Shell: f.shell, Stdin: os.Stdin, Stdout: cmd.OutOrStdout(), Stderr: cmd.ErrOrStderr()}
	if f.asJSON {
		c.Stdin, c.Stdout, c.Stderr = nil, &outBuf, &errBuf
	}
	res, runErr := runner.RunGated(ctx, cfg, c, gate)
	if err := gate(); err != nil {
		return err
	}
	if res != nil && len(res.ExecBlocked) > 0 {
		platform, _ := approval.ParsePlatform(f.gate.platform)
		blocks := make([]approval.ExecBlocked, len(res.ExecBlocked))
		for i, b := range res.ExecBlocked {
			blocks[i] = approval.ExecBlocked{Argv: b.Argv, Rule: b.Rule, Reason: b.Reason}
		}
		for _, d := range engine.Load().RecordExecBlocks(ctx, approval.ExecCall{Profile: f.profile,
			Session: f.gate.session, Platform: platform, Command: command}, blocks) {
			fmt.Fprintf(cmd.ErrOrStderr(), "tether: %s\n", d.Message)
		}
	}
	if res != nil && len(res.NotEnforced) > 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "tether: not enforced here (running without root, no delegated cgroups): %s\n", strings.Join(res.NotEnforced, ", "))
	}
	if f.asJSON {
		doc := runJSON{Result: res, Stdout: outBuf.String(), Stderr: errBuf.String()}
		if doc.Result == nil {
			doc.Result = &sandbox.Result{ExitCode: exitSandboxErr}
		}
		if runErr != nil {
			doc.Error = runErr.Error()
		}
		enc := json.NewEncoder(cmd.OutOrStdout())
		enc.SetIndent("", "  ")
		if err := enc.Encode(doc); err != nil {
			return err
		}
		if res == nil {
			return &exitError{Code: exitSandboxErr}
		}
		return exitFor(res.ExitCode, nil)
	}
	switch {
	case res == nil && errors.Is(runErr, sandbox.ErrInvalidConfig):
		return &exitError{Code: exitUsage, Err: runErr}
	case res == nil:
		return &exitError{Code: exitSandboxErr, Err: runErr}
	case res.TimedOut:
		fmt.Fprintf(cmd.ErrOrStderr(), "tether: timed out after %s\n", f.timeout)
	case res.OOMKilled:
		fmt.Fprintln(cmd.ErrOrStderr(), "tether: a process was killed for exceeding the memory limit")
	}
	if res.OutputTruncated {
		fmt.Fprintf(cmd.ErrOrStderr(), "tether: output truncated at %d bytes (the profile's limits.output, or --output-limit)\n", cfg.Limits.OutputBytes)
	}
	return exitFor(res.ExitCode, runErr)
}

func exitFor(code int, err error) error {
	if code == 0 && err == nil {
		return nil
	}
	return &exitError{Code: code, Err: err}
}

// configFromFlags turns flags into a sandbox config; errors are usage errors.
func configFromFlags(f runFlags) (sandbox.Config, error) {
	var cfg sandbox.Config
	ws := f.cwd
	if ws == "" {
		wd, err := os.Getwd()
		if err != nil {
			return cfg, usageErr("finding the current directory: %v", err)
		}
		ws = wd
	}
	ws, err := filepath.Abs(ws)
	if err != nil {
		return cfg, usageErr("resolving --cwd: %v", err)
	}
	if fi, err := os.Stat(ws); err != nil || !fi.IsDir() {
		return cfg, usageErr("--cwd %s is not a directory", ws)
	}
	cfg.Workspace = ws
	layout, err := rootfs.Parse(f.rootfs)
	if err != nil {
		return cfg, usageErr("--rootfs %s: %v", f.rootfs, err)
	}
	cfg.Rootfs = layout
	switch f.network {
	case "none":
		cfg.Network = sandbox.NetworkNone
	case "host":
		// The flag itself is the explicit request.
		cfg.Network, cfg.AllowHostNetwork = sandbox.NetworkHost, true
	default:
		return cfg, usageErr(`--network %q: want "none" or "host"`, f.network)
	}
	size := func(name, v string) (int64, error) {
		if v == "" {
			return 0, nil
		}
		n, err := units.RAMInBytes(v)
		if err != nil || n < 0 {
			return 0, usageErr("--%s %q: want a size such as 512M or 2G", name, v)
		}
		return n, nil
	}
	if cfg.Limits.MemoryBytes, err = size("memory", f.memory); err != nil {
		return cfg, err
	}
	if cfg.Limits.OutputBytes, err = size("output-limit", f.outputLimit); err != nil {
		return cfg, err
	}
	if cfg.Limits.TmpfsBytes, err = size("tmpfs-size", f.tmpfsSize); err != nil {
		return cfg, err
	}
	cfg.Limits.Pids, cfg.Limits.CPUs, cfg.Limits.Timeout = f.pids, f.cpus, f.timeout
	cfg.Seccomp = sandbox.SeccompMode(f.seccomp)
	cfg.UserNS = f.userns
	if len(f.env) > 0 {
		cfg.Env = append(append([]string(nil), sandbox.DefaultEnv...), f.env...)
	}
	if err := cfg.Validate(); err != nil {
		return cfg, &exitError{Code: exitUsage, Err: err}
	}
	return cfg, nil
}
