// Command benchtrace shows where one launch's time goes, for
// scripts/bench-trace.sh. It is a developer tool, not part of tether.
//
// Usage:
//
//	benchtrace [-n 40] [-warmup 3] [-gap 300ms] -trace FILE PROGRAM [ARG...]
//
// It runs the command n times, one after another, with TETHER_TRACE=FILE
// in its environment (tether's processes then append "NS PID STAGE" lines
// to FILE; see sandbox.Trace), and appends its own "launch" line just
// before each start and "exited" just after each wait. A daemon started
// with the same TETHER_TRACE writes into the same file. Each run owns the
// lines from its launch to the next run's launch (so a daemon's work after
// the reply, such as a sandbox's teardown, counts to the run that caused
// it); the table gives each stage's median time from launch, in the order
// of those medians, and the median gap from the stage before it.
package main

import (
	"bufio"
	"cmp"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

func main() {
	n := flag.Int("n", 40, "timed runs")
	warmup := flag.Int("warmup", 3, "untimed runs first")
	trace := flag.String("trace", "", "trace file (TETHER_TRACE)")
	gap := flag.Duration("gap", 300*time.Millisecond, "pause between runs (a pool refills, a teardown ends)")
	flag.Parse()
	if *trace == "" || flag.NArg() == 0 || *n < 1 {
		fmt.Fprintln(os.Stderr, "usage: benchtrace [-n N] [-warmup N] -trace FILE PROGRAM [ARG...]")
		os.Exit(2)
	}
	f, err := os.OpenFile(*trace, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		fail(err)
	}
	mark := func(stage string) {
		var ts unix.Timespec
		_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
		fmt.Fprintf(f, "%d %d %s\n", ts.Nano(), os.Getpid(), stage)
	}
	for i := 0; i < *warmup+*n; i++ {
		cmd := exec.Command(flag.Arg(0), flag.Args()[1:]...)
		cmd.Env = append(os.Environ(), "TETHER_TRACE="+*trace)
		stage := "launch"
		if i < *warmup {
			stage = "warmup"
		}
		mark(stage)
		if err := cmd.Run(); err != nil {
			fail(fmt.Errorf("run %d: %w", i, err))
		}
		mark("exited")
		time.Sleep(*gap)
	}
	f.Close()
	report(*trace)
}

type event struct {
	ns    int64
	stage string
}

// report prints the median table of the runs in the trace file.
func report(path string) {
	f, err := os.Open(path)
	if err != nil {
		fail(err)
	}
	defer f.Close()
	var events []event
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.SplitN(sc.Text(), " ", 3)
		if len(fields) != 3 {
			continue
		}
		ns, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			continue
		}
		events = append(events, event{ns, fields[2]})
	}
	fmt.Printf("%-28s %10s %10s %6s\n", "stage", "median ms", "+ms", "runs")
	prev := 0.0
	for _, r := range table(events) {
		fmt.Printf("%-28s %10.2f %10.2f %6d\n", r.stage, r.median, r.median-prev, r.runs)
		prev = r.median
	}
}

// stageRow is one line of the table: a stage's median time from launch
// (ms) and how many runs passed it.
type stageRow struct {
	stage  string
	median float64
	runs   int
}

// table groups events into runs (each from its "launch" to the next
// "launch" or "warmup"; "warmup" runs are left out) and gives each
// stage's median first time from launch, in the order of those medians.
func table(events []event) []stageRow {
	// Lines of several processes interleave in the order of their writes,
	// which is the order of their times only within one process.
	events = slices.Clone(events)
	slices.SortStableFunc(events, func(a, b event) int { return cmp.Compare(a.ns, b.ns) })
	var runs []map[string]int64
	var start int64
	inRun := false
	for _, e := range events {
		switch e.stage {
		case "launch":
			runs = append(runs, map[string]int64{})
			start, inRun = e.ns, true
			continue
		case "warmup":
			inRun = false
			continue
		}
		if !inRun {
			continue
		}
		if _, seen := runs[len(runs)-1][e.stage]; !seen {
			runs[len(runs)-1][e.stage] = e.ns - start
		}
	}
	times := map[string][]float64{}
	for _, r := range runs {
		for st, t := range r {
			times[st] = append(times[st], float64(t)/1e6)
		}
	}
	rows := make([]stageRow, 0, len(times))
	for st, v := range times {
		slices.Sort(v)
		rows = append(rows, stageRow{st, v[len(v)/2], len(v)})
	}
	slices.SortFunc(rows, func(a, b stageRow) int {
		if c := cmp.Compare(a.median, b.median); c != 0 {
			return c
		}
		return strings.Compare(a.stage, b.stage)
	})
	return rows
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "benchtrace:", err)
	os.Exit(1)
}
