package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tether-dev/tether/approval"
	"github.com/tether-dev/tether/internal/testenv"
	"github.com/tether-dev/tether/runner"
)

// ack is one answer the daemon acknowledged ({"answered":1}).
type ack struct {
	id     string
	always bool
}

// TestServeKillSuite SIGKILLs `tether serve` under load, again and again:
// clients keep opening sessions, making calls that need approval and
// answering them (once, always, deny) while the daemon is killed at a
// random moment. After every restart, every answer the daemon acknowledged
// has its decision in the audit log (and an "always" answer its allowlist
// entry), every decision a client got back is in the audit log, and every
// line of the log parses. Calls run on the host backend (rm of a missing
// path in a scratch workspace): the suite is about durability, not sandboxes.
func TestServeKillSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("the kill suite runs for about a minute")
	}
	tether, err := exec.LookPath("tether")
	require.NoError(t, err, "TestMain puts this binary in $PATH as tether")
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	ws := filepath.Join(dir, "ws")
	require.NoError(t, os.Mkdir(ws, 0o700))
	cfgPath := filepath.Join(dir, "config.yaml")
	require.NoError(t, os.WriteFile(cfgPath, []byte(fmt.Sprintf(`state_dir: %s
profiles:
  default:
    terminal: {backend: host, cwd: %s}
    approvals: {timeout: 60s}
`, state, ws)), 0o600))
	sockDir, err := os.MkdirTemp("", "tkill")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	sock := filepath.Join(sockDir, "t.sock")

	const rounds = 30
	var mu sync.Mutex
	var acks []ack
	var decided []string // decision ids clients got back in call results
	for round := range rounds {
		cmd := exec.Command(tether, "serve", "--config", cfgPath, "--socket", sock)
		cmd.Env = append(os.Environ(), "TETHER_STATE_DIR="+state)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		require.NoError(t, cmd.Start())
		ctx, cancel := context.WithTimeout(t.Context(), testenv.Scaled(30*time.Second))
		if err := runner.NewClient(sock).WaitHealthy(ctx); err != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait() // stderr is complete only after Wait
			t.Fatalf("round %d: the daemon does not restart: %v: %s", round, err, stderr.String())
		}
		cancel()

		load, stop := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		for w := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := runner.NewClient(sock)
				s, err := c.CreateSession(load, runner.SessionRequest{})
				if err != nil {
					return
				}
				for i := 0; load.Err() == nil; i++ {
					command := fmt.Sprintf("rm -rf ./k-%d-%d-%d", round, w, i)
					res := make(chan runner.BatchResult, 1)
					go func() {
						out, err := c.Call(load, s.Session, "", []runner.RawCall{{ID: "1", Name: "terminal",
							Arguments: json.RawMessage(fmt.Sprintf(`{"command":%q}`, command))}})
						if err == nil {
							res <- out
						}
						close(res)
					}()
					var p []approval.Pending
					for load.Err() == nil {
						if p, err = c.Approvals(load, s.Session); err == nil && len(p) > 0 {
							break
						}
						time.Sleep(2 * time.Millisecond)
					}
					if len(p) == 0 {
						return
					}
					d := runner.Decision{ID: p[0].ID, Verdict: "approve", Scope: "always"}
					switch i % 3 {
					case 1:
						d.Scope = "once"
					case 2:
						d = runner.Decision{ID: p[0].ID, Verdict: "deny"}
					}
					if n, err := c.Decide(load, s.Session, d); err == nil && n == 1 {
						mu.Lock()
						acks = append(acks, ack{id: p[0].ID, always: d.Scope == "always"})
						mu.Unlock()
					}
					if out, ok := <-res; ok {
						for _, r := range out.Results {
							if r.Decision != nil {
								mu.Lock()
								decided = append(decided, r.Decision.ID)
								mu.Unlock()
							}
						}
					}
				}
			}()
		}
		// Each daemon lives 0.2-0.8 s, stretched under emulation (the time
		// scale): in the TCG guest the load's clients took longer than
		// 0.8 s to open a session and see a pending approval, and 30
		// rounds answered nothing.
		time.Sleep(testenv.Scaled(time.Duration(200+rand.IntN(600)) * time.Millisecond))
		require.NoError(t, syscall.Kill(cmd.Process.Pid, syscall.SIGKILL))
		_ = cmd.Wait()
		stop()
		wg.Wait()
	}

	// Restart once more: the state the kills left must be whole.
	cmd := exec.Command(tether, "serve", "--config", cfgPath, "--socket", sock)
	cmd.Env = append(os.Environ(), "TETHER_STATE_DIR="+state)
	require.NoError(t, cmd.Start())
	ctx, cancel := context.WithTimeout(t.Context(), testenv.Scaled(30*time.Second))
	require.NoError(t, runner.NewClient(sock).WaitHealthy(ctx))
	cancel()
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, cmd.Wait())

	f, err := os.Open(approval.AuditPath(state))
	require.NoError(t, err)
	rep, err := approval.VerifyAudit(f)
	f.Close()
	require.NoError(t, err, "every line of the audit log parses after %d kills", rounds)

	data, err := os.ReadFile(approval.AuditPath(state))
	require.NoError(t, err)
	answered := map[string]bool{} // decision ids with a decision record of a person's answer
	recorded := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var d approval.Decision
		if json.Unmarshal([]byte(line), &d) != nil {
			continue // a torn tail, cut off by the next append
		}
		if d.Event == "" {
			recorded[d.ID] = true
			if d.Approval == approval.ApprovalAnswered {
				answered[d.ID] = true
			}
		}
	}
	entries, err := approval.NewAllowlistStore(state).Load("default")
	require.NoError(t, err)
	inAllowlist := map[string]bool{}
	for _, e := range entries {
		inAllowlist[e.Decision] = true
	}

	missing, missingAlways, nAlways := 0, 0, 0
	for _, a := range acks {
		if !answered[a.id] {
			missing++
			t.Errorf("acknowledged answer %s has no decision record", a.id)
		}
		if a.always {
			nAlways++
			if !inAllowlist[a.id] {
				missingAlways++
				t.Errorf("acknowledged always answer %s has no allowlist entry", a.id)
			}
		}
	}
	missingDecided := 0
	for _, id := range decided {
		if !recorded[id] {
			missingDecided++
			t.Errorf("decision %s returned to a client is not in the audit log", id)
		}
	}
	t.Logf("kills: %d; acknowledged answers: %d, stored: %d; acknowledged always: %d, in the allowlist: %d; "+
		"decisions returned: %d, stored: %d; audit records: %d (torn tail: %v)",
		rounds, len(acks), len(acks)-missing, nAlways, nAlways-missingAlways, len(decided), len(decided)-missingDecided,
		rep.Records, rep.TornTail)
	assert.NotEmpty(t, acks, "the load answered requests")
	assert.NotZero(t, nAlways)
}
