package runner

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tether-dev/tether/config"
)

// mcpInstructions is the server's instructions to the client and its
// model: what tether is, how approvals arrive, and that the client's own
// shell and file tools go around it.
const mcpInstructions = `tether runs this agent's shell commands and file edits on the user's Linux host, each through gates (tool visibility, the hardline blocklist, dangerous-command rules, the job's mandate, the user's approval) and then in a fresh sandbox (namespaces, cgroups, seccomp).

Use these tools for every command and file access. If the client also offers its own shell, file read/write/edit or search tools, they bypass tether entirely: the user should disable them (docs/mcp.md names the setting for common clients), and the model should not use them.

Every result says its class: succeeded, failed (it ran and failed), refused (a gate stopped it; nothing ran), blocked (outside the mandate; nothing ran) or pending_approval. A command that needs approval is asked of the user through MCP elicitation when the client supports it; otherwise it waits in tether's approval queue, where a person answers with "tether approvals" on this machine or the daemon's API, until the approval timeout. A refusal is final for that command: do not retry it in another form.`

// outputSchema is the JSON schema of every tool's structuredContent: a
// Result, whatever the tool. Derived on first use (tether mcp), not at
// start-up: every other command would pay for it.
var outputSchema = sync.OnceValue(func() *jsonschema.Schema {
	s, err := jsonschema.For[Result](nil)
	if err != nil {
		panic(fmt.Sprintf("deriving the MCP output schema: %v", err))
	}
	return s
})

// annotations are the MCP hints of a tool, derived from its kind: file
// reads are read-only, writes and commands destructive; only a command
// whose sandbox has a network reaches an open world.
func annotations(t *Tool, prof *config.Profile) *mcp.ToolAnnotations {
	yes, no := true, false
	open := &no
	if prof.Terminal.Network.Mode != config.NetworkNone && prof.Terminal.Network.Mode != "" {
		open = &yes
	}
	switch t.Kind {
	case KindRead:
		return &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &no}
	case KindWrite:
		return &mcp.ToolAnnotations{DestructiveHint: &yes, OpenWorldHint: &no}
	case KindTerminal:
		return &mcp.ToolAnnotations{DestructiveHint: &yes, OpenWorldHint: open}
	}
	// A tool nobody described may do anything.
	return &mcp.ToolAnnotations{DestructiveHint: &yes, OpenWorldHint: &yes}
}

// newestInitializeVersion is the newest protocol version negotiated
// through initialize: later versions negotiate with server/discover, and
// the SDK answers such a client's initialize with this version.
const newestInitializeVersion = "2025-11-25"

// initializeVersion is the version an initialize request negotiates: the
// client's, if the SDK supports it through initialize, else
// newestInitializeVersion.
func initializeVersion(client string) string {
	if client < "2026-07-28" && slices.Contains(mcp.SupportedProtocolVersions(), client) {
		return client
	}
	return newestInitializeVersion
}

// negotiateMiddleware makes the session use the semantics of the version
// initialize answers. The SDK answers a client asking for a version it
// cannot negotiate through initialize (2026-07-28 and later, or one it
// does not know) with 2025-11-25, but keeps the client's own version in
// the session and uses its semantics (input-required results, content
// null), invalid under the version announced. The request's version is
// rewritten to the one answered before the SDK records it, and the answer
// is checked, so a change in the SDK's negotiation fails the handshake
// instead of splitting the session's semantics.
func negotiateMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		ir, ok := req.(*mcp.ServerRequest[*mcp.InitializeParams])
		if method != "initialize" || !ok || ir.Params == nil {
			return next(ctx, method, req)
		}
		p := *ir.Params
		p.ProtocolVersion = initializeVersion(ir.Params.ProtocolVersion)
		r2 := *ir
		r2.Params = &p
		res, err := next(ctx, method, &r2)
		if err != nil {
			return res, err
		}
		if out, ok := res.(*mcp.InitializeResult); !ok || out.ProtocolVersion != p.ProtocolVersion {
			return nil, fmt.Errorf("negotiating the MCP protocol version: the session uses %s but the answer differs (%v)", p.ProtocolVersion, res)
		}
		return res, nil
	}
}

// unknownToolMiddleware answers a call of a tool this server does not
// expose with a tool result the model can read (isError), not the
// JSON-RPC error the SDK gives, which a client shows only to its user: the
// call goes through the pipeline like any other, whose validation gate
// refuses it and names the tools there are.
func unknownToolMiddleware(known []string, handle func(name string) mcp.ToolHandler) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			cr, ok := req.(*mcp.CallToolRequest)
			if method != "tools/call" || !ok || cr.Params == nil || slices.Contains(known, cr.Params.Name) {
				return next(ctx, method, req)
			}
			return handle(cr.Params.Name)(ctx, cr)
		}
	}
}
