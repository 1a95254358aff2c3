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

// TestNotifyListenerSurvivesBadPointers: the names the gate reads come
// from the sandbox's memory, so every pointer is hostile. A name that
// runs into an unmapped page without its NUL, an unmapped name, argv
// array or argv element: each call fails in the sandbox with an error,
// tether goes on (it panicked in memReader.cstring on a read that
// returned -1), and the gates still refuse afterwards.
func TestNotifyListenerSurvivesBadPointers(t *testing.T) {
	r := newTestRunner(t)
	ws := t.TempDir()
	script := `python3 - <<'EOF'
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.syscall.argtypes = [ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
p = libc.mmap(None, 8192, 3, 0x22, -1, 0)  # PROT_READ|WRITE, MAP_PRIVATE|ANONYMOUS
libc.munmap(ctypes.c_void_p(p + 4096), 4096)
ctypes.memset(p, ord("a"), 4096)  # no NUL before the unmapped page
argv = (ctypes.c_void_p * 3)(ctypes.cast(ctypes.c_char_p(b"true"), ctypes.c_void_p).value, 0x1000, 0)
for name, nr, a, b in [("mkdir-unterminated", 83, p, 0o755), ("mkdir-unmapped", 83, 0x1000, 0o755),
                       ("execve-unterminated", 59, p, None), ("execve-unmapped-argv", 59, b"/bin/true", 0x1000),
                       ("execve-unmapped-arg", 59, b"/bin/true", ctypes.addressof(argv))]:
    r = libc.syscall(nr, a, b, None)
    print(name, r, ctypes.get_errno(), flush=True)
EOF
mkdir .git; echo git=$?; echo after`
	res, out := gateRun(t, r, ws, script)
	t.Log(out)
	assert.Contains(t, out, "mkdir-unterminated -1 ")
	assert.Contains(t, out, "execve-unmapped-arg -1 ")
	assert.Contains(t, out, "git=1", "the creation gate still refuses")
	assert.Contains(t, out, "after")
	assert.NotEmpty(t, res.CreateBlocked)
	// tether is alive: the next sandbox runs.
	_, out = gateRun(t, r, ws, "echo again")
	assert.Equal(t, "again\n", out)
}
