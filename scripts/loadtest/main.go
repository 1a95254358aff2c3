// Command loadtest drives a running `tether serve` over its unix socket:
// N concurrent clients, each with its own session, each sending M tool
// calls one batch at a time, cycling through read_file, write_file,
// patch, search_files and (unless -no-terminal) terminal, in the session's
// sandbox and (terminal_oneshot, unless -no-oneshot) in a fresh one-shot
// sandbox (session: false: a pooled sandbox when the daemon has one
// ready). Every result is
// checked (call id, class, content), so a lost or wrong result is an
// error. It prints calls/s and p50/p99 latency per call type (the first
// terminal call of each session, which creates the session's sandbox, is
// counted apart as terminal_cold), and exits 1
// on any error. It is bounded by -timeout and stops by itself.
//
// Use scripts/load-test.sh, which starts a private daemon for it.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/tether-dev/tether/runner"
)

type sample struct {
	tool string
	dur  time.Duration
	err  error
}

func main() {
	socket := flag.String("socket", "", "tether serve socket")
	clients := flag.Int("clients", 32, "concurrent clients")
	calls := flag.Int("calls", 100, "tool calls per client")
	noTerminal := flag.Bool("no-terminal", false, "skip terminal calls (no sandbox here)")
	noOneShot := flag.Bool("no-oneshot", false, "skip one-shot terminal calls (session: false)")
	timeout := flag.Duration("timeout", 5*time.Minute, "give up after this long")
	asJSON := flag.Bool("json", false, "print the report as JSON")
	flag.Parse()
	if *socket == "" {
		fmt.Fprintln(os.Stderr, "loadtest: -socket is required")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()

	tools := []string{"write_file", "read_file", "patch", "search_files", "terminal", "terminal_oneshot"}
	switch {
	case *noTerminal:
		tools = tools[:4]
	case *noOneShot:
		tools = tools[:5]
	}
	results := make(chan sample, *clients**calls)
	var wg sync.WaitGroup
	start := time.Now()
	for c := 0; c < *clients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client(ctx, *socket, c, *calls, tools, results)
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(results)
	report(results, elapsed, *clients**calls, *asJSON)
}

// client runs one client's calls and reports each.
func client(ctx context.Context, socket string, n, calls int, tools []string, out chan<- sample) {
	c := runner.NewClient(socket)
	s, err := c.CreateSession(ctx, runner.SessionRequest{})
	if err != nil {
		for i := 0; i < calls; i++ {
			out <- sample{tool: tools[i%len(tools)], err: fmt.Errorf("creating a session: %w", err)}
		}
		return
	}
	defer c.ClearSession(context.Background(), s.Session)
	file := fmt.Sprintf("load/c%02d.txt", n)
	version := 0
	coldTerminal := true
	for i := 0; i < calls; i++ {
		tool := tools[i%len(tools)]
		var args map[string]any
		var check func(r runner.Result) error
		want := fmt.Sprintf("client %d version %d\n", n, version)
		switch tool {
		case "write_file":
			version++
			want = fmt.Sprintf("client %d version %d\n", n, version)
			args = map[string]any{"path": file, "content": want}
			check = func(r runner.Result) error {
				if r.Effect != runner.EffectLanded || r.Output["bytes_written"] != float64(len(want)) {
					return fmt.Errorf("write did not land: %+v", r)
				}
				return nil
			}
		case "read_file":
			args = map[string]any{"path": file}
			check = func(r runner.Result) error {
				if r.Output["content"] != want {
					return fmt.Errorf("read %q, want %q", r.Output["content"], want)
				}
				return nil
			}
		case "patch":
			next := fmt.Sprintf("client %d version %d\n", n, version+1)
			args = map[string]any{"path": file, "old_string": want, "new_string": next}
			version++
			check = func(r runner.Result) error {
				if r.Effect != runner.EffectLanded {
					return fmt.Errorf("patch did not land: %s", r.Message)
				}
				return nil
			}
		case "search_files":
			args = map[string]any{"pattern": fmt.Sprintf("^client %d version", n), "path": file}
			check = func(r runner.Result) error {
				if r.Output["count"] != float64(1) {
					return fmt.Errorf("search found %v matches, want 1", r.Output["count"])
				}
				return nil
			}
		case "terminal", "terminal_oneshot":
			args = map[string]any{"command": "cat " + file}
			if tool == "terminal_oneshot" {
				args["session"] = false
			}
			check = func(r runner.Result) error {
				if r.Output["stdout"] != want {
					return fmt.Errorf("terminal printed %q, want %q (%s)", r.Output["stdout"], want, r.Message)
				}
				return nil
			}
		}
		raw, _ := json.Marshal(args)
		id := fmt.Sprintf("c%d-%d", n, i)
		t0 := time.Now()
		// Each call is its own turn: the guardrails count repeats per turn.
		name := tool
		if tool == "terminal_oneshot" {
			name = "terminal"
		}
		res, err := c.Call(ctx, s.Session, "", []runner.RawCall{{ID: id, Name: name, Arguments: raw}})
		d := time.Since(t0)
		switch {
		case err != nil:
		case len(res.Results) != 1 || res.Results[0].CallID != id:
			err = fmt.Errorf("lost result: got %d results", len(res.Results))
		case res.Results[0].Class != runner.ClassSucceeded:
			err = fmt.Errorf("%s %s: %s", tool, res.Results[0].Class, res.Results[0].Message)
		default:
			err = check(res.Results[0])
		}
		label := tool
		if tool == "terminal" && coldTerminal {
			// The session's first command also creates its sandbox.
			label, coldTerminal = "terminal_cold", false
		}
		out <- sample{tool: label, dur: d, err: err}
	}
}

type stats struct {
	Tool  string  `json:"tool"`
	Calls int     `json:"calls"`
	P50ms float64 `json:"p50_ms"`
	P99ms float64 `json:"p99_ms"`
}

func report(results <-chan sample, elapsed time.Duration, expected int, asJSON bool) {
	by := map[string][]time.Duration{}
	var errs []error
	total := 0
	for s := range results {
		total++
		if s.err != nil {
			errs = append(errs, s.err)
			continue
		}
		by[s.tool] = append(by[s.tool], s.dur)
		by["all"] = append(by["all"], s.dur)
	}
	var rows []stats
	for tool, ds := range by {
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		pct := func(p float64) float64 {
			i := int(p * float64(len(ds)-1))
			return float64(ds[i].Microseconds()) / 1000
		}
		rows = append(rows, stats{Tool: tool, Calls: len(ds), P50ms: pct(0.50), P99ms: pct(0.99)})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Tool < rows[j].Tool })
	lost := expected - total
	rate := float64(total-len(errs)) / elapsed.Seconds()
	if asJSON {
		_ = json.NewEncoder(os.Stdout).Encode(map[string]any{"calls": total, "errors": len(errs), "lost": lost,
			"seconds": elapsed.Seconds(), "calls_per_second": rate, "by_tool": rows})
	} else {
		fmt.Printf("%d calls in %.2fs: %.0f calls/s, %d errors, %d lost\n", total, elapsed.Seconds(), rate, len(errs), lost)
		fmt.Printf("%-14s %7s %9s %9s\n", "TOOL", "CALLS", "P50 ms", "P99 ms")
		for _, r := range rows {
			fmt.Printf("%-14s %7d %9.2f %9.2f\n", r.Tool, r.Calls, r.P50ms, r.P99ms)
		}
	}
	for i, e := range errs {
		if i == 10 {
			fmt.Fprintf(os.Stderr, "... and %d more errors\n", len(errs)-10)
			break
		}
		fmt.Fprintln(os.Stderr, "error:", e)
	}
	if len(errs) > 0 || lost != 0 {
		os.Exit(1)
	}
}
