package approval

import (
	"bytes"
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// ptyPair opens a real pseudo-terminal: the prompter gets the terminal
// side, the test types on the master side and reads what was shown.
type ptyPair struct {
	master, tty *os.File
	mu          sync.Mutex
	out         bytes.Buffer
	more        chan struct{}
}

func openPty(t *testing.T) *ptyPair {
	t.Helper()
	master, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pty available: %v", err)
	}
	p := &ptyPair{master: master, tty: tty, more: make(chan struct{}, 1)}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			if n > 0 {
				p.mu.Lock()
				p.out.Write(buf[:n])
				p.mu.Unlock()
				select {
				case p.more <- struct{}{}:
				default:
				}
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { tty.Close(); master.Close() })
	return p
}

func (p *ptyPair) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// waitFor waits until the terminal showed s n times in total.
func (p *ptyPair) waitFor(t *testing.T, s string, n int) {
	t.Helper()
	for strings.Count(p.output(), s) < n {
		select {
		case <-p.more:
		case <-time.After(10 * time.Second):
			t.Fatalf("terminal never showed %q (%d times); got:\n%s", s, n, p.output())
		}
	}
}

func (p *ptyPair) typeLine(t *testing.T, s string) {
	t.Helper()
	_, err := p.master.Write([]byte(s + "\n"))
	require.NoError(t, err)
}

func question(scopes ...Scope) Question {
	return Question{ID: "q1", Profile: "default", Session: "s1", Platform: PlatformCLI,
		Command:  "rm -rf ./build",
		Findings: []Finding{{Rule: "approval.rm-recursive", Description: "recursive delete"}},
		Scopes:   append([]Scope{ScopeOnce}, scopes...),
		Covers: map[Scope]string{ScopeOnce: "this call only", ScopeSession: "this command (normalised: rm -rf ./build) until session s1 is cleared",
			ScopeAlways: "adds rm -rf ./build to the allowlist"}}
}

func TestPrompterAnswersThroughPty(t *testing.T) {
	cases := []struct {
		typed []string
		want  Answer
	}{
		{[]string{"s"}, Answer{Verdict: VerdictApprove, Scope: ScopeSession, By: "cli"}},
		{[]string{"a"}, Answer{Verdict: VerdictApprove, Scope: ScopeAlways, By: "cli"}},
		{[]string{"o"}, Answer{Verdict: VerdictApprove, Scope: ScopeOnce, By: "cli"}},
		{[]string{"d"}, Answer{Verdict: VerdictDeny, By: "cli", Reason: "denied at the terminal"}},
		{[]string{"maybe", "always"}, Answer{Verdict: VerdictApprove, Scope: ScopeAlways, By: "cli"}},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.typed, ","), func(t *testing.T) {
			p := openPty(t)
			pr := NewPrompter(p.tty)
			got := make(chan Answer, 1)
			go func() {
				a, err := pr.Ask(t.Context(), question(ScopeSession, ScopeAlways))
				assert.NoError(t, err)
				got <- a
			}()
			p.waitFor(t, "allow? [o]nce [s]ession [a]lways [d]eny", 1)
			for i, s := range tc.typed {
				if i > 0 {
					p.waitFor(t, "please answer o, s, a or d", i)
				}
				p.typeLine(t, s)
			}
			assert.Equal(t, tc.want, <-got)
			out := p.output()
			assert.Contains(t, out, "command: rm -rf ./build")
			assert.Contains(t, out, "why:     recursive delete (approval.rm-recursive)")
			assert.Contains(t, out, "once:    this call only")
			assert.Contains(t, out, "session: this command (normalised: rm -rf ./build) until session s1 is cleared")
			assert.Contains(t, out, "always:  adds rm -rf ./build to the allowlist")
		})
	}
}

func TestPrompterSilenceDenies(t *testing.T) {
	p := openPty(t)
	pr := NewPrompter(p.tty)
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	_, err := pr.Ask(ctx, question())
	require.ErrorIs(t, err, context.DeadlineExceeded)
	p.waitFor(t, "no answer: denied", 1)
	assert.Contains(t, p.output(), "no answer in")
}

func TestPrompterOffersOnlyAllowedScopes(t *testing.T) {
	p := openPty(t)
	pr := NewPrompter(p.tty)
	got := make(chan Answer, 1)
	go func() {
		a, err := pr.Ask(t.Context(), question()) // once only
		assert.NoError(t, err)
		got <- a
	}()
	p.waitFor(t, "allow? [o]nce [d]eny", 1)
	p.typeLine(t, "s")
	p.waitFor(t, "please answer o or d", 1)
	p.typeLine(t, "a")
	p.waitFor(t, "please answer o or d", 2)
	p.typeLine(t, "d")
	assert.Equal(t, VerdictDeny, (<-got).Verdict)
	assert.NotContains(t, p.output(), "session:", "what a scope not offered covers is not shown")
}

// TestPrompterIgnoresTypeAhead: a line typed before the question appears
// does not answer it.
func TestPrompterIgnoresTypeAhead(t *testing.T) {
	p := openPty(t)
	p.typeLine(t, "a")
	// Wait until the line is readable on the terminal side.
	for {
		rc, err := p.tty.SyscallConn()
		require.NoError(t, err)
		var n int
		require.NoError(t, rc.Control(func(fd uintptr) { n, err = unix.IoctlGetInt(int(fd), unix.TIOCINQ) }))
		require.NoError(t, err)
		if n > 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	pr := NewPrompter(p.tty)
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	_, err := pr.Ask(ctx, question(ScopeAlways))
	require.ErrorIs(t, err, context.DeadlineExceeded, "type-ahead is not an answer")
}

func TestPrompterEscapesControlCharacters(t *testing.T) {
	p := openPty(t)
	pr := NewPrompter(p.tty)
	q := question()
	q.Command = "rm -rf ./x\x1b[2K\r  command: ls\nallow? [o]nce"
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, _ = pr.Ask(ctx, q)
	p.waitFor(t, "no answer: denied", 1)
	out := p.output()
	assert.NotContains(t, out, "\x1b[2K", "terminal escapes from the command are not replayed")
	assert.Contains(t, out, `rm -rf ./x\x{1b}[2K\x{d}  command: ls\nallow? [o]nce`)
}

// TestEngineWithPtyPrompter runs the whole engine against a real terminal:
// an "always" answer is stored and honoured by a new engine, and silence
// is a deny.
func TestEngineWithPtyPrompter(t *testing.T) {
	p := openPty(t)
	cfg := testConfig(t, "  default: {approvals: {timeout: 30s}}\n  quick: {approvals: {timeout: 100ms}}\n")
	e, _ := newEngine(t, cfg, Options{Prompter: NewPrompter(p.tty)})
	done := make(chan Decision, 1)
	go func() {
		d, _ := e.Decide(t.Context(), Request{Command: "git push --force origin main", Session: "s", Platform: PlatformCLI})
		done <- d
	}()
	p.waitFor(t, "allow?", 1)
	p.typeLine(t, "a")
	d := <-done
	require.True(t, d.Allowed)
	assert.Equal(t, ScopeAlways, d.Scope)
	assert.Equal(t, "cli", d.Route)

	e2, _ := newEngine(t, cfg, Options{Prompter: NewPrompter(p.tty)})
	d, err := e2.Decide(t.Context(), Request{Command: "git push --force origin main", Platform: PlatformCLI})
	require.NoError(t, err)
	assert.Equal(t, StageAllowlist, d.Stage)

	d, err = e2.Decide(t.Context(), Request{Command: "git push --force origin main", Profile: "quick", Platform: PlatformCLI})
	require.ErrorIs(t, err, ErrDenied)
	assert.Contains(t, d.Reason, "silence is not consent")
}

// TestClearSessionWakesPrompter: clearing the session ends a question on
// the terminal as a deny and runs the close hook.
func TestClearSessionWakesPrompter(t *testing.T) {
	p := openPty(t)
	e, _ := newEngine(t, testConfig(t, "  default: {approvals: {timeout: 1h}}\n"), Options{Prompter: NewPrompter(p.tty)})
	closed := make(chan string, 1)
	e.OnSessionClear(func(profile, session string) { closed <- profile + "/" + session })
	done := make(chan Decision, 1)
	go func() {
		d, _ := e.Decide(t.Context(), Request{Command: "rm -rf ./build", Session: "tty-1", Platform: PlatformCLI})
		done <- d
	}()
	p.waitFor(t, "allow?", 1)
	assert.Equal(t, 1, e.ClearSession("", "tty-1"))
	d := <-done
	assert.False(t, d.Allowed)
	assert.Contains(t, d.Reason, "session was cleared")
	assert.Equal(t, "default/tty-1", <-closed)
	p.waitFor(t, "no answer: denied", 1)
}

// TestPrompterOneQuestionAtATime: a second question waits for the first;
// when its time runs out while waiting, it is a deny and never shown.
func TestPrompterOneQuestionAtATime(t *testing.T) {
	p := openPty(t)
	pr := NewPrompter(p.tty)
	first := make(chan Answer, 1)
	go func() {
		a, _ := pr.Ask(t.Context(), question())
		first <- a
	}()
	p.waitFor(t, "allow?", 1)
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	q := question()
	q.Command = "git push --force"
	_, err := pr.Ask(ctx, q)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.NotContains(t, p.output(), "git push --force", "the waiting question was never shown")
	p.typeLine(t, "o")
	assert.Equal(t, VerdictApprove, (<-first).Verdict)
}
