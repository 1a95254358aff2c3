package sandbox

import "errors"

// Sentinel errors callers branch on; they are returned wrapped.
var (
	// ErrInvalidConfig: the Config is malformed (relative path, negative
	// limit, host network not allowed...). Nothing was started.
	ErrInvalidConfig = errors.New("invalid sandbox config")
	// ErrSeccompUnavailable: seccomp is required but this binary was built
	// without it (build with -tags seccomp and libseccomp-dev).
	ErrSeccompUnavailable = errors.New("seccomp required but this tether was built without seccomp support (rebuild with -tags seccomp)")
	// ErrNotFound: the program does not exist in the sandbox (exit status 127).
	ErrNotFound = errors.New("command not found")
	// ErrNotExecutable: the program exists but cannot be executed (exit status 126).
	ErrNotExecutable = errors.New("command not executable")
	// ErrNoCommand: Command has neither Args nor Shell.
	ErrNoCommand = errors.New("no command given")
	// ErrUnsafeWorkspace: the workspace cannot be protected: a protected
	// path (or a directory on the way to one) is a symlink, so it cannot be
	// frozen without following it; or tether's own config or state
	// (Config.Hide) holds the workspace, or lies in it where it cannot be
	// hidden. Nothing was started.
	ErrUnsafeWorkspace = errors.New("workspace cannot be protected")
	// ErrLandlockUnavailable: a Landlock ruleset was asked for and the
	// kernel has Landlock, but this sandbox cannot apply it before its
	// program runs. Nothing was started.
	ErrLandlockUnavailable = errors.New("cannot apply the Landlock ruleset in this sandbox")
	// ErrDynamicBinary: a session (or pooled sandbox) was asked for on a
	// prepared root filesystem that lacks the dynamic loader this tether
	// needs: its supervisor is this binary, run inside the root. Build
	// tether statically (make build). Nothing was started.
	ErrDynamicBinary = errors.New("this tether is dynamically linked and cannot run inside the root filesystem")
	// ErrEnginePanic: libcontainer panicked while starting the sandbox
	// (its mount-source thread's deadline passed under heavy load, see
	// startGuarded). The start failed and was undone; nothing ran, and a
	// later start may succeed.
	ErrEnginePanic = errors.New("the sandbox engine (libcontainer) panicked while starting the sandbox")
	// ErrKeeper: the keeper that reaps this process's sandboxes if it
	// dies could not be started or told; nothing was started.
	ErrKeeper = errors.New("cannot start the keeper that reaps this process's sandboxes if it dies")
	// ErrCgroupDelegation: tether runs in a cgroup v2 subtree delegated to
	// it (systemd's Delegate=yes) that it cannot use for its sandboxes'
	// cgroups; nothing was started.
	ErrCgroupDelegation = errors.New("cannot place sandboxes in the delegated cgroup")
)
