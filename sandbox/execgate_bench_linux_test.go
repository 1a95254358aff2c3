package sandbox

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/tether-dev/tether/approval"
	"github.com/tether-dev/tether/config"
)

// BenchmarkExecGate measures the exec gate's cost per exec in a warm
// session: each iteration runs a shell loop of 200 execs of /bin/true in a
// session with the engine's exec check (as tether serve wires it) and in
// one without a gate, alternately, then ten single /bin/true commands in
// each, and reports both per-exec times, their difference, the handler's
// own time per exec and both per-command times:
//
//	go test -tags seccomp -run XXX -bench ExecGate -benchtime 20x ./sandbox/
func BenchmarkExecGate(b *testing.B) {
	cfg, err := config.Default()
	if err != nil {
		b.Fatal(err)
	}
	eng, err := approval.NewEngine(cfg, approval.Options{Audit: discardAudit{}})
	if err != nil {
		b.Fatal(err)
	}
	defer eng.Close()
	home, _ := os.UserHomeDir()
	gated := newTestSessions(b)
	gated.ExecGate = func(ev ExecEvent) error {
		return eng.CheckExec(approval.ExecRequest{Argvs: append([][]string{ev.Argv}, ev.Runs...), Profile: ev.Profile, Home: home})
	}
	plain := newTestSessions(b)
	spec := SessionSpec{Config: Config{Limits: Limits{Pids: 256, Timeout: 60 * time.Second}}}
	ctx := context.Background()
	const n = 200
	loop := Command{Shell: `i=0; while [ $i -lt 200 ]; do /bin/true; i=$((i+1)); done`}
	var sessions [2]*Session
	for i, m := range []*Sessions{plain, gated} {
		s, err := m.Open(ctx, "default", "bench", spec)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Run(ctx, loop); err != nil { // warm up
			b.Fatal(err)
		}
		sessions[i] = s
	}
	// Also one warm-session command (/bin/true, one exec) per iteration
	// in each: the difference is the gate's cost per command.
	one := Command{Args: []string{"/bin/true"}}
	var spent, cmds [2]time.Duration
	for b.Loop() {
		for i, s := range sessions {
			t0 := time.Now()
			res, err := s.Run(ctx, loop)
			if err != nil || res.ExitCode != 0 || len(res.ExecBlocked) > 0 {
				b.Fatal(err, res)
			}
			spent[i] += time.Since(t0)
			for range 10 {
				t0 = time.Now()
				if res, err := s.Run(ctx, one); err != nil || res.ExitCode != 0 {
					b.Fatal(err, res)
				}
				cmds[i] += time.Since(t0)
			}
		}
	}
	b.ReportMetric(float64(cmds[0].Microseconds())/float64(10*b.N), "ungated-cmd-µs")
	b.ReportMetric(float64(cmds[1].Microseconds())/float64(10*b.N), "gated-cmd-µs")
	per := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(b.N*n) }
	g := sessions[1].gate
	g.mu.Lock()
	b.ReportMetric(float64(g.busy.Microseconds())/float64(g.handled), "handler-µs/exec")
	g.mu.Unlock()
	b.ReportMetric(per(spent[0]), "ungated-µs/exec")
	b.ReportMetric(per(spent[1]), "gated-µs/exec")
	b.ReportMetric(per(spent[1]-spent[0]), "gate-µs/exec")
	b.ReportMetric(float64(spent[1])/float64(spent[0]), "gated/ungated")
}

type discardAudit struct{}

func (discardAudit) Append(context.Context, approval.Decision) error { return nil }
