package sandbox

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// connectBenchScript makes 2,000 sockets of the family $FAM and, with
// CONNECT=1, connects each to a listener of the sandbox's own (a unix
// socket in the workspace, or TCP on loopback).
const connectBenchScript = `python3 - <<'EOF'
import os, socket
fam = os.environ["FAM"]
connect = os.environ["CONNECT"] == "1"
if fam == "unix":
    try:
        os.unlink("b.sock")
    except FileNotFoundError:
        pass
    ln = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    ln.bind("b.sock")
    addr, f = "b.sock", socket.AF_UNIX
else:
    ln = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ln.bind(("127.0.0.1", 0))
    addr, f = ln.getsockname(), socket.AF_INET
ln.listen(4096)
for i in range(2000):
    s = socket.socket(f, socket.SOCK_STREAM)
    if connect:
        s.connect(addr)
        ln.accept()[0].close()
    s.close()
EOF`

// BenchmarkCreateGateConnect measures what judging connect(2) costs, in
// CPU time of the sandbox's cgroup and this process (BenchmarkCreateGate's
// measure): 2,000 connects to the sandbox's own unix and TCP listeners,
// against the same loops without the connects. Per connect, subtract the
// loop's and divide by 2,000.
func BenchmarkCreateGateConnect(b *testing.B) {
	r := newTestRunner(b)
	ws := b.TempDir()
	require.NoError(b, os.Chmod(ws, 0o777))
	for _, w := range []struct{ name, fam, connect string }{
		{"unix-connect-2000", "unix", "1"},
		{"unix-loop-2000", "unix", "0"},
		{"tcp-connect-2000", "tcp", "1"},
		{"tcp-loop-2000", "tcp", "0"},
	} {
		b.Run(w.name, func(b *testing.B) {
			var cpu time.Duration
			for b.Loop() {
				before := selfCPU()
				res, out := run(b, r, Config{Workspace: ws, Env: append(append([]string(nil), DefaultEnv...), "FAM="+w.fam, "CONNECT="+w.connect)}, connectBenchScript)
				require.Zero(b, res.ExitCode, out)
				cpu += selfCPU() - before + res.CPUTime
			}
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}
