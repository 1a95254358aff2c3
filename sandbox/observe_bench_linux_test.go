package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkObserve measures what runtime observation costs in a warm
// session: each iteration runs a shell loop of 500 opens of a workspace
// file (a builtin's redirection: no exec) in a gated session with
// observation and in one without, alternately, then ten single `cat FILE`
// commands (one exec, the loader's and cat's opens) in each, and reports
// the per-open and per-command times, their ratios and the handler's own
// time per notification of the observed session:
//
//	go test -tags seccomp -run XXX -bench Observe -benchtime 5x ./sandbox/
func BenchmarkObserve(b *testing.B) {
	allow := func(ExecEvent) error { return nil }
	plain, observed := newTestSessions(b), newTestSessions(b)
	plain.ExecGate, observed.ExecGate = allow, allow
	ws := b.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "in.txt"), []byte("x\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	const n = 500
	loop := Command{Shell: `i=0; while [ $i -lt 500 ]; do read x < in.txt; i=$((i+1)); done`}
	one := Command{Args: []string{"cat", "in.txt"}}
	var sessions [2]*Session
	for i, m := range []*Sessions{plain, observed} {
		spec := SessionSpec{Config: Config{Workspace: ws, Observe: i == 1, Limits: Limits{Pids: 256, Timeout: 60 * time.Second}}}
		s, err := m.Open(ctx, "default", "bench", spec)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Run(ctx, loop); err != nil { // warm up
			b.Fatal(err)
		}
		sessions[i] = s
	}
	var spent, cmds [2]time.Duration
	for b.Loop() {
		for i, s := range sessions {
			t0 := time.Now()
			res, err := s.Run(ctx, loop)
			if err != nil || res.ExitCode != 0 {
				b.Fatal(err, res)
			}
			spent[i] += time.Since(t0)
			if i == 1 && (len(res.Accesses) != 1 || res.Accesses[0].Count != n) {
				b.Fatalf("observed %+v, want %d reads of in.txt", res.Accesses, n)
			}
			for range 10 {
				t0 = time.Now()
				if res, err := s.Run(ctx, one); err != nil || res.ExitCode != 0 {
					b.Fatal(err, res)
				}
				cmds[i] += time.Since(t0)
			}
		}
	}
	per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 / float64(b.N*n) }
	b.ReportMetric(per(spent[0]), "plain-µs/open")
	b.ReportMetric(per(spent[1]), "observed-µs/open")
	b.ReportMetric(per(spent[1]-spent[0]), "observe-µs/open")
	b.ReportMetric(float64(spent[1])/float64(spent[0]), "observed/plain-open")
	g := sessions[1].gate
	g.mu.Lock()
	b.ReportMetric(float64(g.busy.Nanoseconds())/1e3/float64(g.handled), "handler-µs/notification")
	g.mu.Unlock()
	b.ReportMetric(float64(cmds[0].Microseconds())/float64(10*b.N), "plain-cmd-µs")
	b.ReportMetric(float64(cmds[1].Microseconds())/float64(10*b.N), "observed-cmd-µs")
	b.ReportMetric(float64(cmds[1])/float64(cmds[0]), "observed/plain-cmd")
}
