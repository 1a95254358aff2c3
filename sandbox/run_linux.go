package sandbox

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/opencontainers/runc/libcontainer"
	"golang.org/x/sys/unix"

	"github.com/tether-dev/tether/rootfs"
	"github.com/tether-dev/tether/sandbox/cgwarm"
	"github.com/tether-dev/tether/sandbox/seccompexec"
)

// Command is what to run inside the sandbox: either Args (a program and its
// arguments, looked up in the sandbox's PATH) or Shell (a string for
// /bin/sh -c). Nil Stdin reads as empty; nil Stdout/Stderr discard.
type Command struct {
	Args   []string
	Shell  string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
}

// Result is what happened to one command. ExitCode follows the shell:
// the program's status, 126 not executable, 127 not found, 128+n killed by
// signal n.
type Result struct {
	// ContainerID names the container (and its cgroup) that ran the command.
	ContainerID string `json:"container_id"`
	ExitCode    int    `json:"exit_code"`
	// Signal is the name of the signal that killed the command ("SIGKILL"), if any.
	Signal string `json:"signal,omitempty"`
	// TimedOut: Limits.Timeout expired and the command was stopped.
	TimedOut bool `json:"timed_out"`
	// OOMKilled: the kernel killed a process of the command for exceeding
	// the memory limit (read from the memory cgroup's OOM counter).
	OOMKilled bool `json:"oom_killed"`
	// OutputTruncated: output beyond Limits.OutputBytes was discarded.
	OutputTruncated bool `json:"output_truncated"`
	// CPUTime is the CPU time of all the command's processes.
	CPUTime time.Duration `json:"cpu_time_ns"`
	// PeakMemory is the highest memory use of the command's cgroup, in bytes.
	PeakMemory int64 `json:"peak_memory_bytes"`
	// Duration is the wall time from start to exit.
	Duration time.Duration `json:"duration_ns"`
	// DiskLimitHit: the workspace's use reached Limits.DiskBytes (writes
	// failed, or the next one would). In a session it may be another
	// command's, running at the same time.
	DiskLimitHit bool `json:"disk_limit_hit,omitempty"`
	// NotEnforced names the protections that could not be applied in this
	// environment (rootless: "memory", "pids", "cpus"; "seccomp";
	// "exec_gate" when an ExecGate was asked for and the sandbox has no
	// filter to carry it, "nested-repos" when the creation gate has none,
	// or no helper to perform the calls it checks (so a second thread can
	// swap a checked name), or the workspace was too large to walk for
	// nested repositories; "protected-links" when the frozen directories
	// were too large to check for links;
	// "disk" without project quotas (or a workspace too large to mark); "landlock" when
	// Config.Landlock was asked for and the kernel has no Landlock;
	// "landlock_audit" when the paths it refused cannot be learnt).
	NotEnforced []string `json:"not_enforced,omitempty"`
	// CreateBlocked lists the creations of a .git the creation gate
	// refused (the newest 64 to 128; docs/workspace.md).
	CreateBlocked []CreateBlock `json:"create_blocked,omitempty"`
	// ExecBlocked lists the execs the exec gate refused (the newest 64 to
	// 128 of them).
	ExecBlocked []ExecBlock `json:"exec_blocked,omitempty"`
	// Execs lists the execs the gate let through, in order (the newest
	// 4096 to 8192; ExecsDropped counts the older ones): the programs the
	// command really ran.
	Execs        []ExecEvent `json:"execs,omitempty"`
	ExecsDropped int         `json:"execs_dropped,omitempty"`
	// PathsRefused lists what the Config.Landlock ruleset refused (the
	// first 128 distinct paths), from the kernel's audit records; where
	// those cannot be read NotEnforced lists "landlock_audit" (the kernel
	// refused them all the same). Under the mount plan
	// (Landlock.ReadOnlyWorkspace) it also lists what the read-only
	// workspace refused (EROFS) as the gate saw it, with the blocker
	// "mount.read_only" and the operation (PathRefused.Op): creations,
	// renames and links (the creation gate's), chmod, chown, utimes,
	// xattrs, unlink, rmdir, truncate and write opens
	// (notify_sealed_linux.go); the descriptor forms are not listed.
	PathsRefused []PathRefused `json:"paths_refused,omitempty"`
	// Accesses, in an observed sandbox (Config.Observe), are the files its
	// processes opened or executed in the workspace and the binds, and the
	// connections they made, in order, repeats folded; AccessesLost counts
	// the observations that could not be read (a name longer than
	// PATH_MAX, a directory descriptor closed meanwhile, an unreadable
	// address) or were dropped past the bounds. Every one of them comes
	// from the sandboxed processes: evidence, not proof.
	Accesses     []Access `json:"accesses,omitempty"`
	AccessesLost int      `json:"accesses_lost,omitempty"`

	// observedNotifications counts the notifications of observed calls
	// (open, openat, creat, connect) the gate got for this command: none
	// unless the sandbox is observed (tests check a sandbox that is not
	// pays nothing).
	observedNotifications int
}

// Runner runs commands in sandboxes that share a state root, a cgroup
// prefix and a profile. The zero value is ready to use with the defaults
// documented on each field. A Runner is safe for concurrent use.
type Runner struct {
	// StateRoot holds container state, lock files and empty roots; empty
	// means DefaultStateRoot(). gc treats everything under it as tether's.
	// Runners of different state roots may share a CgroupPrefix: the lock
	// that guards its profile cgroups is host-wide (prefixLock).
	StateRoot string
	// CgroupPrefix is the cgroup directory all containers live under;
	// empty means "tether". It is relative to the root of the cgroup
	// hierarchies, or, when tether runs as root in a cgroup v2 subtree
	// that systemd delegated to it (Delegate=yes), to that subtree
	// (docs/systemd.md). The last sandbox under it to end removes it, in
	// every hierarchy; the parents of a prefix of several names (a/b)
	// may be others' and are left.
	CgroupPrefix string
	// Profile names the parent cgroup (CgroupPrefix/Profile) whose
	// ProfileLimits bound all the profile's containers; empty means "default".
	Profile string
	// ProfileLimits are applied to the profile's parent cgroup (memory,
	// pids and cpus are used; zero fields mean no limit).
	ProfileLimits Limits
	// Grace is how long a cancelled or timed-out command has between
	// SIGTERM and SIGKILL; zero means 2s.
	Grace time.Duration
	// UserNSBase is the unprivileged host id (uid and gid) that is root
	// of a root-started sandbox's user namespace, its only id; zero means
	// DefaultUserNSBase.
	UserNSBase int
	// ExecGate, when set, decides every exec of every process of the
	// sandbox (see ExecEvent); nil lets every exec through unchecked.
	ExecGate ExecGate

	// libcontainerSeccomp makes libcontainer's init compile and load the
	// filter even where the trampoline could load it compiled (for tests
	// that compare the two).
	libcontainerSeccomp bool
}

// Run runs cmd in a new sandbox described by cfg with a zero Runner.
func Run(ctx context.Context, cfg Config, cmd Command) (*Result, error) {
	var r Runner
	return r.Run(ctx, cfg, cmd)
}

// DefaultStateRoot is /run/tether for root and $XDG_RUNTIME_DIR/tether (or
// a per-user directory under the temp dir) otherwise.
func DefaultStateRoot() string {
	if os.Geteuid() == 0 {
		return "/run/tether"
	}
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "tether")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("tether-%d", os.Geteuid()))
}

// nameRE is compiled on first use, not at init: init work runs in both
// processes of every `tether run` (the CLI and the container init).
var nameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$`) })

// DefaultUserNSBase is the host uid and gid of a root-started sandbox's
// root: far above any id a distribution or an LDAP directory hands out, so
// that it owns nothing on the host and no person's limits are charged.
const DefaultUserNSBase = 1 << 30

// placementFor places a container at cgroupPath and maps its root, the
// user namespace's only id, to a host id: the caller's own ids when
// rootless, else usernsBase (zero means DefaultUserNSBase).
func placementFor(cgroupPath string, cfg Config, rootless bool, usernsBase int) Placement {
	p := Placement{CgroupPath: cgroupPath, Rootless: rootless, LimitSwap: !rootless && swapLimitable()}
	switch {
	case rootless:
		p.HostUID, p.HostGID = os.Geteuid(), os.Getegid()
	default:
		if usernsBase == 0 {
			usernsBase = DefaultUserNSBase
		}
		p.HostUID, p.HostGID = usernsBase, usernsBase
	}
	return p
}

// paths returns the Runner's state root, the absolute cgroup path of its
// prefix (under cgroupBase: /tether, or /system.slice/tether.service/tether
// under systemd delegation) and its profile name, defaults filled in.
func (r *Runner) paths() (state, prefix, profile string, err error) {
	state, prefix, profile = r.StateRoot, r.CgroupPrefix, r.Profile
	if state == "" {
		state = DefaultStateRoot()
	}
	if prefix == "" {
		prefix = "tether"
	}
	if profile == "" {
		profile = "default"
	}
	if !filepath.IsAbs(state) {
		return "", "", "", fmt.Errorf("%w: state root %q must be absolute", ErrInvalidConfig, state)
	}
	for _, part := range strings.Split(prefix, "/") {
		if !nameRE().MatchString(part) {
			return "", "", "", fmt.Errorf("%w: cgroup prefix %q must be slash-separated names of letters, digits, _ . -", ErrInvalidConfig, prefix)
		}
	}
	if !nameRE().MatchString(profile) {
		return "", "", "", fmt.Errorf("%w: profile name %q must be letters, digits, _ . - (at most 64)", ErrInvalidConfig, profile)
	}
	base, err := cgroupBase()
	if err != nil {
		return "", "", "", err
	}
	return state, base + "/" + prefix, profile, nil
}

// relPrefix turns paths' absolute prefix back into a CgroupPrefix, for a
// GC or a keeper (which resolve it under cgroupBase again).
func relPrefix(prefix string) string {
	base, _ := cgroupBase()
	return strings.TrimPrefix(prefix, base+"/")
}

// state-root subdirectories.
const (
	containersDir = "containers" // libcontainer's root
	locksDir      = "locks"      // <id>.lock, flocked by the owning tether
	rootsDir      = "roots"      // <id>: the empty "/" of one container (sessions)
	skelDir       = "skel"       // <key>: empty "/" dirs shared by runs with the same mounts
	seccompDir    = "seccomp"    // <key>.bpf: compiled seccomp filters (seccomp_compiled.go)
)

var (
	hostLayoutOnce sync.Once
	hostLayout     rootfs.Layout
	hostLayoutErr  error
)

// Run runs cmd in a new sandbox described by cfg and removes the sandbox
// (processes, cgroups, state) before returning, on every path. The command
// is pid 1 of its pid namespace: like `docker run` without --init, it
// ignores signals it has no handler for, and when it exits every process it
// left behind (setsid, nohup, daemons) is killed with it. A non-nil
// error means the command could not be run as asked (bad config, setup
// failure, ctx cancelled); a command that ran and failed is a Result with
// its exit code. When ctx is cancelled the command gets SIGTERM, Grace,
// then SIGKILL, and Run returns the Result with ctx's error.
func (r *Runner) Run(ctx context.Context, cfg Config, cmd Command) (res *Result, err error) {
	return r.RunGated(ctx, cfg, cmd, nil)
}

// RunGated is Run with a last check (an approval decision): the program is
// only executed once gate returns nil. RunGated calls gate in a goroutine of
// its own as it starts the sandbox's init, so that the check runs while the
// kernel builds the sandbox (cgroups, namespaces, mounts, the init) instead
// of slowing the set-up before it; nothing of the command runs before the
// check passed. When gate returns an error the sandbox is torn down without
// running anything and RunGated returns that error as is, with a nil
// Result, whatever else failed. The command's timeout starts after the
// gate. A nil gate is Run. A failure before the init is started is returned
// without calling gate: a caller must then make its own check if it wants
// its verdict.
func (r *Runner) RunGated(ctx context.Context, cfg Config, cmd Command, gate func() error) (res *Result, err error) {
	args := cmd.Args
	if cmd.Shell != "" {
		args = []string{"/bin/sh", "-c", cmd.Shell}
	}
	if len(args) == 0 || args[0] == "" {
		return nil, ErrNoCommand
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if os.Geteuid() == 0 {
		primed := make(chan struct{})
		go func() {
			defer close(primed)
			cgwarm.Prime()
		}()
		// Done long before the command is (one grace period).
		defer func() { <-primed }()
	}
	sb, err := setUp(cfg, setupOptions{
		stateRoot: r.StateRoot, cgroupPrefix: r.CgroupPrefix, profile: r.Profile,
		profileLimits: r.ProfileLimits, userNSBase: r.UserNSBase, execGate: r.ExecGate,
		trampoline: true, libcontainerSeccomp: r.libcontainerSeccomp,
	})
	if err != nil {
		return nil, err
	}
	cfg = sb.cfg
	res = &Result{ContainerID: sb.id, NotEnforced: sb.notEnforced}
	// The sandbox's teardown, on every path from here.
	defer func() {
		if e := sb.undo.run(); e != nil && err == nil {
			err = fmt.Errorf("cleaning up sandbox %s: %w", sb.id, e)
		}
	}()
	// Reap what a crashed tether left under this state root; live
	// containers of other tethers are kept (their lock is held), and so is
	// this one's (its lock is taken before anything of it exists). Like the
	// gate, it starts with the container's init, so that its work does not
	// slow the set-up, and it is waited for before Run returns.
	gcStart, gcDone := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(gcDone)
		<-gcStart
		_, _ = GC(GCOptions{StateRoot: sb.stateRoot, CgroupPrefix: relPrefix(sb.prefix)})
	}()
	startGC := sync.OnceFunc(func() { close(gcStart) })
	defer func() {
		startGC()
		<-gcDone
	}()
	container, tramp, execGate, audit := sb.container, sb.tramp, sb.gate, sb.audit

	out := &capWriter{limit: cfg.Limits.OutputBytes}
	process := &libcontainer.Process{
		Args:   args,
		Env:    cfg.env(),
		Cwd:    cfg.cwd(),
		Stdin:  cmd.Stdin,
		Stdout: out.stream(cmd.Stdout),
		Stderr: out.stream(cmd.Stderr),
		Init:   true,
	}
	if tramp != nil {
		files, err := tramp.files(process.Env)
		if err != nil {
			return nil, err
		}
		process.Args, process.Env, process.ExtraFiles = seccompexec.Argv(args), nil, files
	}

	// The container's init gets SIGKILL when the thread that forked it
	// exits (ParentDeathSignal). libcontainer ends threads it has locked
	// for setns, so keep the forking thread ours until the command is done.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := time.Now()
	startGC()
	var verdict chan error
	if gate != nil {
		verdict = make(chan error, 1)
		go func() { verdict <- gate() }()
	}
	// Start builds the sandbox and leaves its init waiting on the exec
	// fifo; Exec lets it execute the program.
	if err := startGuarded(process, func() error { return container.Start(process) }); err != nil {
		res.Duration = time.Since(start)
		if verdict != nil {
			if err := <-verdict; err != nil {
				return nil, err // a refusal wins: nothing ran either way
			}
		}
		return startFailure(res, args[0], err)
	}
	// Before the program runs: nothing of the sandbox's has run yet.
	if err := sb.started(process); err != nil {
		_ = container.Signal(unix.SIGKILL)
		_, _ = process.Wait()
		return nil, err
	}
	res.NotEnforced = sb.notEnforced
	gateErr := ctx.Err()
	if verdict != nil && gateErr == nil {
		gateErr = <-verdict
	}
	if gateErr == nil {
		gateErr = ctx.Err()
	}
	if gateErr != nil {
		// The init never executed the program: kill and reap it.
		_ = container.Signal(unix.SIGKILL)
		_, _ = process.Wait()
		return nil, gateErr
	}
	runCtx := ctx
	if cfg.Limits.Timeout > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeout(ctx, cfg.Limits.Timeout)
		defer cancel()
	}
	if err := container.Exec(); err != nil {
		res.Duration = time.Since(start)
		return startFailure(res, args[0], err)
	}

	waited := make(chan waitResult, 1)
	go func() {
		ps, err := process.Wait()
		waited <- waitResult{ps, err}
	}()
	var w waitResult
	select {
	case w = <-waited:
	case <-runCtx.Done():
		w = r.stop(container, process, waited)
		res.TimedOut = ctx.Err() == nil
	}
	res.Duration = time.Since(start)
	exitStatus(res, w)
	if execGate != nil {
		execGate.close()
		res.ExecBlocked, res.Execs, res.ExecsDropped = execGate.report()
		res.CreateBlocked = execGate.createsSince(gateMark{})
		res.Accesses, res.AccessesLost, res.observedNotifications = execGate.accessesSince(gateMark{})
	}
	if audit != nil {
		if pid, perr := process.Pid(); perr == nil {
			var aerr error
			if res.PathsRefused, aerr = audit.take(pid); aerr != nil {
				res.NotEnforced = append(res.NotEnforced, "landlock_audit")
			}
			audit.forget(pid)
		}
	}
	if execGate != nil {
		res.PathsRefused = append(res.PathsRefused, execGate.sealedSince(gateMark{})...)
	}
	if tramp != nil {
		if err := tramp.execError(); err != nil {
			return startFailure(res, args[0], err)
		}
	}
	if sb.cgroupPaths != nil {
		u := readUsage(sb.cgroupPaths)
		res.CPUTime, res.PeakMemory, res.OOMKilled = u.cpu, u.peakMem, u.oomKilled
	}
	if res.CPUTime == 0 && w.ps != nil {
		// No cgroup (rootless): the init's rusage covers it and the
		// children it reaped, a lower bound.
		res.CPUTime = w.ps.UserTime() + w.ps.SystemTime()
	}
	res.OutputTruncated = out.truncated()
	if sb.disk != nil {
		res.DiskLimitHit = sb.disk.hit()
	}
	if !res.TimedOut && ctx.Err() != nil {
		return res, fmt.Errorf("running %s: %w", args[0], ctx.Err())
	}
	return res, nil
}

type waitResult struct {
	ps  *os.ProcessState
	err error
}

// stop ends a running container: SIGTERM to every process in its cgroup (or
// its init when there is no cgroup), Grace, then SIGKILL to init, which
// takes down the whole pid namespace.
func (r *Runner) stop(c *libcontainer.Container, p *libcontainer.Process, waited <-chan waitResult) waitResult {
	grace := r.Grace
	if grace == 0 {
		grace = 2 * time.Second
	}
	pids, err := c.Processes()
	if err != nil || len(pids) == 0 {
		_ = p.Signal(unix.SIGTERM)
	}
	for _, pid := range pids {
		_ = unix.Kill(pid, unix.SIGTERM)
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case w := <-waited:
		return w
	case <-t.C:
	}
	_ = p.Signal(unix.SIGKILL)
	_ = c.Signal(unix.SIGKILL)
	return <-waited
}

// exitStatus fills ExitCode and Signal the way a shell reports them.
func exitStatus(res *Result, w waitResult) {
	ps := w.ps
	if ps == nil {
		// Waiting failed: no status to report, so report failure.
		res.ExitCode = 255
		return
	}
	ws, ok := ps.Sys().(syscall.WaitStatus)
	switch {
	case ok && ws.Signaled():
		res.ExitCode = 128 + int(ws.Signal())
		res.Signal = unix.SignalName(unix.Signal(ws.Signal()))
	default:
		res.ExitCode = ps.ExitCode()
	}
}

// startFailure maps a failure to start the program to the shell's statuses.
func startFailure(res *Result, prog string, err error) (*Result, error) {
	// libcontainer's init reports the program lookup and exec failures
	// as text (`exec: "prog": executable file not found in $PATH`).
	msg := err.Error()
	_, execErr, isExec := strings.Cut(msg, `exec: "`)
	switch {
	case isExec && (strings.Contains(execErr, "executable file not found") || strings.Contains(execErr, "no such file or directory")):
		res.ExitCode = 127
		return res, fmt.Errorf("%w: %s: %w", ErrNotFound, prog, err)
	case isExec && (strings.Contains(execErr, "permission denied") || strings.Contains(execErr, "is a directory")),
		strings.Contains(msg, "exec format error"):
		res.ExitCode = 126
		return res, fmt.Errorf("%w: %s: %w", ErrNotExecutable, prog, err)
	}
	return nil, fmt.Errorf("starting %s in sandbox: %w", prog, err)
}

func newID(profile string) (string, error) {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("generating container id: %w", err)
	}
	return fmt.Sprintf("%s-%d-%s", profile, os.Getpid(), hex.EncodeToString(b[:])), nil
}

// sharedRoot returns the empty "/" for a host-layout container, shared by
// every run whose mount points and owner are the same: removing a root
// right after its container costs up to tens of milliseconds (the kernel
// detaches the dead mount namespace's mounts on rmdir), so roots are kept
// under skel/ as a cache and removed by GC with Caches. The key covers the
// mount destinations, so a root never shows another workspace's path.
func sharedRoot(stateRoot string, cfg Config, p Placement) (string, error) {
	chown := !p.Rootless
	h := sha256.New()
	fmt.Fprintf(h, "owner %v %d %d\n", chown, p.HostUID, p.HostGID)
	for _, m := range cfg.mounts(cfg.Rootfs, p, 0) {
		fmt.Fprintf(h, "mount %s\n", m.Destination)
	}
	links := make([]string, 0, len(cfg.Rootfs.Symlinks))
	for path, target := range cfg.Rootfs.Symlinks {
		links = append(links, path+" -> "+target)
	}
	sort.Strings(links)
	for _, l := range links {
		fmt.Fprintf(h, "link %s\n", l)
	}
	dir := filepath.Join(stateRoot, skelDir, hex.EncodeToString(h.Sum(nil))[:16])
	if _, err := os.Lstat(dir); err == nil {
		return dir, nil
	}
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	tmp := fmt.Sprintf("%s.tmp-%d-%x", dir, os.Getpid(), rnd)
	if err := makeEmptyRoot(tmp, cfg.Rootfs, chown, p.HostUID, p.HostGID); err != nil {
		os.RemoveAll(tmp)
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.RemoveAll(tmp)
		if _, statErr := os.Lstat(dir); statErr == nil {
			return dir, nil // another run published it first
		}
		return "", fmt.Errorf("publishing sandbox root: %w", err)
	}
	return dir, nil
}

// makeEmptyRoot prepares the empty "/" of a host-layout container: the
// merged-/usr symlinks, everything else becomes a mount point.
func makeEmptyRoot(dir string, l rootfs.Layout, chown bool, uid, gid int) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return fmt.Errorf("creating sandbox root: %w", err)
	}
	for path, target := range l.Symlinks {
		if err := os.Symlink(target, filepath.Join(dir, path)); err != nil {
			return fmt.Errorf("creating %s in sandbox root: %w", path, err)
		}
	}
	if chown {
		// Container root (a high host uid) must be able to create mount
		// points in its own root.
		if err := os.Chown(dir, uid, gid); err != nil {
			return fmt.Errorf("handing sandbox root to its user namespace: %w", err)
		}
	}
	return nil
}

// capWriter caps the bytes written through all its streams together and
// silently discards the rest (the command is not made to fail on a full
// pipe). It is safe for concurrent use.
type capWriter struct {
	limit int64 // 0: unlimited

	// mu guards n and trunc, and serialises writes to the streams.
	mu    sync.Mutex
	n     int64
	trunc bool
}

func (c *capWriter) stream(w io.Writer) io.Writer {
	if w == nil {
		w = io.Discard
	}
	return &capStream{c: c, w: w}
}

func (c *capWriter) truncated() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.trunc
}

type capStream struct {
	c *capWriter
	w io.Writer
}

// Write holds the lock while writing so that callers may pass one writer
// as both Stdout and Stderr (the two streams are copied concurrently).
func (s *capStream) Write(p []byte) (int, error) {
	c := s.c
	c.mu.Lock()
	defer c.mu.Unlock()
	keep := int64(len(p))
	if c.limit > 0 {
		if room := c.limit - c.n; room < keep {
			keep = max(room, 0)
			c.trunc = true
		}
	}
	c.n += keep
	if keep > 0 {
		if _, err := s.w.Write(p[:keep]); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}
