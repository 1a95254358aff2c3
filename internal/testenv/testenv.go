// Package testenv holds test helpers shared by packages whose tests need
// privileges, kernel features or tools that a developer's laptop may lack
// but CI always has.
package testenv

import (
	"os"
	"strconv"
	"testing"
	"time"
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

// TimeScale is how many times longer than on real hardware this run's
// deadlines and grace periods should be: TETHER_TEST_TIME_SCALE, which the
// cgroup v2 guest sets under TCG emulation (scripts/vm-test.sh), or 1 when
// it is unset or not a number of at least 1.
func TimeScale() float64 {
	f, err := strconv.ParseFloat(os.Getenv("TETHER_TEST_TIME_SCALE"), 64)
	if err != nil || f < 1 {
		return 1
	}
	return f
}

// Scaled stretches d by TimeScale. It is for a deadline or a grace period
// that is a way out of a hang or a courtesy to the command, never for an
// assertion of speed (those belong in benchmarks).
func Scaled(d time.Duration) time.Duration {
	return time.Duration(float64(d) * TimeScale())
}
