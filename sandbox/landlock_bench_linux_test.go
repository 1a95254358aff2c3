package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// BenchmarkLandlockSession runs the same command in two warm sessions of
// one workspace, one confined by a Landlock ruleset (whose commands also
// wait for the audit barrier that collects refusals), one not,
// alternately, and reports both medians and their difference:
//
//	go test -tags seccomp -run XXX -bench LandlockSession -benchtime 200x ./sandbox/
func BenchmarkLandlockSession(b *testing.B) {
	m := newTestSessions(b)
	ws, err := os.MkdirTemp("/var/tmp", "tether-llb-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(ws) })
	if err := os.WriteFile(filepath.Join(ws, "f"), []byte("x\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	base := Config{Workspace: ws, Limits: Limits{Pids: 256, Timeout: 30 * time.Second}}
	confined := base
	confined.Landlock = &Landlock{Trees: []string{ws}}
	plain, err := m.Open(b.Context(), "default", "plain", SessionSpec{Config: base})
	if err != nil {
		b.Fatal(err)
	}
	ll, err := m.Open(b.Context(), "default", "landlock", SessionSpec{Config: confined})
	if err != nil {
		b.Fatal(err)
	}
	cmd := Command{Args: []string{"/bin/cat", filepath.Join(ws, "f")}}
	for range 10 { // warm up
		for _, s := range []*Session{plain, ll} {
			if _, err := s.Run(b.Context(), cmd); err != nil {
				b.Fatal(err)
			}
		}
	}
	var without, with []time.Duration
	for b.Loop() {
		for i, s := range []*Session{plain, ll} {
			t0 := time.Now()
			res, err := s.Run(b.Context(), cmd)
			if err != nil || res.ExitCode != 0 || len(res.PathsRefused) > 0 {
				b.Fatal(err, res)
			}
			if i == 0 {
				without = append(without, time.Since(t0))
			} else {
				with = append(with, time.Since(t0))
			}
		}
	}
	w, wo := median(with), median(without)
	b.ReportMetric(float64(wo.Microseconds()), "plain-µs/cmd")
	b.ReportMetric(float64(w.Microseconds()), "landlock-µs/cmd")
	b.ReportMetric(float64((w - wo).Microseconds()), "diff-µs/cmd")
}

// median returns the middle of ds (sorted in place).
func median(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// BenchmarkLandlockAuditBarrier times the barrier alone: one user record
// through the kernel's audit queue and back, what every command under a
// ruleset waits for after it ends (root):
//
//	go test -tags seccomp -run XXX -bench LandlockAuditBarrier ./sandbox/
func BenchmarkLandlockAuditBarrier(b *testing.B) {
	requireSandbox(b)
	a, err := landlockAuditOnce()
	if err != nil {
		b.Skip(err)
	}
	for b.Loop() {
		if _, err := a.take(-1); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLandlockMountPlan runs a one-shot sandbox under a Landlock
// ruleset with and without the mount plan (ReadOnlyWorkspace: the binds
// of two write trees and the seal, made at start), alternately, and
// reports both medians and their difference; then the same for a command
// in two warm sessions, where the plan costs nothing per command:
//
//	go test -tags seccomp -run XXX -bench LandlockMountPlan -benchtime 20x ./sandbox/
func BenchmarkLandlockMountPlan(b *testing.B) {
	r := newTestRunner(b)
	m := newTestSessions(b)
	ws, err := os.MkdirTemp("/var/tmp", "tether-llp-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(ws) })
	for _, d := range []string{"src", "build"} {
		if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
			b.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(ws, "src", "f"), []byte("x\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	ll := Landlock{Trees: []string{filepath.Join(ws, "src"), filepath.Join(ws, "build")}}
	plan := ll
	plan.ReadOnlyWorkspace = true
	cfgs := []Config{{Workspace: ws, Landlock: &ll}, {Workspace: ws, Landlock: &plan}}
	cmd := Command{Args: []string{"/bin/cat", filepath.Join(ws, "src", "f")}}
	var sessions []*Session
	for i, cfg := range cfgs {
		s, err := m.Open(b.Context(), "default", fmt.Sprint("plan", i), SessionSpec{Config: cfg})
		if err != nil {
			b.Fatal(err)
		}
		sessions = append(sessions, s)
	}
	times := make([][]time.Duration, 4) // one-shot without, with; session without, with
	for b.Loop() {
		for i, cfg := range cfgs {
			t0 := time.Now()
			res, err := r.Run(b.Context(), cfg, cmd)
			if err != nil || res.ExitCode != 0 {
				b.Fatal(err, res)
			}
			times[i] = append(times[i], time.Since(t0))
		}
		for i, s := range sessions {
			for range 5 {
				t0 := time.Now()
				res, err := s.Run(b.Context(), cmd)
				if err != nil || res.ExitCode != 0 {
					b.Fatal(err, res)
				}
				times[2+i] = append(times[2+i], time.Since(t0))
			}
		}
	}
	for i, name := range []string{"run", "session"} {
		wo, w := median(times[2*i]), median(times[2*i+1])
		b.ReportMetric(float64(wo.Microseconds()), name+"-µs")
		b.ReportMetric(float64(w.Microseconds()), name+"-plan-µs")
		b.ReportMetric(float64((w - wo).Microseconds()), name+"-diff-µs")
	}
}

// BenchmarkLandlockMountPlanReport: what the mount plan's report costs a
// call it notifies (notify_sealed_linux.go): a warm-session python3 that
// chmods a file of a write tree 2,000 times, under a ruleset without and
// with the plan (whose filter notifies each chmod), alternately;
// call-µs is the difference per chmod.
func BenchmarkLandlockMountPlanReport(b *testing.B) {
	m := newTestSessions(b)
	ws, err := os.MkdirTemp("/var/tmp", "tether-llr-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(ws) })
	if err := os.MkdirAll(filepath.Join(ws, "src"), 0o755); err != nil {
		b.Fatal(err)
	}
	f := filepath.Join(ws, "src", "f")
	if err := os.WriteFile(f, []byte("x\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	const calls = 2000
	ll := Landlock{Trees: []string{filepath.Join(ws, "src")}}
	plan := ll
	plan.ReadOnlyWorkspace = true
	cmd := Command{Args: []string{"python3", "-c", fmt.Sprintf("import os\nfor i in range(%d): os.chmod(%q, 0o644)", calls, f)}}
	var sessions []*Session
	for i, cfg := range []Config{{Workspace: ws, Landlock: &ll}, {Workspace: ws, Landlock: &plan}} {
		s, err := m.Open(b.Context(), "default", fmt.Sprint("planrep", i), SessionSpec{Config: cfg})
		if err != nil {
			b.Fatal(err)
		}
		sessions = append(sessions, s)
	}
	times := make([][]time.Duration, 2)
	for b.Loop() {
		for i, s := range sessions {
			t0 := time.Now()
			res, err := s.Run(b.Context(), cmd)
			if err != nil || res.ExitCode != 0 {
				b.Fatal(err, res)
			}
			times[i] = append(times[i], time.Since(t0))
		}
	}
	wo, w := median(times[0]), median(times[1])
	b.ReportMetric(float64(wo.Microseconds()), "run-µs")
	b.ReportMetric(float64(w.Microseconds()), "run-plan-µs")
	b.ReportMetric(float64((w-wo).Microseconds())/calls, "call-µs")
}
