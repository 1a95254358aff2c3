package runner

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tether-dev/tether/approval"
	"github.com/tether-dev/tether/config"
	"github.com/tether-dev/tether/sandbox"
)

// mcpHelperEnv makes the test binary act as `tether mcp`: the value is a
// JSON mcpHelperSpec.
const mcpHelperEnv = "TETHER_RUNNER_TEST_MCP"

type mcpHelperSpec struct {
	Config    string `json:"config"`
	StateRoot string `json:"state_root"`
	Prefix    string `json:"prefix"`
	// ApprovalDir is MCPOptions.ApprovalDir.
	ApprovalDir string `json:"approval_dir,omitempty"`
}

// mcpHelperMain serves MCP on stdin/stdout, as `tether mcp` does.
func mcpHelperMain() int {
	var spec mcpHelperSpec
	if err := json.Unmarshal([]byte(os.Getenv(mcpHelperEnv)), &spec); err != nil {
		return 2
	}
	cfg, err := config.Load(spec.Config)
	m, err := NewMCP(MCPOptions{Config: cfg, ConfigErr: err, Version: "test", ApprovalDir: spec.ApprovalDir,
		Sandbox: sandbox.Runner{StateRoot: spec.StateRoot, CgroupPrefix: spec.Prefix}})
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		return 1
	}
	if err := m.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		return 1
	}
	return 0
}

// mcpConfigFile writes a config file for a workspace and returns its path.
func mcpConfigFile(t *testing.T) (path, ws string) {
	t.Helper()
	dir := t.TempDir()
	ws = filepath.Join(dir, "ws")
	require.NoError(t, os.Mkdir(ws, 0o755))
	path = filepath.Join(dir, "config.yaml")
	y := "state_dir: " + filepath.Join(dir, "state") + "\nprofiles:\n  default:\n    terminal:\n      cwd: " + ws + "\n    approvals:\n      timeout: 60s\n"
	require.NoError(t, os.WriteFile(path, []byte(y), 0o600))
	return path, ws
}

func callText(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

func TestMCPOverStdio(t *testing.T) {
	sb := testSandbox(t)
	cfgPath, ws := mcpConfigFile(t)
	spec, _ := json.Marshal(mcpHelperSpec{Config: cfgPath, StateRoot: sb.StateRoot, Prefix: sb.CgroupPrefix})
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), mcpHelperEnv+"="+string(spec))
	cmd.Stderr = os.Stderr

	var asked []string
	answer := "once"
	client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked = append(asked, req.Params.Message)
			if answer == "decline" {
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": answer}}, nil
		}})
	ctx := t.Context()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	defer cs.Close()

	tools, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	assert.ElementsMatch(t, []string{"terminal", "process", "read_file", "write_file", "patch", "search_files"}, names)

	// An allowed command runs in the sandbox (its own hostname).
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "terminal", Arguments: map[string]any{"command": "hostname; echo hi > made.txt"}})
	require.NoError(t, err)
	require.False(t, res.IsError, callText(res))
	assert.Contains(t, callText(res), sandbox.DefaultHostname)
	assert.FileExists(t, filepath.Join(ws, "made.txt"))
	assert.Empty(t, asked, "an allowed command asks nobody")

	// A hardline command is refused without asking.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "terminal", Arguments: map[string]any{"command": "rm -rf / --no-preserve-root"}})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, callText(res), "hardline")
	assert.Empty(t, asked)

	// A command needing approval is asked through elicitation.
	require.NoError(t, os.Mkdir(filepath.Join(ws, "build"), 0o755))
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "terminal", Arguments: map[string]any{"command": "rm -rf build"}})
	require.NoError(t, err)
	require.False(t, res.IsError, callText(res))
	require.Len(t, asked, 1)
	assert.Contains(t, asked[0], "rm -rf build")
	assert.Contains(t, asked[0], "session: this command (normalised: rm -rf build) until session mcp-")
	assert.NoDirExists(t, filepath.Join(ws, "build"))

	answer = "decline"
	require.NoError(t, os.Mkdir(filepath.Join(ws, "keep"), 0o755))
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "terminal", Arguments: map[string]any{"command": "rm -rf keep"}})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, callText(res), "declined by the user")
	assert.DirExists(t, filepath.Join(ws, "keep"))

	// File tools go through the same gates.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "write_file", Arguments: map[string]any{"path": ".git/hooks/pre-commit", "content": "x"}})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, callText(res), "protected")
}

// TestElicitParamsSayWhatEachScopeCovers: the elicitation names exactly
// what each offered answer lets run, and offers nothing else.
func TestElicitParamsSayWhatEachScopeCovers(t *testing.T) {
	q := approval.Question{Command: "git push --force", Cwd: "/w",
		Findings: []approval.Finding{{Rule: "approval.git-force-push", Description: "force push"}},
		Scopes:   []approval.Scope{approval.ScopeOnce, approval.ScopeSession},
		Covers: map[approval.Scope]string{approval.ScopeOnce: "this call only",
			approval.ScopeSession: "this command (normalised: git push --force) until session s is cleared",
			approval.ScopeAlways:  "adds git push --force to the allowlist"}}
	p := elicitParams(q)
	assert.Contains(t, p.Message, "once: this call only")
	assert.Contains(t, p.Message, "session: this command (normalised: git push --force) until session s is cleared")
	assert.NotContains(t, p.Message, "always", "always is not offered, so neither shown nor promised")
	enum := p.RequestedSchema.(map[string]any)["properties"].(map[string]any)["decision"].(map[string]any)["enum"]
	assert.Equal(t, []any{"deny", "once", "session"}, enum)
}

func TestMCPWithoutElicitationIsPending(t *testing.T) {
	cfgPath, ws := mcpConfigFile(t)
	cs := connectMCP(t, startMCP(t, cfgPath, ""), "plain")
	ctx := t.Context()
	require.NoError(t, os.Mkdir(filepath.Join(ws, "build"), 0o755))
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "terminal", Arguments: map[string]any{"command": "rm -rf build"}})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, callText(res), "nothing ran")
	sc, _ := json.Marshal(res.StructuredContent)
	assert.Contains(t, string(sc), `"class":"pending_approval"`)
	assert.DirExists(t, filepath.Join(ws, "build"))
}

// TestMCPCronPlatformFollowsCronMode: an MCP server started for an
// unattended platform asks nobody: an approval-tier command follows the
// profile's cron_mode (deny by default) instead of waiting as pending.
func TestMCPCronPlatformFollowsCronMode(t *testing.T) {
	cfgPath, ws := mcpConfigFile(t)
	cs := connectMCP(t, startMCP(t, cfgPath, approval.PlatformCron), "plain")
	ctx := t.Context()
	require.NoError(t, os.Mkdir(filepath.Join(ws, "build"), 0o755))
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "terminal", Arguments: map[string]any{"command": "rm -rf build"}})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	sc, _ := json.Marshal(res.StructuredContent)
	assert.Contains(t, string(sc), `"class":"blocked"`)
	assert.Contains(t, string(sc), `"ran":false`)
	assert.NotContains(t, string(sc), `pending_approval`)
	assert.Contains(t, callText(res), "cron_mode")
	assert.DirExists(t, filepath.Join(ws, "build"))
}

// TestMCPTurnFromMeta: a client names the guardrail turn of a call in its
// _meta (MetaTurn): the same turn keeps its counts, a new one starts
// afresh.
func TestMCPTurnFromMeta(t *testing.T) {
	cfgPath, _ := mcpConfigFile(t)
	cs := connectMCP(t, startMCP(t, cfgPath, ""), "plain")
	ctx := t.Context()
	read := func(turn string) string {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Meta: mcp.Meta{MetaTurn: turn}, Name: "read_file", Arguments: map[string]any{"path": "missing.txt"}})
		require.NoError(t, err)
		sc, _ := json.Marshal(res.StructuredContent)
		return string(sc)
	}
	for range 3 {
		assert.Contains(t, read("turn-1"), `"class":"failed"`)
	}
	assert.Contains(t, read("turn-1"), "guardrail.identical-failures", "the same turn: refused")
	assert.Contains(t, read("turn-2"), `"class":"failed"`, "a new turn: it runs")
	assert.Contains(t, read("turn-1"), "guardrail.identical-failures", "turn-1 keeps its counts")
}
