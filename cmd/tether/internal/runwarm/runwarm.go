// Package runwarm is imported by main for its side effect: when this
// process is `tether run` started as root, it starts cgwarm.Prime from the
// package initialisers, about two milliseconds into the process and some
// milliseconds before main runs. The grace period the kernel makes the
// first cgroup move wait for then passes while tether loads its
// configuration and builds the sandbox, instead of after (see
// sandbox/cgwarm). Nothing else imports it: a library user starts the same
// wait from sandbox.Runner.RunGated.
package runwarm

import (
	"os"

	"github.com/tether-dev/tether/sandbox/cgwarm"
)

func init() {
	if len(os.Args) > 1 && os.Args[1] == "run" && os.Geteuid() == 0 {
		go cgwarm.Prime()
	}
}
