package runner

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tether-dev/tether/approval"
	"github.com/tether-dev/tether/internal/testenv"
)

// tsSDKDir installs the official MCP TypeScript SDK with npm into a
// temporary directory holding the test client, and returns it.
func tsSDKDir(t *testing.T) string {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			testenv.SkipOrFail(t, tool+" is not installed")
		}
	}
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join("testdata", "mcp_ts_client.mjs"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "client.mjs"), src, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"private":true,"type":"module"}`), 0o644))
	cmd := exec.Command("npm", "install", "--no-audit", "--no-fund", "--loglevel=error", "@modelcontextprotocol/sdk@^1")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		testenv.SkipOrFail(t, "npm install @modelcontextprotocol/sdk: "+err.Error()+": "+string(out))
	}
	return dir
}

type tsRun struct {
	Instructions string `json:"instructions"`
	Tools        []struct {
		Name         string         `json:"name"`
		Annotations  map[string]any `json:"annotations"`
		OutputSchema map[string]any `json:"outputSchema"`
	} `json:"tools"`
	Results []struct {
		IsError           bool           `json:"isError"`
		StructuredContent map[string]any `json:"structuredContent"`
		Content           []struct {
			Text string `json:"text"`
		} `json:"content"`
	} `json:"results"`
	Asked []string `json:"asked"`
}

// runTSClient runs the TypeScript client against this test binary acting
// as `tether mcp`.
func runTSClient(t *testing.T, dir string, spec mcpHelperSpec, calls []map[string]any, mode string) tsRun {
	t.Helper()
	sp, err := json.Marshal(spec)
	require.NoError(t, err)
	argv, err := json.Marshal([]string{os.Args[0]})
	require.NoError(t, err)
	cj, err := json.Marshal(calls)
	require.NoError(t, err)
	cmd := exec.Command("node", "client.mjs", string(cj), mode)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), mcpHelperEnv+"="+string(sp), "TETHER_MCP_CMD="+string(argv))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	require.NoError(t, err, string(out))
	var r tsRun
	require.NoError(t, json.Unmarshal(out, &r), string(out))
	return r
}

func TestMCPWithTypeScriptSDK(t *testing.T) {
	dir := tsSDKDir(t)
	sb := testSandbox(t)
	cfgPath, ws := mcpConfigFile(t)
	spec := mcpHelperSpec{Config: cfgPath, StateRoot: sb.StateRoot, Prefix: sb.CgroupPrefix}
	require.NoError(t, os.Mkdir(filepath.Join(ws, "build"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "build", "x"), []byte("x"), 0o644))

	calls := []map[string]any{
		{"name": "terminal", "arguments": map[string]any{"command": "rm -rf build"}},
		{"name": "read_file", "arguments": map[string]any{"path": "nope.txt"}},
		{"name": "Bash", "arguments": map[string]any{"command": "id"}},
	}
	r := runTSClient(t, dir, spec, calls, "elicit")

	assert.Contains(t, r.Instructions, "tether approvals")
	require.Len(t, r.Tools, 6)
	for _, tl := range r.Tools {
		assert.Equal(t, "object", tl.OutputSchema["type"], tl.Name)
		switch tl.Name {
		case "read_file", "search_files":
			assert.Equal(t, true, tl.Annotations["readOnlyHint"], tl.Name)
		default:
			assert.Equal(t, true, tl.Annotations["destructiveHint"], tl.Name)
		}
		assert.Contains(t, tl.Annotations, "openWorldHint", tl.Name)
	}

	require.Len(t, r.Results, 3)
	// The dangerous call was asked through elicitation, approved, and ran.
	require.Len(t, r.Asked, 1)
	assert.Contains(t, r.Asked[0], "rm -rf build")
	assert.False(t, r.Results[0].IsError, "%+v", r.Results[0])
	assert.Equal(t, "succeeded", r.Results[0].StructuredContent["class"])
	assert.NoDirExists(t, filepath.Join(ws, "build"))
	// A failed read and an unknown tool are tool results the model reads.
	assert.True(t, r.Results[1].IsError)
	assert.Equal(t, "failed", r.Results[1].StructuredContent["class"])
	assert.True(t, r.Results[2].IsError)
	assert.Equal(t, "refused", r.Results[2].StructuredContent["class"])
	require.NotEmpty(t, r.Results[2].Content)
	assert.Contains(t, r.Results[2].Content[0].Text, "unknown tool")

	// A client without elicitation, and no queue: nothing runs.
	require.NoError(t, os.Mkdir(filepath.Join(ws, "keep"), 0o755))
	r = runTSClient(t, dir, spec, []map[string]any{{"name": "terminal", "arguments": map[string]any{"command": "rm -rf keep"}}}, "")
	require.Len(t, r.Results, 1)
	assert.Empty(t, r.Asked)
	assert.Equal(t, "pending_approval", r.Results[0].StructuredContent["class"])
	assert.DirExists(t, filepath.Join(ws, "keep"))

	// With the server's queue published, a person answers through
	// `tether approvals --mcp` while the calls wait: the first approved,
	// the second denied with a reason the model reads.
	tether := buildTether(t)
	spec.ApprovalDir = filepath.Join(t.TempDir(), "q")
	require.NoError(t, os.Mkdir(filepath.Join(ws, "gone"), 0o755))
	answered := make(chan error, 1)
	go func() { answered <- answerWithCLI(tether, spec.ApprovalDir) }()
	r = runTSClient(t, dir, spec, []map[string]any{
		{"name": "terminal", "arguments": map[string]any{"command": "rm -rf gone"}},
		{"name": "terminal", "arguments": map[string]any{"command": "rm -rf keep"}},
	}, "")
	require.NoError(t, <-answered)
	require.Len(t, r.Results, 2)
	assert.Empty(t, r.Asked)
	assert.Equal(t, "succeeded", r.Results[0].StructuredContent["class"], "%+v", r.Results[0])
	assert.NoDirExists(t, filepath.Join(ws, "gone"))
	assert.Equal(t, "blocked", r.Results[1].StructuredContent["class"], "%+v", r.Results[1])
	require.NotEmpty(t, r.Results[1].Content)
	assert.Contains(t, r.Results[1].Content[0].Text, "keep that directory")
	assert.DirExists(t, filepath.Join(ws, "keep"))
	// The server removed its queue when it ended.
	left, _ := filepath.Glob(filepath.Join(spec.ApprovalDir, "*"))
	assert.Empty(t, left)
}

// buildTether builds cmd/tether into a temporary directory.
func buildTether(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "tether")
	cmd := exec.Command("go", "build", "-tags", "seccomp", "-o", bin, "../cmd/tether")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	return bin
}

// answerWithCLI waits for each of two requests in the MCP server's queue
// with `tether approvals --mcp list` and answers it: approve, then deny
// with a reason.
func answerWithCLI(tether, dir string) error {
	for _, answer := range [][]string{{"approve"}, {"deny", "--reason", "keep that directory"}} {
		deadline := time.Now().Add(2 * time.Minute)
		for {
			cmd := exec.Command(tether, "approvals", "--mcp", "list", "--json")
			cmd.Env = append(os.Environ(), "TETHER_MCP_APPROVAL_DIR="+dir)
			out, _ := cmd.Output()
			var l struct {
				Pending []approval.Pending `json:"pending"`
			}
			if json.Unmarshal(out, &l) == nil && len(l.Pending) == 1 {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("no request appeared in the queue (last listing %s)", out)
			}
			time.Sleep(100 * time.Millisecond)
		}
		cmd := exec.Command(tether, append([]string{"approvals", "--mcp"}, answer...)...)
		cmd.Env = append(os.Environ(), "TETHER_MCP_APPROVAL_DIR="+dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("tether approvals --mcp %v: %v: %s", answer, err, out)
		}
	}
	return nil
}
