// Command benchlaunch times how long commands take to launch and exit, for
// scripts/bench-launch.sh. It is a developer tool, not part of tether.
//
// Usage:
//
//	benchlaunch [-n 200] [-warmup 5] [-json] ROW [;; ROW]...
//
// A ROW is NAME followed by the command's argv, or NAME --unavailable REASON
// for a row that cannot be measured on this machine (it is printed, never
// given a number). "{i}" in an argv word is replaced by the run's index, for
// commands that need a unique name per run (runc container ids).
//
// Runs are interleaved — run i of every row, then run i+1, each round in an
// order of its own (a fixed pseudo-random permutation) — so that load from
// elsewhere on the machine, and the work one launch leaves behind (a
// container's teardown, a pool's refill), fall on all rows alike. The first row is the
// baseline that ratios are computed against. A row whose command fails is
// reported with the failure and no numbers.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"
)

// roundOrder is the order of one round's rows: a permutation of its own,
// so that every row follows every other row about equally often and the
// work a launch leaves to the next command (a few ms of cgroup and mount
// cleanup in the kernel after a container, tens of ms of a pooled
// sandbox's refill) does not fall on one row. A rotation of one order
// would not do: the row after a given row stays the same in every round.
func roundOrder(r *rand.Rand, n int) []int {
	return r.Perm(n)
}

// row is one command being measured.
type row struct {
	Name        string    `json:"name"`
	Argv        []string  `json:"argv,omitempty"`
	Unavailable string    `json:"unavailable,omitempty"`
	Failed      string    `json:"failed,omitempty"`
	MedianMS    float64   `json:"median_ms,omitempty"`
	P95MS       float64   `json:"p95_ms,omitempty"`
	Ratio       float64   `json:"ratio,omitempty"`
	Runs        int       `json:"runs"`
	times       []float64 // milliseconds
}

func main() {
	n := flag.Int("n", 200, "timed runs per row")
	warmup := flag.Int("warmup", 5, "untimed runs per row first")
	asJSON := flag.Bool("json", false, "print JSON instead of a table")
	flag.Parse()
	rows, err := parseRows(flag.Args())
	if err != nil || *n < 1 || *warmup < 0 {
		fmt.Fprintf(os.Stderr, "benchlaunch: %v\nusage: benchlaunch [-n N] [-warmup N] [-json] NAME ARGV... [;; NAME ARGV...]...\n", errors.Join(err, errIf(*n < 1, "-n must be at least 1")))
		os.Exit(2)
	}

	order := rand.New(rand.NewPCG(1, 2))
	for i := -*warmup; i < *n; i++ {
		for _, k := range roundOrder(order, len(rows)) {
			r := rows[k]
			if r.Unavailable != "" || r.Failed != "" {
				continue
			}
			ms, err := runOnce(r.Argv, i)
			if err != nil {
				r.Failed = err.Error()
				continue
			}
			if i >= 0 {
				r.times = append(r.times, ms)
			}
		}
	}

	var base float64
	for i, r := range rows {
		if len(r.times) == 0 || r.Failed != "" {
			continue
		}
		slices.Sort(r.times)
		r.Runs = len(r.times)
		r.MedianMS = median(r.times)
		r.P95MS = percentile(r.times, 95)
		if i == 0 {
			base = r.MedianMS
		}
		if base > 0 {
			r.Ratio = r.MedianMS / base
		}
	}

	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rows); err != nil {
			fmt.Fprintln(os.Stderr, "benchlaunch:", err)
			os.Exit(1)
		}
		return
	}
	width := len("name")
	for _, r := range rows {
		width = max(width, len(r.Name))
	}
	fmt.Printf("%-*s  %10s  %10s  %10s\n", width, "name", "median ms", "p95 ms", "x "+rows[0].Name)
	for _, r := range rows {
		switch {
		case r.Unavailable != "":
			fmt.Printf("%-*s  not available (%s)\n", width, r.Name, r.Unavailable)
		case r.Failed != "":
			fmt.Printf("%-*s  failed (%s)\n", width, r.Name, r.Failed)
		default:
			ratio := "-"
			if r.Ratio > 0 {
				ratio = strconv.FormatFloat(r.Ratio, 'f', 1, 64)
			}
			fmt.Printf("%-*s  %10.2f  %10.2f  %10s\n", width, r.Name, r.MedianMS, r.P95MS, ratio)
		}
	}
}

func errIf(cond bool, msg string) error {
	if cond {
		return errors.New(msg)
	}
	return nil
}

// parseRows splits the arguments at ";;" into rows.
func parseRows(args []string) ([]*row, error) {
	var rows []*row
	for len(args) > 0 {
		end := slices.Index(args, ";;")
		if end < 0 {
			end = len(args)
		}
		words := args[:end]
		args = args[min(end+1, len(args)):]
		switch {
		case len(words) == 0:
			continue
		case len(words) >= 2 && words[1] == "--unavailable":
			rows = append(rows, &row{Name: words[0], Unavailable: strings.Join(words[2:], " ")})
		case len(words) < 2:
			return nil, fmt.Errorf("row %q has no command", words[0])
		default:
			rows = append(rows, &row{Name: words[0], Argv: words[1:]})
		}
	}
	if len(rows) == 0 {
		return nil, errors.New("no rows")
	}
	return rows, nil
}

// runOnce runs argv once (run index i substituted for "{i}") and returns
// its wall time from fork to reaped exit, in milliseconds.
func runOnce(argv []string, i int) (float64, error) {
	args := make([]string, len(argv))
	for j, a := range argv {
		args[j] = strings.ReplaceAll(a, "{i}", strconv.Itoa(i+1_000_000))
	}
	var stderr bytes.Buffer
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	elapsed := time.Since(start)
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if k := strings.LastIndexByte(msg, '\n'); k >= 0 {
			msg = msg[k+1:]
		}
		return 0, fmt.Errorf("%v: %s", err, msg)
	}
	return float64(elapsed.Nanoseconds()) / 1e6, nil
}

// median of sorted values.
func median(s []float64) float64 {
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}

// percentile returns the nearest-rank p-th percentile of sorted values.
func percentile(s []float64, p int) float64 {
	rank := (p*len(s) + 99) / 100 // ceil(p/100 * n)
	return s[max(rank, 1)-1]
}
