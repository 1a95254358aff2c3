package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/tether-dev/tether/approval"
	"github.com/tether-dev/tether/config"
	"golang.org/x/sys/unix"
)

// BenchmarkExecGate measures the exec gate's cost per exec in a warm
// session: each iteration runs a shell loop of 200 execs of /bin/true in a
// session with the engine's exec check (as tether serve wires it) and in
// one without a gate, alternately, then ten single /bin/true commands in
// each. It reports both per-exec wall times and their difference, and,
// because wall time on a loaded machine is mostly waiting for a CPU, the
// CPU time per exec of the loop: the sandbox's (its cgroup's cpuacct) plus,
// gated, the gate's listener thread (its schedstat), whose difference does
// not depend on the load:
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
	// A memory limit gives the session its cgroup paths (cpuacct).
	spec := SessionSpec{Config: Config{Limits: Limits{Pids: 256, MemoryBytes: 1 << 30, Timeout: 60 * time.Second}}}
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
	if sessions[1].gate == nil || sessions[0].gate != nil {
		b.Fatal("want a gate in the gated session only")
	}
	// Also one warm-session command (/bin/true, one exec) per iteration
	// in each: the difference is the gate's cost per command.
	one := Command{Args: []string{"/bin/true"}}
	var spent, cmds, cpu [2]time.Duration
	var listener time.Duration
	for b.Loop() {
		for i, s := range sessions {
			c0, l0 := cgroupCPU(b, s), gateCPU(b, s)
			t0 := time.Now()
			res, err := s.Run(ctx, loop)
			if err != nil || res.ExitCode != 0 || len(res.ExecBlocked) > 0 {
				b.Fatal(err, res)
			}
			spent[i] += time.Since(t0)
			cpu[i] += cgroupCPU(b, s) - c0
			listener += gateCPU(b, s) - l0
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
	per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 / float64(b.N*n) }
	g := sessions[1].gate
	g.mu.Lock()
	b.ReportMetric(float64(g.busy.Nanoseconds())/1e3/float64(g.handled), "handler-µs/exec")
	g.mu.Unlock()
	b.ReportMetric(per(spent[0]), "ungated-µs/exec")
	b.ReportMetric(per(spent[1]), "gated-µs/exec")
	b.ReportMetric(per(spent[1]-spent[0]), "gate-µs/exec")
	b.ReportMetric(float64(spent[1])/float64(spent[0]), "gated/ungated")
	b.ReportMetric(per(cpu[0]), "ungated-cpu-µs/exec")
	b.ReportMetric(per(cpu[1]+listener), "gated-cpu-µs/exec")
	b.ReportMetric(per(listener), "listener-cpu-µs/exec")
	b.ReportMetric(per(cpu[1]+listener-cpu[0]), "gate-cpu-µs/exec")
}

// cgroupCPU is the CPU time the kernel accounted to s's sandbox so far.
func cgroupCPU(tb testing.TB, s *Session) time.Duration {
	tb.Helper()
	u := readUsage(s.cgPaths)
	if u.cpu == 0 {
		tb.Fatal("no cpuacct usage for the session")
	}
	return u.cpu
}

// gateCPU is the CPU time of s's gate listener thread so far (0 without
// a gate): the first field of its schedstat, in nanoseconds.
func gateCPU(tb testing.TB, s *Session) time.Duration {
	tb.Helper()
	if s.gate == nil {
		return 0
	}
	s.gate.mu.Lock()
	tid := s.gate.tid
	s.gate.mu.Unlock()
	raw, err := os.ReadFile(filepath.Join("/proc/self/task", strconv.Itoa(tid), "schedstat"))
	if err != nil {
		tb.Fatal(err)
	}
	ns, err := strconv.ParseInt(strings.Fields(string(raw))[0], 10, 64)
	if err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ns)
}

type discardAudit struct{}

func (discardAudit) Append(context.Context, approval.Decision) error { return nil }

// BenchmarkExecGateRead is the gate's own work on one exec without the
// notification around it, which a loaded machine's scheduler does not
// blur as much: reading a six-argument exec's path and argv from a
// process's memory (this one's, as the gate reads a caller's), and
// resolving /bin/true inside another process's root with its first bytes
// read (runsAs):
//
//	go test -tags seccomp -run XXX -bench ExecGateRead ./sandbox/
func BenchmarkExecGateRead(b *testing.B) {
	b.Run("memory", func(b *testing.B) {
		strs := [][]byte{[]byte("/usr/bin/cc\x00"), []byte("cc\x00"), []byte("-c\x00"), []byte("-O2\x00"), []byte("-o\x00"), []byte("main.o\x00"), []byte("main.c\x00")}
		var ptrs []uint64
		for _, s := range strs[1:] {
			ptrs = append(ptrs, uint64(uintptr(unsafe.Pointer(&s[0]))))
		}
		ptrs = append(ptrs, 0)
		pathPtr, argvPtr := uint64(uintptr(unsafe.Pointer(&strs[0][0]))), uint64(uintptr(unsafe.Pointer(&ptrs[0])))
		r := new(memReader)
		for b.Loop() {
			r.reset(os.Getpid())
			r.prefetchExec(pathPtr, argvPtr)
			if _, err := r.cstring(pathPtr, maxExecPath); err != nil {
				b.Fatal(err)
			}
			if argv, err := r.argv(argvPtr); err != nil || len(argv) != 6 {
				b.Fatal(argv, err)
			}
		}
		runtime.KeepAlive(strs)
	})
	b.Run("resolve", func(b *testing.B) {
		cmd := exec.Command("sleep", "600")
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
		root, err := openProc(strconv.Itoa(cmd.Process.Pid)+"/root", unix.O_PATH|unix.O_DIRECTORY)
		if err != nil {
			b.Fatal(err)
		}
		defer unix.Close(root)
		for b.Loop() { // the root opened once, as the gate does with a fixed root
			if _, err := runsAs(cmd.Process.Pid, root, unix.AT_FDCWD, "/bin/true", false, []string{"/bin/true"}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
