package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tether-dev/tether/approval"
)

// askRecorder is a CLI prompter that records the questions and answers
// with verdict.
type askRecorder struct {
	mu      sync.Mutex
	asked   []approval.Question
	verdict approval.Verdict
}

func (a *askRecorder) Name() string { return "test-cli" }

func (a *askRecorder) Ask(_ context.Context, q approval.Question) (approval.Answer, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, q)
	return approval.Answer{Verdict: a.verdict, Scope: approval.ScopeSession, By: "cli:test"}, nil
}

func (a *askRecorder) questions() []approval.Question {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]approval.Question{}, a.asked...)
}

const secretValue = "SECRET_VALUE_93"

// filesRunner is a runner over a workspace holding .env and a private
// directory, with files.deny and files.ask set, asking rec on the CLI.
func filesRunner(t *testing.T, rec *askRecorder) (*Runner, string) {
	t.Helper()
	cfg, ws := testConfig(t, "    files:\n      deny: [\"private/**\"]\n      ask: [\"*.sqlite\"]\n")
	eng := testEngine(t, cfg, approval.Options{Prompter: rec})
	require.NoError(t, os.WriteFile(filepath.Join(ws, ".env"), []byte("TOKEN="+secretValue+"\n"), 0o600))
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "private"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "private", "notes"), []byte(secretValue+"\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "app.sqlite"), []byte(secretValue+"\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "main.go"), []byte("package main // "+strings.ToLower(secretValue)+"\n"), 0o644))
	return &Runner{Config: cfg, Engine: eng}, ws
}

func readCall(p string) RawCall { return rawCall("1", "read_file", map[string]any{"path": p}) }

func oneResult(t *testing.T, r *Runner, c RawCall) Result {
	t.Helper()
	out := r.Execute(t.Context(), Batch{Platform: approval.PlatformCLI, Session: "s", Calls: []RawCall{c}}, nil)
	require.Len(t, out.Results, 1)
	return out.Results[0]
}

// noSecret asserts that nothing of the secret reached the model.
func noSecret(t *testing.T, res Result, what string) {
	t.Helper()
	assert.NotContains(t, res.Message, secretValue, what)
	for k, v := range res.Output {
		if s, ok := v.(string); ok {
			assert.NotContains(t, s, secretValue, "%s: output %s", what, k)
		}
		if l, ok := v.([]any); ok {
			for _, m := range l {
				if mm, ok := m.(map[string]any); ok {
					assert.NotContains(t, mm["text"], secretValue, "%s: a match", what)
				}
			}
		}
	}
}

// TestFilePathRulesAttacks: a model trying to read .env (asked about, the
// person says no) or a denied file through every name the file tools
// accept gets nothing, and a person is asked about the secret file under
// its real name whatever name the model used.
func TestFilePathRulesAttacks(t *testing.T) {
	t.Parallel()
	rec := &askRecorder{verdict: approval.VerdictDeny}
	r, ws := filesRunner(t, rec)
	require.NoError(t, os.Symlink(".env", filepath.Join(ws, "innocent.txt")))
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "sub"), 0o755))
	require.NoError(t, os.Symlink("../private", filepath.Join(ws, "sub", "p")))
	require.NoError(t, os.Link(filepath.Join(ws, ".env"), filepath.Join(ws, "sub", "hard.txt")))
	require.NoError(t, os.Link(filepath.Join(ws, "private", "notes"), filepath.Join(ws, "notes-link")))

	asked := 0
	for _, p := range []string{".env", "innocent.txt", "sub/../.env", "./sub/../.env", filepath.Join(ws, ".env"), "sub/hard.txt", ".ENV"} {
		res := oneResult(t, r, readCall(p))
		noSecret(t, res, p)
		if p == ".ENV" {
			// On a case-sensitive filesystem there is no such file; the
			// rule matched it all the same (case is ignored).
			assert.False(t, res.Ran, p)
		} else {
			assert.Equal(t, ClassBlocked, res.Class, "%s: %s", p, res.Message)
		}
		qs := rec.questions()
		require.Len(t, qs, asked+1, "%s: a person is asked", p)
		q := qs[asked]
		asked++
		assert.Equal(t, "read_file", q.Tool)
		assert.Equal(t, []approval.Scope{approval.ScopeOnce}, q.Scopes, "one call only")
		assert.Contains(t, q.Covers[approval.ScopeOnce], "this read_file call")
		if p == "sub/hard.txt" {
			assert.Contains(t, q.Reason, "sub/hard.txt")
			assert.Contains(t, q.Reason, `".env"`, "the hard link is judged by the secret's name")
		} else if p != ".ENV" {
			assert.Equal(t, "read_file .env", q.Command, "%s: asked under the file's real name", p)
		}
	}

	for _, p := range []string{"private/notes", "sub/p/notes", "notes-link", "PRIVATE/notes"} {
		res := oneResult(t, r, readCall(p))
		noSecret(t, res, p)
		assert.False(t, res.Ran, p)
		if p != "PRIVATE/notes" {
			assert.Equal(t, "files.deny", res.Rule, "%s: %s", p, res.Message)
		}
	}
	assert.Len(t, rec.questions(), asked, "a denied path is never asked about")

	// patch is a read oracle (found or not) and a write: both asked/denied.
	res := oneResult(t, r, rawCall("1", "patch", map[string]any{"path": "innocent.txt", "old_string": "TOKEN=S", "new_string": "x"}))
	assert.Equal(t, ClassBlocked, res.Class)
	res = oneResult(t, r, rawCall("1", "write_file", map[string]any{"path": "sub/p/new", "content": "x"}))
	assert.Equal(t, "files.deny", res.Rule)
	assert.NoFileExists(t, filepath.Join(ws, "private", "new"))
	data, err := os.ReadFile(filepath.Join(ws, ".env"))
	require.NoError(t, err)
	assert.Equal(t, "TOKEN="+secretValue+"\n", string(data))

	// search_files skips every ruled file, however it is reached, and
	// names the skipped ones; it asks nobody.
	before := len(rec.questions())
	for _, start := range []string{"", ".", "sub", "sub/p", ".env", "sub/hard.txt"} {
		args := map[string]any{"pattern": "SECRET_VALUE"}
		if start != "" {
			args["path"] = start
		}
		res := oneResult(t, r, rawCall("1", "search_files", args))
		require.Equal(t, ClassSucceeded, res.Class, "%s: %s", start, res.Message)
		noSecret(t, res, "search from "+start)
		assert.Equal(t, 0, res.Output["count"], "search from %q", start)
		assert.NotZero(t, res.Output["skipped_count"], "search from %q says what it skipped", start)
	}
	assert.Len(t, rec.questions(), before, "a search asks nobody")

	// Something no rule covers is read as before.
	res = oneResult(t, r, readCall("main.go"))
	assert.Equal(t, ClassSucceeded, res.Class)
	res = oneResult(t, r, rawCall("1", "search_files", map[string]any{"pattern": "(?i)secret_value"}))
	assert.Equal(t, 1, res.Output["count"], "main.go is found")
}

// TestFilePathRulesApproved: a yes covers that one call: the file is read,
// and the next read asks again; unattended platforms refuse without
// asking; no engine refuses.
func TestFilePathRulesApproved(t *testing.T) {
	t.Parallel()
	rec := &askRecorder{verdict: approval.VerdictApprove}
	r, _ := filesRunner(t, rec)
	for i := range 2 {
		res := oneResult(t, r, readCall(".env"))
		require.Equal(t, ClassSucceeded, res.Class, res.Message)
		assert.Contains(t, res.Output["content"], "TOKEN=")
		assert.Contains(t, res.Warning, "approved by cli:test")
		assert.Len(t, rec.questions(), i+1, "asked every time")
	}
	res := oneResult(t, r, readCall("app.sqlite"))
	assert.Equal(t, ClassSucceeded, res.Class, "files.ask: approved")
	assert.Equal(t, "files.ask", rec.questions()[2].Findings[0].Rule)

	for _, p := range []approval.Platform{approval.PlatformCron, approval.PlatformAPI} {
		out := r.Execute(t.Context(), Batch{Platform: p, Calls: []RawCall{readCall(".env")}}, nil)
		assert.Equal(t, ClassBlocked, out.Results[0].Class, p)
		noSecret(t, out.Results[0], string(p))
	}
	assert.Len(t, rec.questions(), 3, "nobody is asked on unattended platforms")

	noEngine := &Runner{Config: r.Config}
	res = oneResult(t, noEngine, readCall(".env"))
	assert.Equal(t, ClassBlocked, res.Class)
	noSecret(t, res, "no engine")
}
