package runner

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tether-dev/tether/approval"
	"github.com/tether-dev/tether/config"
)

// startMCP serves a fresh MCP server for the config at cfgPath, for
// platform plat ("" for the default), on an in-memory transport and
// returns the client's end. The server stops at cleanup.
func startMCP(t *testing.T, cfgPath string, plat approval.Platform) *mcp.InMemoryTransport {
	t.Helper()
	cfg, err := config.Load(cfgPath)
	require.NoError(t, err)
	m, err := NewMCP(MCPOptions{Config: cfg, Sandbox: testSandbox(t), Platform: plat})
	require.NoError(t, err)
	st, ct := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx, st) }()
	t.Cleanup(func() { cancel(); <-done })
	return ct
}

// connectMCP connects a client named name to ct; the session
// is closed at cleanup (before the server stops).
func connectMCP(t *testing.T, ct *mcp.InMemoryTransport, name string) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, nil).Connect(t.Context(), ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return cs
}

// checkStructured validates a result's structuredContent against the
// tool's output schema, as a strict client does.
func checkStructured(t *testing.T, tool *mcp.Tool, res *mcp.CallToolResult) {
	t.Helper()
	var s jsonschema.Schema
	b, err := json.Marshal(tool.OutputSchema)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &s))
	rs, err := s.Resolve(nil)
	require.NoError(t, err)
	var inst any
	b, err = json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &inst))
	require.NoError(t, rs.Validate(inst), "structuredContent %s does not match the output schema", b)
}

func TestMCPToolSurface(t *testing.T) {
	cfgPath, _ := mcpConfigFile(t)
	cs := connectMCP(t, startMCP(t, cfgPath, ""), "surface")
	ctx := t.Context()

	ir := cs.InitializeResult()
	require.NotNil(t, ir)
	assert.Contains(t, ir.Instructions, "disable them")
	assert.Contains(t, ir.Instructions, "tether approvals")

	tools, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	byName := map[string]*mcp.Tool{}
	for _, tl := range tools.Tools {
		byName[tl.Name] = tl
		require.NotNil(t, tl.Annotations, tl.Name)
		require.NotNil(t, tl.OutputSchema, tl.Name)
		require.NotNil(t, tl.Annotations.OpenWorldHint, tl.Name)
	}
	for _, n := range []string{"read_file", "search_files"} {
		assert.True(t, byName[n].Annotations.ReadOnlyHint, n)
		assert.False(t, *byName[n].Annotations.OpenWorldHint, n)
	}
	for _, n := range []string{"terminal", "process", "write_file", "patch"} {
		a := byName[n].Annotations
		assert.False(t, a.ReadOnlyHint, n)
		require.NotNil(t, a.DestructiveHint, n)
		assert.True(t, *a.DestructiveHint, n)
	}
	// The default profile has no network: its commands reach no open world.
	assert.False(t, *byName["terminal"].Annotations.OpenWorldHint)

	// Every kind of result matches the output schema.
	for _, c := range []struct {
		tool string
		args map[string]any
		err  bool
	}{
		{"terminal", map[string]any{"command": "echo hi"}, false},
		{"terminal", map[string]any{"command": "exit 3"}, true},
		{"terminal", map[string]any{"command": "rm -rf / --no-preserve-root"}, true},
		{"write_file", map[string]any{"path": "a.txt", "content": "x"}, false},
		{"read_file", map[string]any{"path": "a.txt"}, false},
		{"read_file", map[string]any{"path": 7}, true},
		{"search_files", map[string]any{"pattern": "x"}, false},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
		require.NoError(t, err, c)
		assert.Equal(t, c.err, res.IsError, "%v: %s", c, callText(res))
		checkStructured(t, byName[c.tool], res)
	}

	// An unknown tool is a tool result the model reads, not a protocol
	// error, and it names the tools there are.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "Bash", Arguments: map[string]any{"command": "id"}})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, callText(res), "unknown tool")
	assert.Contains(t, callText(res), "terminal")
	checkStructured(t, byName["terminal"], res)
}

// rawRPC is one JSON-RPC exchange on a raw connection: it writes req and
// returns the next message with its id.
func rawRPC(t *testing.T, w io.Writer, r *bufio.Reader, req string) map[string]any {
	t.Helper()
	_, err := io.WriteString(w, req+"\n")
	require.NoError(t, err)
	var want map[string]any
	require.NoError(t, json.Unmarshal([]byte(req), &want))
	for {
		line, err := r.ReadBytes('\n')
		require.NoError(t, err)
		var msg map[string]any
		require.NoError(t, json.Unmarshal(line, &msg), string(line))
		if msg["id"] == want["id"] {
			return msg
		}
	}
}

// A client that asks initialize for a version negotiated only through
// server/discover is answered with 2025-11-25, and the session then uses
// 2025-11-25's semantics: a result always has content, and no
// input-required result is sent to it.
func TestMCPInitializeVersionIsTheOneUsed(t *testing.T) {
	cfgPath, ws := mcpConfigFile(t)
	cfg, err := config.Load(cfgPath)
	require.NoError(t, err)
	m, err := NewMCP(MCPOptions{Config: cfg, Sandbox: testSandbox(t)})
	require.NoError(t, err)
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx, &mcp.IOTransport{Reader: sr, Writer: sw}) }()
	t.Cleanup(func() { cancel(); cw.Close(); cr.Close(); <-done })
	rd := bufio.NewReader(cr)

	init := rawRPC(t, cw, rd, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2026-07-28","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	res, _ := init["result"].(map[string]any)
	require.NotNil(t, res, "%v", init)
	assert.Equal(t, "2025-11-25", res["protocolVersion"])
	_, err = io.WriteString(cw, `{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`+"\n")
	require.NoError(t, err)

	require.NoError(t, os.Mkdir(filepath.Join(ws, "build"), 0o755))
	call := rawRPC(t, cw, rd, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write_file","arguments":{"path":".git/hooks/x","content":"x"}}}`)
	res, _ = call["result"].(map[string]any)
	require.NotNil(t, res, "%v", call)
	assert.NotNil(t, res["content"], "a 2025-11-25 result has content: %v", res)
	assert.NotContains(t, res, "resultType")
	assert.NotContains(t, res, "inputRequests")

	unknown := rawRPC(t, cw, rd, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}`)
	assert.NotContains(t, unknown, "error")
	res, _ = unknown["result"].(map[string]any)
	require.NotNil(t, res, "%v", unknown)
	assert.Equal(t, true, res["isError"])
}

func TestInitializeVersion(t *testing.T) {
	for client, want := range map[string]string{
		"2024-11-05": "2024-11-05",
		"2025-06-18": "2025-06-18",
		"2025-11-25": "2025-11-25",
		"2026-07-28": "2025-11-25",
		"2099-01-01": "2025-11-25",
		"":           "2025-11-25",
		"garbage":    "2025-11-25",
	} {
		assert.Equal(t, want, initializeVersion(client), client)
	}
}
