// Package testenv holds test helpers shared by packages whose tests need
// privileges, kernel features or tools that a developer's laptop may lack
// but CI always has.
package testenv

import (
	"os"
	"testing"
)

// Required reports whether the environment promises that every privileged
// test can run (REQUIRE_SANDBOX=1, set by .ci/run).
func Required() bool { return os.Getenv("REQUIRE_SANDBOX") == "1" }

// SkipOrFail skips the test with reason, or fails it when Required: in CI a
// test that cannot run is a failure, never a silent skip.
func SkipOrFail(t testing.TB, reason string) {
	t.Helper()
	if Required() {
		t.Fatalf("REQUIRE_SANDBOX=1 but the test cannot run: %s", reason)
	}
	t.Skip(reason)
}

// RequireSandbox skips (or, when Required, fails) a test that runs real
// sandboxes where containers cannot run: not root, or no cgroup filesystem.
func RequireSandbox(t testing.TB) {
	t.Helper()
	switch {
	case os.Geteuid() != 0:
		SkipOrFail(t, "needs root (namespaces and cgroups)")
	case !isDir("/sys/fs/cgroup"):
		SkipOrFail(t, "no cgroup filesystem at /sys/fs/cgroup")
	}
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
