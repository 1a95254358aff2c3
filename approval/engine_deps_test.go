package approval

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNoProcessOrSandboxDependencies keeps DESIGN.md §7's promise: the
// approval package never imports libcontainer or anything that spawns
// processes.
func TestNoProcessOrSandboxDependencies(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not found")
	}
	out, err := exec.Command(goBin, "list", "-deps", "-f", "{{.ImportPath}}", "github.com/tether-dev/tether/approval").CombinedOutput()
	require.NoError(t, err, "%s", out)
	deps := strings.Fields(string(out))
	require.Contains(t, deps, "github.com/tether-dev/tether/shellparse", "the list is real")
	for _, d := range deps {
		for _, banned := range []string{"os/exec", "github.com/opencontainers/", "github.com/containerd/", "github.com/tether-dev/tether/sandbox", "github.com/tether-dev/tether/runner"} {
			assert.False(t, strings.HasPrefix(d, banned), "approval depends on %s", d)
		}
	}
}
