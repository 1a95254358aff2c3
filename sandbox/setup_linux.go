package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"

	"github.com/opencontainers/runc/libcontainer"
	"github.com/opencontainers/runc/libcontainer/configs"
	"golang.org/x/sys/unix"

	"github.com/tether-dev/tether/rootfs"
)

// cleanup is a list of undo steps run in reverse, gVisor's cleanup.Cleanup:
// each set-up stage adds the step that undoes it as soon as it has done
// something, so a failure anywhere undoes exactly what was built, and on
// success the same list is the sandbox's teardown. The zero value is empty.
// A cleanup is not safe for concurrent use.
type cleanup struct {
	steps []func() error
}

// add appends the undo step of a stage that has just succeeded.
func (c *cleanup) add(step func() error) { c.steps = append(c.steps, step) }

// addFunc appends an undo step that cannot fail.
func (c *cleanup) addFunc(step func()) { c.add(func() error { step(); return nil }) }

// run runs every step, the last added first, and joins their errors. It
// empties the list: running it again does nothing.
func (c *cleanup) run() error {
	steps := c.steps
	c.steps = nil
	var errs []error
	for i := len(steps) - 1; i >= 0; i-- {
		if err := steps[i](); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// release hands the steps to the caller (the sandbox's teardown) and
// leaves the list empty, so that a deferred run undoes nothing.
func (c *cleanup) release() cleanup {
	out := *c
	c.steps = nil
	return out
}

// setupOptions are what a sandbox's set-up takes besides its Config: the
// Runner's or Sessions' fields, and what differs between a one-shot
// sandbox (whose init executes the program) and a supervised one (whose
// init is the supervisor of a session or a pooled sandbox).
type setupOptions struct {
	stateRoot, cgroupPrefix, profile string
	profileLimits                    Limits
	userNSBase                       int
	execGate                         ExecGate

	// trampoline: the program is started through package seccompexec's
	// trampoline, which loads the compiled filter (and the exec gate)
	// itself; supervised sandboxes leave both to libcontainer's init.
	trampoline bool
	// libcontainerSeccomp: as Runner.libcontainerSeccomp.
	libcontainerSeccomp bool
	// adjust changes the translated libcontainer config before the exec
	// gate and the container are made from it (a supervisor's bind and
	// labels).
	adjust func(lc *configs.Config)
	// lateProtect: the protected paths are planned, reserved and mounted
	// when the sandbox is given its command (sandboxSetup.protectLate),
	// not at set-up. A pooled sandbox waits for its command while the
	// host changes the workspace (git init, a clone, a new dot-file), and
	// what is protected is a function of the workspace's contents: it
	// must be what a cold sandbox would plan at the call, and the
	// placeholders of its reservations must not stand in the host's way
	// while no command runs (docs/workspace.md).
	lateProtect bool
}

// sandboxSetup is one sandbox between set-up and teardown: what the
// stages built, and undo, which removes all of it. Run and Session.create
// make it with setUp, start the container's init their own way, call
// started, and run undo when the sandbox is done.
type sandboxSetup struct {
	stateRoot, prefix, profile string
	id                         string
	cfg                        Config // validated, with the root layout filled in
	rootless                   bool
	// notEnforced lists the protections this environment cannot apply.
	notEnforced []string

	placement Placement
	hold      *usernsHold // nil when rootless
	protect   *protection // nil without protected paths (or before protectLate)
	// late: the protected paths wait for protectLate
	// (setupOptions.lateProtect); lateMarks are the workspace and the
	// binds' sources as the container's mounts were planned, which
	// protectLate requires to be unchanged.
	late      bool
	lateMarks map[string]sourceMark
	disk      *diskLimit      // nil without an enforced disk limit
	prep      *trampolinePrep // nil unless the program starts through the trampoline
	tramp     *trampoline     // nil unless the program starts through it
	gate      *execGateRun    // nil without an exec gate that can be carried
	// landlock is the encoded Landlock ruleset (Config.Landlock) the
	// trampoline or the supervisor applies; nil without one. audit reads
	// the paths it refused (nil when those cannot be learnt).
	landlock  []byte
	audit     *landlockAudit
	lc        *configs.Config
	container *libcontainer.Container

	// cgroupPaths are the container's cgroup directories, known once its
	// init runs (started): what it used is read from them.
	cgroupPaths map[string]string
	// cgroupsRemoved: libcontainer's Destroy removed the container's
	// cgroups, so no hierarchy needs scanning for them.
	cgroupsRemoved bool

	undo cleanup
}

// setUp builds a sandbox up to a created container whose init is not yet
// started, in one sequence for every kind of sandbox: the identity (id,
// state directories), the keeper's hold, the owner lock, cgroups, mounts
// and the /etc snapshot, the user namespace, protected paths, the disk
// limit, the seccomp filter and the exec gate listener, and the container.
// Every stage that builds something adds its undo at once; on error all of
// them have run and nothing is left. On success the caller owns s.undo.
// The sandbox's keeper is up when setUp returns: the init may start.
func setUp(cfg Config, o setupOptions) (_ *sandboxSetup, err error) {
	s := &sandboxSetup{rootless: os.Geteuid() != 0}
	defer func() {
		if err != nil {
			_ = s.undo.run()
		}
	}()
	if err := s.resolve(cfg, o); err != nil {
		return nil, err
	}
	if err := s.stateDirs(o); err != nil {
		return nil, err
	}
	// From here on the sandbox may leave something behind: the keeper
	// reaps it if this process dies before the release (the last undo).
	release, keeperUp, err := keep(s.stateRoot, relPrefix(s.prefix))
	if err != nil {
		return nil, err
	}
	s.undo.addFunc(release)
	// The compiled filter and the trampoline's descriptors are prepared
	// alongside the stages below.
	if o.trampoline {
		filter := s.cfg.denyFilter() && !s.rootless && !o.libcontainerSeccomp
		gate := o.execGate != nil || s.createGate()
		wantLandlock := (s.cfg.Landlock != nil || s.cfg.Network == NetworkHost) && landlockVersion() > 0
		if filter || gate || wantLandlock {
			prep := prepareTrampoline(s.stateRoot, s.cfg.Rootfs.Kind == rootfs.KindHost, filter, s.cfg.tcpOnly(), gate, wantLandlock)
			s.prep = prep
			s.undo.addFunc(func() {
				if t := prep.wait(); t != nil {
					t.close()
				}
			})
		}
	}
	// The one sequence: a stage added for one kind of sandbox is added
	// for all of them.
	for _, stage := range []func(*sandboxSetup, setupOptions) error{
		(*sandboxSetup).ownerLock,
		(*sandboxSetup).cgroups,
		(*sandboxSetup).mounts,
		(*sandboxSetup).identity,
		(*sandboxSetup).protectedPaths,
		(*sandboxSetup).diskLimit,
		(*sandboxSetup).translate,
		(*sandboxSetup).landlockRuleset,
		(*sandboxSetup).seccomp,
		(*sandboxSetup).execGate,
		(*sandboxSetup).create,
	} {
		if err := stage(s, o); err != nil {
			return nil, err
		}
	}
	// No process of the sandbox may exist before its keeper runs.
	if err := keeperUp(); err != nil {
		return nil, err
	}
	return s, nil
}

// resolve checks the names and the config, fills in the host layout, says
// which protections cannot be had here and picks the container's id.
func (s *sandboxSetup) resolve(cfg Config, o setupOptions) error {
	r := Runner{StateRoot: o.stateRoot, CgroupPrefix: o.cgroupPrefix, Profile: o.profile}
	var err error
	if s.stateRoot, s.prefix, s.profile, err = r.paths(); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	if cfg.Rootfs.Kind == "" {
		hostLayoutOnce.Do(func() { hostLayout, hostLayoutErr = rootfs.HostLayout() })
		if hostLayoutErr != nil {
			return hostLayoutErr
		}
		cfg.Rootfs = hostLayout
	}
	s.cfg = cfg
	if s.rootless {
		// Without delegated cgroups, limits the kernel enforces through
		// cgroups cannot be applied; say which instead of pretending.
		pl := o.profileLimits
		for _, l := range []struct {
			name string
			set  bool
		}{
			{"memory", cfg.Limits.MemoryBytes > 0 || pl.MemoryBytes > 0},
			{"pids", cfg.Limits.Pids > 0 || pl.Pids > 0},
			{"cpus", cfg.Limits.CPUs > 0 || pl.CPUs > 0},
		} {
			if l.set {
				s.notEnforced = append(s.notEnforced, l.name)
			}
		}
	}
	if !s.rootless && swapUnbounded() && (cfg.Limits.MemoryBytes > 0 || o.profileLimits.MemoryBytes > 0) {
		// The memory limit holds for memory only: what is swapped out
		// escapes it.
		s.notEnforced = append(s.notEnforced, "swap")
	}
	if !seccompAvailable && cfg.Seccomp == SeccompOptional {
		s.notEnforced = append(s.notEnforced, "seccomp")
	}
	s.id, err = newID(s.profile)
	return err
}

// stateDirs creates the state root and its subdirectories. 0711 where a
// user-namespaced container's root (an unprivileged host uid) must
// traverse to its empty root, but may list nothing; 0700 elsewhere.
func (s *sandboxSetup) stateDirs(o setupOptions) error {
	if err := os.MkdirAll(s.stateRoot, 0o711); err != nil {
		return fmt.Errorf("creating state root: %w", err)
	}
	if !s.rootless {
		if err := stateRootReachable(s.stateRoot, placementFor("", s.cfg, false, o.userNSBase).HostUID); err != nil {
			return err
		}
	}
	for _, d := range []struct {
		name string
		perm os.FileMode
	}{{containersDir, 0o700}, {locksDir, 0o700}, {rootsDir, 0o711}, {skelDir, 0o711}} {
		if err := os.Mkdir(filepath.Join(s.stateRoot, d.name), d.perm); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("creating state directory %s: %w", d.name, err)
		}
	}
	return nil
}

// ownerLock takes the container's owner lock: gc leaves a container alone
// while the tether that made it holds it.
func (s *sandboxSetup) ownerLock(setupOptions) error {
	l, err := lockOwner(s.stateRoot, s.id)
	if err != nil {
		return err
	}
	s.undo.add(func() error {
		os.Remove(filepath.Join(s.stateRoot, locksDir, s.id+".lock"))
		return l.Close()
	})
	return nil
}

// testHookProfileCgroup, when set (by tests), is called by every set-up
// between creating its profile cgroup and placing its container there.
var testHookProfileCgroup atomic.Pointer[func(profileCgroup string)]

// cgroups takes the cgroup prefix's lock shared, creates the profile's
// parent cgroup with its limits, and arranges for the container's cgroups
// (and, when no other sandbox on the host is left under the prefix, the
// idle profiles and the prefix) to be removed.
func (s *sandboxSetup) cgroups(o setupOptions) error {
	profileCgroup := s.prefix + "/" + s.profile
	if !s.rootless {
		cgLock, err := prefixLock(s.prefix, unix.LOCK_SH)
		if err != nil {
			return fmt.Errorf("locking cgroup prefix %s: %w", s.prefix, err)
		}
		s.undo.addFunc(func() {
			cgLock.Close()
			removeIdleProfile(s.prefix)
		})
		// Without profile limits there is nothing to write: libcontainer
		// creates the parent directories itself when it places the
		// container (creating them here costs ~1 ms in every hierarchy).
		if o.profileLimits != (Limits{}) {
			if err := ensureProfileCgroup(profileCgroup, o.profileLimits); err != nil {
				return err
			}
		}
		if hook := testHookProfileCgroup.Load(); hook != nil {
			(*hook)(profileCgroup)
		}
	}
	s.undo.add(func() error {
		if s.cgroupsRemoved {
			return nil
		}
		return removeCgroupTree(profileCgroup + "/" + s.id)
	})
	s.placement = placementFor(profileCgroup+"/"+s.id, s.cfg, s.rootless, o.userNSBase)
	return nil
}

// mounts prepares what the container's mounts need: the world-readable
// /etc snapshot (a bind of the host's /etc entries would show
// /etc/ssl/private to a sandbox root with CAP_DAC_OVERRIDE), the shared
// empty root of a host-layout container, the sources' owners for the
// idmapped mounts and the mount points. gc keeps the snapshot and the
// root while any container is alive.
func (s *sandboxSetup) mounts(setupOptions) error {
	var err error
	p := &s.placement
	if s.cfg.Rootfs.Kind == rootfs.KindHost {
		if etc, _ := etcEntries(s.cfg.Rootfs.Binds); len(etc) > 0 {
			if p.EtcDir, err = etcSnapshot(s.stateRoot, etc); err != nil {
				return err
			}
		}
		if p.RootDir, err = sharedRoot(s.stateRoot, s.cfg, *p); err != nil {
			return err
		}
	}
	if p.Owners, err = sourceOwners(s.cfg); err != nil {
		return err
	}
	p.NoExec = noExecFiles(s.cfg.Rootfs, s.cfg.NoExec)
	return prepareMountpoints(s.cfg)
}

// identity holds the user namespace that maps the sandbox's root to its
// unprivileged host id until the init has joined it (started).
func (s *sandboxSetup) identity(setupOptions) error {
	if s.rootless {
		return nil
	}
	hold, err := holdUserNS(s.placement.HostUID, s.placement.HostGID)
	if err != nil {
		return err
	}
	s.hold = hold
	s.undo.add(hold.release)
	s.placement.UserNSPath = hold.path
	return nil
}

// protectedPaths reserves the workspace's protected paths, mounted over
// the init's view before anything of the sandbox's runs (started).
func (s *sandboxSetup) protectedPaths(o setupOptions) error {
	if o.lateProtect {
		s.late = true
		var err error
		if s.lateMarks, err = sourceMarks(s.cfg); err != nil {
			return err
		}
		// The teardown releases what protectLate reserved, at the place
		// an early plan's release would have (after the container is
		// destroyed).
		s.undo.add(func() error {
			if s.protect == nil {
				return nil
			}
			return s.protect.release()
		})
		return nil
	}
	pr, err := protectFor(s.stateRoot, s.cfg, s.rootless, &s.notEnforced)
	if err != nil || pr == nil {
		return err
	}
	s.protect = pr
	s.undo.add(pr.release)
	return nil
}

// protectLate plans the protected paths of a sandbox set up with
// lateProtect, reserves them and mounts them into the view of its init
// (pid), as protectedPaths and started do for any other sandbox, and
// gives its creation gate the plan's trees. It is called once, before
// anything of the sandbox's runs; the caller must not run the command
// when it fails (the sandbox is then destroyed: its teardown releases
// whatever was reserved). It returns what the plan could not enforce
// ("nested-repos", "protected-links"), for the command's result.
func (s *sandboxSetup) protectLate(pid int) (notEnforced []string, err error) {
	if !s.late || s.protect != nil {
		return nil, errors.New("protectLate: not a sandbox waiting for its protected paths")
	}
	// The container bound the workspace and the binds' sources as they
	// were at set-up: the plan made now is only theirs if they are
	// still the same directories, owned by the same user (the id
	// mapping was made for that owner).
	marks, err := sourceMarks(s.cfg)
	if err != nil {
		return nil, err
	}
	for src, m := range s.lateMarks {
		if marks[src] != m {
			return nil, fmt.Errorf("%w: %s was replaced or changed owner since the sandbox was made", ErrUnsafeWorkspace, src)
		}
	}
	pr, err := protectFor(s.stateRoot, s.cfg, s.rootless, &notEnforced)
	Trace("pool protect planned")
	if err != nil || pr == nil {
		return nil, err
	}
	s.protect = pr // released by the teardown, mounted or not
	if err := pr.apply(pid); err != nil {
		return nil, err
	}
	if s.gate != nil && s.gate.create != nil {
		s.gate.create.protect(pr)
	}
	return notEnforced, nil
}

// diskLimit holds the workspace's disk limit for the sandbox's life.
func (s *sandboxSetup) diskLimit(setupOptions) error {
	d, err := diskLimitFor(s.stateRoot, s.cfg, &s.notEnforced)
	if err != nil || d == nil {
		return err
	}
	s.disk = d
	s.undo.add(d.release)
	return nil
}

// seccomp decides who loads the filter. With the filter compiled
// beforehand, the container's init compiles nothing: the program starts
// through the trampoline that loads it. Without (no root for the
// compiler's ptrace, or another filter than the one prepared),
// libcontainer's init compiles and loads it itself. With a gate and no
// compiled filter for lc, the trampoline installs the gate only and
// libcontainer's init loads lc's filter.
func (s *sandboxSetup) seccomp(o setupOptions) error {
	if s.prep == nil {
		return nil
	}
	t := s.prep.wait()
	switch {
	case t == nil:
	case t.loads(s.lc):
		s.lc.Seccomp = nil
	case t.gateHost != nil || s.landlock != nil:
		t.prog = nil
	default:
		t = nil
	}
	s.tramp = t
	if s.landlock != nil && o.trampoline {
		// Only the trampoline can apply the ruleset before the program
		// runs: without it, refuse rather than run unconfined.
		if t == nil {
			return fmt.Errorf("%w: this tether cannot start programs in this root through its trampoline (build it statically: make build)", ErrLandlockUnavailable)
		}
		t.landlock = s.landlock
	}
	return nil
}

// landlockRuleset encodes the sandbox's Landlock ruleset, when it has one
// (or shares the host's network namespace: hostNetworkScope) and the
// kernel has Landlock, for the trampoline (one-shot) or the
// supervisor (sessions, pooled sandboxes) to apply before anything of the
// sandbox's runs, and opens the kernel's audit records that name what it
// refused.
func (s *sandboxSetup) landlockRuleset(setupOptions) error {
	if s.cfg.Landlock == nil {
		s.landlock = hostNetworkScope(s.cfg, &s.notEnforced)
		return nil
	}
	ll, err := landlockFor(s.cfg, s.placement, &s.notEnforced)
	if err != nil || ll == nil {
		return err
	}
	s.landlock = ll
	if landlockVersion() < 7 {
		// Below ABI 7 the kernel logs no refusal (the log flags of
		// landlock_restrict_self are ABI 7's): the ruleset holds, and
		// which paths it refused nobody learns (docs/landlock.md).
		s.notEnforced = append(s.notEnforced, "landlock_audit")
		return nil
	}
	if s.audit, err = landlockAuditOnce(); err != nil {
		s.audit = nil
		s.notEnforced = append(s.notEnforced, "landlock_audit")
	}
	return nil
}

// createGate says whether the sandbox gets the creation gate: every
// sandbox that writes a workspace or a writable bind does (no repository
// may be made in them), unless every writable bind is Scratch.
func (s *sandboxSetup) createGate() bool {
	if s.cfg.Workspace != "" {
		return true
	}
	for _, b := range s.cfg.Binds {
		if !b.ReadOnly && !b.Scratch {
			return true
		}
	}
	return false
}

// translate makes the libcontainer config of the sandbox (a pure
// translation, Config.Libcontainer) and applies the kind's adjustments.
func (s *sandboxSetup) translate(o setupOptions) error {
	lc, err := s.cfg.Libcontainer(s.id, s.placement)
	if err != nil {
		return err
	}
	if o.adjust != nil {
		o.adjust(lc)
	}
	s.lc = lc
	return nil
}

// execGate starts the exec gate's listener: on the trampoline's socket
// when the program starts through it, else on libcontainer's notify
// action in the filter (which then carries it to every process,
// supervisor included).
func (s *sandboxSetup) execGate(o setupOptions) error {
	createGate := s.createGate()
	if o.execGate == nil && !createGate {
		return nil
	}
	// Observation rides on the exec gate (as it records the execs).
	gcfg := s.cfg
	gcfg.Observe = s.cfg.Observe && o.execGate != nil
	g, err := startExecGate(s.profile, o.execGate, gcfg, s.protect.createGate(createGate), s.lc, s.tramp, !o.trampoline)
	if err != nil {
		return err
	}
	if g != nil && createGate && !g.performs {
		// The gate checks the names but the kernel goes on with what it
		// reads again (a second thread can swap them, creator_linux.go),
		// and with the caller's modes and connects.
		for _, name := range helperRules {
			if !slices.Contains(s.notEnforced, name) {
				s.notEnforced = append(s.notEnforced, name)
			}
		}
	}
	if g == nil {
		s.notEnforced = append(s.notEnforced, gateNotEnforced(o.execGate != nil, createGate)...)
		if gcfg.Observe {
			s.notEnforced = append(s.notEnforced, "observation")
		}
		return nil
	}
	s.gate = g
	s.undo.addFunc(g.close)
	return nil
}

// create makes the libcontainer container; its undo kills whatever runs
// in it and destroys it (processes, cgroups, state).
func (s *sandboxSetup) create(setupOptions) error {
	c, err := libcontainer.Create(filepath.Join(s.stateRoot, containersDir), s.id, s.lc)
	if err != nil {
		return fmt.Errorf("creating container: %w", err)
	}
	s.container = c
	s.undo.add(func() error {
		_ = c.Signal(unix.SIGKILL)
		if err := c.Destroy(); err != nil {
			return err
		}
		s.cgroupsRemoved = true
		return nil
	})
	return nil
}

// started finishes the set-up once the container's init (pid) runs and
// before it runs anything of the sandbox's: the user namespace hold is
// released (the init has joined it), memfds are made non-executable in
// its pid namespace (memfdNoExec; "memfd_noexec" in notEnforced where
// that cannot be done), the protected paths are mounted into its view,
// and the cgroups it was placed in are recorded. On error the caller must
// kill the init; callers read notEnforced after it.
func (s *sandboxSetup) started(process *libcontainer.Process) error {
	if s.tramp != nil {
		s.tramp.started()
	}
	if s.hold != nil {
		_ = s.hold.release()
	}
	if st, err := s.container.State(); err == nil {
		s.cgroupPaths = st.CgroupPaths
	}
	pid, err := process.Pid()
	if err != nil {
		return err
	}
	// Before anything of the sandbox's runs (one-shot: the init waits on
	// its exec fifo; a session's or pooled sandbox's supervisor runs
	// nothing before it is asked): no memfd it makes can be executed.
	if memfdNoExec(pid) != nil {
		s.notEnforced = append(s.notEnforced, "memfd_noexec")
	}
	if s.protect == nil {
		return nil
	}
	return s.protect.apply(pid)
}
