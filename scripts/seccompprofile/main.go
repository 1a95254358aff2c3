// Command seccompprofile prints, as OCI runtime-spec JSON, the seccomp
// filter tether gives every sandbox (sandbox.SeccompProfile), for
// scripts/bench-launch.sh to hand to runc. It is a developer tool, not part
// of tether. Build it with -tags seccomp.
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/tether-dev/tether/sandbox"
)

func main() {
	prof, err := sandbox.SeccompProfile()
	if err != nil {
		fmt.Fprintln(os.Stderr, "seccompprofile:", err)
		os.Exit(1)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", " ")
	if err := enc.Encode(prof); err != nil {
		fmt.Fprintln(os.Stderr, "seccompprofile:", err)
		os.Exit(1)
	}
}
