package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tether-dev/tether/approval"
	"github.com/tether-dev/tether/config"
	"github.com/tether-dev/tether/mandate"
)

// hostRunner returns a Runner over a host-backend profile (no sandbox, so
// no privileges needed) with a real approval engine and mandate store.
func hostRunner(t *testing.T, extra string) (*Runner, string) {
	t.Helper()
	cfg, ws := testConfig(t, "      backend: host\n      env_passthrough: [PATH]\n"+extra)
	store := testStore(t, cfg)
	eng := testEngine(t, cfg, approval.Options{Mandate: &mandate.Hook{Store: store},
		Redact: func(p, s string) string { return ResolveSecretScope(cfg, nil, p).Masker().Mask(s) }})
	return &Runner{Config: cfg, Engine: eng, Mandates: store,
		LookupEnv: func(k string) (string, bool) {
			if k == "PATH" {
				return "/usr/bin:/bin", true
			}
			return "", false
		}}, ws
}

func TestTerminalHostBackendThroughTheGates(t *testing.T) {
	t.Parallel()
	r, ws := hostRunner(t, "    secrets:\n      values:\n        API_TOKEN: tok-very-secret-123\n")
	require.NoError(t, os.Mkdir(filepath.Join(ws, "build"), 0o755))
	out := r.Execute(t.Context(), Batch{Platform: approval.PlatformAPI, Calls: []RawCall{
		rawCall("1", "terminal", args("command", "pwd; echo $API_TOKEN; echo ${HOME:-nohome}")),
		rawCall("2", "terminal", args("command", ":(){ :|:& };:")),
		rawCall("3", "terminal", args("command", "rm -rf build")),
		rawCall("4", "terminal", args("command", "sleep 5", "timeout", 1)),
		rawCall("5", "terminal", args("command", "echo x >&2; exit 7")),
	}}, nil)
	res := out.Results
	require.Equal(t, ClassSucceeded, res[0].Class, res[0].Message)
	assert.Equal(t, ws+"\n***\nnohome\n", res[0].Output["stdout"], "cwd is the workspace, secrets are masked, nothing else is inherited")
	assert.Equal(t, ClassBlocked, res[1].Class)
	assert.Equal(t, "hardline.fork-bomb", res[1].Rule)
	assert.Equal(t, ClassBlocked, res[2].Class, "api platform: unattended_mode deny")
	assert.DirExists(t, filepath.Join(ws, "build"))
	assert.Equal(t, ClassFailed, res[3].Class)
	assert.Equal(t, true, res[3].Output["timed_out"])
	assert.Equal(t, ClassFailed, res[4].Class)
	assert.Equal(t, 7, res[4].Output["exit_code"])
	assert.Equal(t, "x\n", res[4].Output["stderr"])

	// The audit log never holds the secret.
	audit, err := os.ReadFile(approval.AuditPath(r.Config.StateDir))
	require.NoError(t, err)
	assert.NotContains(t, string(audit), "tok-very-secret-123")
}

func TestNoTerminalPolicyRefusesTerminal(t *testing.T) {
	t.Parallel()
	cfg, err := config.Parse("t.yaml", []byte("state_dir: "+t.TempDir()+"\nprofiles:\n  default: {}\n"), "")
	require.NoError(t, err)
	r := &Runner{Config: cfg}
	// No cwd in the profile and none from the caller: no workspace, so
	// nothing runs, and nothing falls back to the daemon's cwd.
	out := r.Execute(t.Context(), Batch{Calls: []RawCall{rawCall("1", "terminal", args("command", "true"))}}, nil)
	assert.Equal(t, ClassRefused, out.Results[0].Class)
	assert.Contains(t, out.Results[0].Message, "terminal policy unavailable")
}

func TestFileToolsUnderMandate(t *testing.T) {
	t.Parallel()
	r, ws := hostRunner(t, "")
	ctx := t.Context()
	job := Batch{Platform: approval.PlatformCron, Job: "nightly", Session: "run1"}
	// Observe: a run writes src/a.go and reads README.
	job.Calls = []RawCall{
		rawCall("1", "write_file", args("path", "src/a.go", "content", "package a\n")),
		rawCall("2", "write_file", args("path", "README", "content", "hi\n")),
		rawCall("3", "read_file", args("path", "README")),
		rawCall("4", "terminal", args("command", "ls src")),
	}
	out := r.Execute(ctx, job, nil)
	for _, res := range out.Results {
		require.Equal(t, ClassSucceeded, res.Class, res.Message)
	}
	jobs, err := r.Mandates.Jobs(ctx)
	require.NoError(t, err)
	require.Len(t, jobs, 1)
	assert.Equal(t, 4, jobs[0].Calls, "every call of the job was observed (terminal through the engine's hook)")

	v, err := r.Mandates.Compile(ctx, "nightly")
	require.NoError(t, err)
	_, err = r.Mandates.Approve(ctx, "nightly", v.Number, "test")
	require.NoError(t, err)

	// Enforce: the same writes pass, a write elsewhere is blocked and
	// becomes drift.
	job.Session = "run2"
	job.Calls = []RawCall{
		rawCall("1", "write_file", args("path", "src/a.go", "content", "package a // v2\n")),
		rawCall("2", "write_file", args("path", "deploy/key", "content", "x")),
		rawCall("3", "terminal", args("command", "ls src")),
		rawCall("4", "terminal", args("command", "cat README")),
	}
	out = r.Execute(ctx, job, nil)
	assert.Equal(t, ClassSucceeded, out.Results[2].Class, out.Results[2].Message)
	assert.Equal(t, ClassBlocked, out.Results[3].Class, "a command outside the mandate is blocked through the engine's hook")
	require.NotNil(t, out.Results[3].Decision)
	assert.Equal(t, approval.StageMandate, out.Results[3].Decision.Stage)
	assert.Equal(t, ClassSucceeded, out.Results[0].Class, out.Results[0].Message)
	assert.Equal(t, ClassBlocked, out.Results[1].Class)
	assert.Equal(t, approval.RuleMandate, out.Results[1].Rule)
	assert.Equal(t, approval.RuleMandate, out.Results[3].Rule, "the rule field is the same for terminal and file tools")
	assert.True(t, strings.Contains(out.Results[1].Message, "drift"), out.Results[1].Message)
	assert.NoFileExists(t, filepath.Join(ws, "deploy/key"))
	drift, err := r.Mandates.Drift(ctx, "nightly")
	require.NoError(t, err)
	assert.Len(t, drift, 2)
}

func TestHandlerPanicIsAFailureWithPossibleEffect(t *testing.T) {
	t.Parallel()
	cfg, _ := testConfig(t, "    enabled_toolsets: [plugins]\n")
	reg := NewRegistry()
	require.NoError(t, reg.Register(Tool{Name: "boom", Toolset: "plugins", Schema: map[string]any{"type": "object"},
		Handler: func(contextT, *Env, *Call) Result { panic("plugin bug") }}))
	r := &Runner{Config: cfg, Registry: reg}
	out := r.Execute(t.Context(), Batch{Calls: []RawCall{rawCall("1", "boom", map[string]any{})}}, nil)
	assert.Equal(t, ClassFailed, out.Results[0].Class)
	assert.Equal(t, EffectPossible, out.Results[0].Effect, "a plugin is effect-capable: it may have done something")
}
