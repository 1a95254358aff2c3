// Package testenv holds test helpers shared by packages whose tests run real
// sandboxes.
package testenv

import (
	"os"
	"testing"
)

// RequireSandbox skips the test when containers cannot run here (not root,
// no cgroup filesystem), or fails it when REQUIRE_SANDBOX=1 (CI) says they
// must run.
func RequireSandbox(t testing.TB) {
	t.Helper()
	reason := ""
	switch {
	case os.Geteuid() != 0:
		reason = "needs root (namespaces and cgroups)"
	case !isDir("/sys/fs/cgroup"):
		reason = "no cgroup filesystem at /sys/fs/cgroup"
	}
	if reason == "" {
		return
	}
	if os.Getenv("REQUIRE_SANDBOX") == "1" {
		t.Fatalf("REQUIRE_SANDBOX=1 but sandbox tests cannot run: %s", reason)
	}
	t.Skip(reason)
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
