// Package sandbox runs one command in a fresh Linux container and removes
// every trace of it afterwards (DESIGN.md §5). It is the execution half of
// tether: after the gates have allowed a command, Run executes it under
// namespaces (mount, pid, ipc, uts, net, cgroup, and always a user
// namespace whose only id is an unprivileged host id), a read-only root
// (rootfs.Layout), a read-write workspace shown through an idmapped mount as
// its owner's, the workspace's protected paths (package internal/protect)
// frozen, Docker's default capabilities minus CAP_MKNOD, CAP_NET_RAW,
// CAP_SETFCAP and CAP_FSETID, no_new_privs, masked and read-only kernel
// paths, Docker's seccomp profile for the native ABI only plus io_uring
// denied and the file-privilege rules (no setuid/setgid modes, no device
// nodes; with -tags seccomp), and cgroup limits under a per-profile parent
// cgroup (cgroup v1, hybrid and v2 via containerd/cgroups). See
// docs/workspace.md for the identity model and the protected paths.
//
// Config is plain data; Config.Spec and Config.Libcontainer translate it
// without touching the host (tested without root). Runner.Run needs root for
// enforced limits; without root it uses a user namespace and reports the
// limits it cannot enforce in Result.NotEnforced. GC reaps what a crashed
// tether left behind.
//
// A state root (Runner.StateRoot) holds containers/ (libcontainer state),
// locks/<id>.lock (held by the owning tether for the container's life, so GC
// can tell live from dead), and two caches kept between runs and removed by
// GC with Caches: skel/<key> (empty roots shared by runs with the same
// mounts) and etc-<hash> (a snapshot of the world-readable /etc entries of
// the host layout, bound as /etc); and protect/empty (the file mounted
// onto reservations). The records of protected-path reservations (which
// live sandboxes hold which workspace's placeholders) are not per state
// root but host-wide, in /run/tether/protect, so that every tether on the
// host agrees; GC of any state root reaps those whose holders are gone
// (protect_linux.go). So are the locks of cgroup prefixes,
// /run/tether/cgroup-locks/<prefix>.lock: every sandbox under a prefix,
// whatever its state root, holds its prefix's lock shared for its life, and
// the last one out (or GC, when none is left) takes it exclusively to
// remove the idle profile cgroups and the prefix in every hierarchy.
//
// Every sandbox, one-shot, session or pooled, is built by one set-up path
// (setUp, setup_linux.go): identity, keeper hold, owner lock, cgroups,
// mounts and the /etc snapshot, the user namespace, protected paths, the
// disk limit, the libcontainer translation, the seccomp filter, the exec
// gate listener and the container, each stage adding its undo to one
// cleanup list that runs on any failure and is the sandbox's teardown
// otherwise. They differ only in what the init does after set-up: a
// one-shot init executes the program (through the trampoline), a session's
// and a pooled sandbox's is the supervisor, which runs commands on request.
// Pools keeps pre-started sandboxes per profile; each serves exactly one
// command and is destroyed (pool_linux.go), and the pool socket hands them
// to a tether run of the same user (pool_serve_linux.go). A reload of the
// owner's configuration (Pools.Reconfigure) drains the pools of changed
// profiles and refuses specs placed under the old one. Pooled sandboxes
// and sessions share each profile's pids budget (Sessions.Pools,
// Pools.Sessions): a session evicts waiting pooled sandboxes before it is
// refused, and a pool builds only within what the sessions leave.
//
// The exec gate (Runner.ExecGate, Sessions.ExecGate): every execve and
// execveat of every process of a sandbox — the command, whatever it runs,
// background and detached processes, a session's supervisor — stops in the
// kernel on a seccomp user notification until tether has read the path and
// argv from the caller's memory (process_vm_readv, the notification id
// re-validated with SECCOMP_IOCTL_NOTIF_ID_VALID after the reads), worked
// out what the exec may run as (the names of the symlinks the path goes
// through, resolved inside the sandbox's root; the interpreter lines of a
// "#!" script, as the kernel builds them) and asked the gate. An allowed
// exec continues (SECCOMP_USER_NOTIF_FLAG_CONTINUE); a refused one fails
// with EPERM and is listed in Result.ExecBlocked. One-shot sandboxes get
// the gate from the trampoline (package seccompexec), which stacks a small
// filter with SECCOMP_FILTER_FLAG_NEW_LISTENER and sends the listener over
// a socketpair before it executes anything; sessions (and one-shot
// sandboxes in a root the trampoline cannot run in) get libcontainer's
// notify action, whose listener libcontainer's parent side sends to an
// abstract socket that accepts only this process. If tether goes away,
// the listener closes and every later exec fails (ENOSYS): the gate fails
// closed. A sandbox without a filter to carry the gate (seccomp off, a
// build without seccomp, unless the trampoline can run) reports
// "exec_gate" in Result.NotEnforced.
//
// The same listener is the creation gate of every sandbox with a
// workspace (notify_create_linux.go): every system call that can name a
// directory entry (mkdir, mknod, symlink, link, rename in all forms,
// creat, open and openat with O_CREAT), and every one that writes an
// existing file through a name (open and openat for writing, truncate),
// waits while tether reads the names; a .git, or a HEAD outside a frozen
// git directory, fails with EPERM and is listed in Result.CreateBlocked, as
// does a protected name (EROFS for a write of an existing file: a host
// rename can detach the read-only bind that froze it). Anything else is performed, with the names
// tether checked, by the sandbox's creation helper (creator_linux.go), a
// process the trampoline or the supervisor forks before the gate's filter
// is installed: the kernel never reads a checked name again, so no second
// thread can swap it. With the walk that freezes the nested
// repositories present at start (protect_nested_linux.go), no sandbox can
// leave a repository the host's git would trust (docs/workspace.md).
//
// The gate is a layer, not the wall. A process with several threads can
// change the argv in its memory between the check and the kernel's own
// read (a time-of-check race no notification closes); a program copied or
// hard-linked under another name, or run through binfmt_misc, a /proc
// magic link or a descriptor of a deleted file, is checked by the names it
// goes by; an argv larger than the kernel's default ARG_MAX (2 MiB) is
// refused rather than checked in part. Another process can swap a symlink
// between the check and the exec: Config.NoExec closes that in the kernel
// for the programs refused outright (a noexec bind of each file). The
// sandbox's namespaces, capabilities, seccomp filter and read-only root
// bound whatever passes the gate.
//
// Config.Landlock confines every process of a sandbox with a Landlock
// ruleset (docs/landlock.md): the trampoline applies it before the
// program runs, a session's supervisor before its Go runtime starts
// threads, so no process of the sandbox is outside it. The kernel's audit
// records (ABI 7; read as root from the audit multicast group, turning
// audit on if it is off) name each refused path in Result.PathsRefused.
// Without Landlock in the kernel Result.NotEnforced lists "landlock";
// without the records, "landlock_audit". With Landlock.ReadOnlyWorkspace
// (the mount plan, mountplan_linux.go) the workspace is also mounted
// read-only but for the policy's write rules, bound writable on top, so
// the metadata calls Landlock does not govern fail with EROFS outside
// them; the gate reports those refusals too (notify_sealed_linux.go).
//
// Runtime observation (Config.Observe, for a job whose mandate observes):
// the gate's filter also notifies open, openat, creat and connect, which
// tether records and always lets go on (Result.Accesses: the workspace's
// and binds' files read, written and executed, with names that lead there
// through the sandbox's own symlinks and /proc links resolved, and IP
// connections; bounded per command, what is dropped or unreadable counted
// in Result.AccessesLost). A sandbox without Observe has no rule for them.
// The names are the sandboxed processes' own: evidence, never a check.
//
// Nothing outlives its owner: before a process builds its first sandbox it
// starts a keeper (package keeper), a small process in a session of its
// own that is told of every sandbox before anything of it exists and of
// its end once nothing is left. When the owner dies, by any cause, SIGKILL
// included, the keeper sees its end and runs GC for the sandboxes it left,
// killing them within milliseconds; a clean exit costs it nothing. No
// parent-death signal is relied on: the kernel ties it to a thread, and a
// one-shot sandbox's pid 1 is the command itself, which may clear its own.
//
// libcontainer starts a container by re-executing the current binary with
// the argument "init": any binary using this package must call Init from
// its main package's init function when IsInit reports true, after
// runtime.LockOSThread.
package sandbox
