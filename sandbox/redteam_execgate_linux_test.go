package sandbox

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Red-team cases for the exec gate: a "#!" line the gate reads otherwise
// than the kernel's binfmt_script. The stand-in "reboot" is a symlink to
// touch(1), so that it leaves ws/ran-reboot behind when it really runs;
// the gate refuses every exec that runs as "reboot" by any of its names.
func TestExecGateShebangAsTheKernelReadsIt(t *testing.T) {
	t.Skip("known break: the exec gate's shebang reader differs from binfmt_script: a NUL ends the interpreter and its argument for the kernel, not for the gate; and the kernel follows 5 nested scripts, the gate 4 (owner w16)")
	r := newTestRunner(t)
	ws := t.TempDir()
	bin := filepath.Join(ws, "bin")
	require.NoError(t, os.MkdirAll(bin, 0o755))
	require.NoError(t, os.Symlink("/usr/bin/touch", filepath.Join(bin, "reboot")))
	reboot := filepath.Join(bin, "reboot")
	ran := filepath.Join(ws, "ran-reboot")
	script := func(name, line string) {
		require.NoError(t, os.WriteFile(filepath.Join(ws, name), []byte(line), 0o755))
	}
	// The kernel ends the interpreter's name at a NUL (next_terminator):
	// it runs bin/reboot; a reader that cuts only at blanks sees the name
	// "reboot\x00junk".
	script("nul", "#!"+reboot+"\x00junk\n")
	// The kernel rewrites up to 5 scripts before it runs a binary
	// (exec_binprm's depth > 5), so c1 → c2 → c3 → c4 → c5 → reboot runs.
	for i := 1; i <= 4; i++ {
		script("c"+string(rune('0'+i)), "#!"+filepath.Join(ws, "c"+string(rune('0'+i+1)))+"\n")
	}
	script("c5", "#!"+reboot+"\n")
	cases := []struct{ name, script string }{
		{"NUL after the interpreter", "./nul " + ran},
		{"five nested scripts", "./c1 " + ran},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			os.Remove(ran)
			g := newRefuse("reboot")
			r.ExecGate = g.gate
			defer func() { r.ExecGate = nil }()
			res, out := gateRun(t, r, ws, c.script+"; echo after=$?")
			// From the host, after the sandbox is gone.
			assert.NoFileExists(t, ran, "the stand-in ran: %s", out)
			assert.NotEmpty(t, res.ExecBlocked, out)
			assert.Contains(t, out, "after=")
		})
	}
}
