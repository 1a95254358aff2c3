package sandbox

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// BenchmarkCreateGateWriteOpen measures what judging opens for writing
// without O_CREAT costs (gatedOpen): 2,000 opens of an existing workspace
// file O_WRONLY, and the same loop with O_RDONLY, which no filter
// notifies, in CPU time of the sandbox's cgroup and this process, where
// the gate runs (BenchmarkCreateGate's measure). Per write-open, subtract
// the read loop's and divide by 2,000.
func BenchmarkCreateGateWriteOpen(b *testing.B) {
	r := newTestRunner(b)
	ws := b.TempDir()
	require.NoError(b, os.Chmod(ws, 0o777))
	require.NoError(b, os.WriteFile(ws+"/f", []byte("x\n"), 0o666))
	loop := func(flags string) string {
		return `python3 -c 'import os
for i in range(2000): os.close(os.open("f", os.` + flags + `))'`
	}
	for _, w := range []struct{ name, script string }{
		{"wronly-2000", loop("O_WRONLY")},
		{"rdonly-2000", loop("O_RDONLY")},
	} {
		b.Run(w.name, func(b *testing.B) {
			var cpu time.Duration
			for b.Loop() {
				before := selfCPU()
				res, out := run(b, r, Config{Workspace: ws}, w.script)
				require.Zero(b, res.ExitCode, out)
				cpu += selfCPU() - before + res.CPUTime
			}
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}
