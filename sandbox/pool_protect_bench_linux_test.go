package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// BenchmarkPoolProtectAtTake: what planning and mounting the protected
// paths costs a pooled call when it takes its sandbox (Session.protect),
// on the critical path since they are no longer made ahead: a repository
// with git init's hooks and a nested one. protect-µs/op is that step's
// wall time alone, cpu-µs/op the CPU the process spent meanwhile (on a
// loaded machine the wall time is mostly waiting for a CPU); the build
// and refill between takes are not timed.
func BenchmarkPoolProtectAtTake(b *testing.B) {
	ps := newTestPools(b)
	ws := b.TempDir()
	require := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	require(os.Mkdir(filepath.Join(ws, "sub"), 0o755))
	for _, dir := range []string{ws, filepath.Join(ws, "sub")} {
		out, err := exec.Command("git", "init", "-q", dir).CombinedOutput()
		if err != nil {
			b.Fatalf("git init: %v: %s", err, out)
		}
	}
	p := PoolSpec{Profile: "bench", Size: 1, Spec: SessionSpec{Config: Config{Workspace: ws, Limits: Limits{Pids: 128}}}}
	ps.Prepare(p)
	var took, cpu time.Duration
	b.StopTimer()
	for i := 0; i < b.N; i++ {
		deadline := time.Now().Add(60 * time.Second)
		for ps.Ready("bench") < 1 {
			if time.Now().After(deadline) {
				b.Fatal("the pool did not fill")
			}
			time.Sleep(5 * time.Millisecond)
		}
		pl := ps.lookup("bench")
		s := pl.take(b.Context())
		if s == nil {
			b.Fatal("no sandbox")
		}
		b.StartTimer()
		start, cpu0 := time.Now(), processCPU(b)
		err := s.protect()
		took += time.Since(start)
		cpu += processCPU(b) - cpu0
		b.StopTimer()
		s.end(ErrSessionClosed)
		require(err)
	}
	b.ReportMetric(float64(took.Microseconds())/float64(b.N), "protect-µs/op")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
}

// processCPU is the CPU time this process has used, user and system.
func processCPU(b *testing.B) time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
