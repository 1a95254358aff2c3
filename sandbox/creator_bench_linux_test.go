package sandbox

import (
	"archive/tar"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// BenchmarkCreateGate measures what the creation gate costs a workload
// that creates files, in CPU time (the sandbox's cgroup plus this
// process, where the gate runs; load-independent where wall time is not):
// 2,000 shell redirections, the same loop without them, and tar x of
// 2,000 files. cpu-µs/op is per run; per create, subtract the loop's and
// divide by 2,000.
func BenchmarkCreateGate(b *testing.B) {
	r := newTestRunner(b)
	ws := b.TempDir()
	require.NoError(b, os.Chmod(ws, 0o777))
	f, err := os.Create(filepath.Join(ws, "t.tar"))
	require.NoError(b, err)
	tw := tar.NewWriter(f)
	for i := range 2000 {
		require.NoError(b, tw.WriteHeader(&tar.Header{Name: fmt.Sprintf("d%d/f%d", i%20, i), Mode: 0o644, Size: 2, Typeflag: tar.TypeReg}))
		_, err := tw.Write([]byte("x\n"))
		require.NoError(b, err)
	}
	require.NoError(b, tw.Close())
	require.NoError(b, f.Close())
	for _, w := range []struct{ name, script string }{
		{"redirect-2000", `i=0; while [ $i -lt 2000 ]; do : > f$i; i=$((i+1)); done; rm -f f*`},
		{"loop-2000", `i=0; while [ $i -lt 2000 ]; do : ; i=$((i+1)); done`},
		{"tar-x-2000", `mkdir x && tar xf t.tar -C x && rm -rf x`},
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

// selfCPU is this process's user and system time.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
