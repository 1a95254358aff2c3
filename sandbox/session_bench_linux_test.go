package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Compare in one run:
//
//	go test -tags seccomp -run XXX -bench 'PlainExecTrue|WarmSessionTrue' -count 5 ./sandbox/

// BenchmarkPlainExecTrue is the baseline: os/exec of /bin/true on the host.
func BenchmarkPlainExecTrue(b *testing.B) {
	var lat []time.Duration
	for b.Loop() {
		t0 := time.Now()
		if err := exec.Command("/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	reportMedian(b, lat)
}

func reportMedian(b *testing.B, lat []time.Duration) {
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "median-ns")
}

// BenchmarkWarmSessionTrue runs /bin/true in an already open session.
func BenchmarkWarmSessionTrue(b *testing.B) {
	m := newTestSessions(b)
	spec := SessionSpec{Config: Config{Limits: Limits{Pids: 256, Timeout: 30 * time.Second}}}
	if !seccompAvailable {
		spec.Config.Seccomp = SeccompOptional
	}
	s, err := m.Open(context.Background(), "default", "bench", spec)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	cmd := Command{Args: []string{"/bin/true"}}
	for range 20 { // warm up
		if _, err := s.Run(ctx, cmd); err != nil {
			b.Fatal(err)
		}
	}
	var lat []time.Duration
	for b.Loop() {
		t0 := time.Now()
		res, err := s.Run(ctx, cmd)
		if err != nil || res.ExitCode != 0 {
			b.Fatal(err, res)
		}
		lat = append(lat, time.Since(t0))
	}
	reportMedian(b, lat)
}

// BenchmarkSessionCreate opens and closes a session (sandbox creation,
// supervisor start, first command, teardown).
func BenchmarkSessionCreate(b *testing.B) {
	m := newTestSessions(b)
	spec := SessionSpec{Config: Config{Seccomp: SeccompOptional, Limits: Limits{Pids: 256}}}
	ctx := context.Background()
	var open time.Duration
	i := 0
	for b.Loop() {
		i++
		t0 := time.Now()
		s, err := m.Open(ctx, "default", fmt.Sprint("c", i), spec)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Run(ctx, Command{Args: []string{"/bin/true"}}); err != nil {
			b.Fatal(err)
		}
		open += time.Since(t0)
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(open.Milliseconds())/float64(i), "open+first-ms")
}

// BenchmarkIdleSessionMemory opens 20 idle sessions and reports the host
// side cost per session (Go heap and stacks, and process RSS) and the RSS
// of one supervisor inside its sandbox.
func BenchmarkIdleSessionMemory(b *testing.B) {
	const n = 20
	for b.Loop() {
		m := newTestSessions(b)
		spec := SessionSpec{Config: Config{Seccomp: SeccompOptional, Limits: Limits{Pids: 256}}}
		ctx := context.Background()
		before, rssBefore := goMem(), selfRSS("/proc/self/status")
		var ss []*Session
		for i := 0; i < n; i++ {
			s, err := m.Open(ctx, "default", fmt.Sprint("idle", i), spec)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := s.Run(ctx, Command{Args: []string{"/bin/true"}}); err != nil {
				b.Fatal(err)
			}
			ss = append(ss, s)
		}
		after, rssAfter := goMem(), selfRSS("/proc/self/status")
		pids, err := ss[0].HostPIDs()
		if err != nil || len(pids) == 0 {
			b.Fatal(err)
		}
		sup := selfRSS(fmt.Sprintf("/proc/%d/status", pids[0]))
		b.ReportMetric(float64(after-before)/n/1024, "go-KiB/session")
		b.ReportMetric(float64(rssAfter-rssBefore)/n/1024, "rss-KiB/session")
		b.ReportMetric(float64(sup)/1024, "supervisor-rss-KiB")
		if err := m.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// goMem is the Go heap in use plus goroutine stacks, after a GC.
func goMem() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc + ms.StackInuse)
}

// selfRSS reads VmRSS (bytes) from a /proc status file.
func selfRSS(path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n << 10
		}
	}
	return 0
}
