package runner

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tether-dev/tether/approval"
	"github.com/tether-dev/tether/config"
	"github.com/tether-dev/tether/sandbox"
)

// errNoElicitation is the route error when the MCP client cannot ask its
// user and the server has no approval queue: the call is then pending,
// and nothing ran.
var errNoElicitation = errors.New("the MCP client does not support elicitation and no approval queue is served, so nobody can be asked")

// MCPOptions configures the MCP server of `tether mcp`.
type MCPOptions struct {
	Config    *config.Config
	ConfigErr error
	Profile   string // "" for the default profile
	Job       string // mandate job of the calls, if any
	// Platform is where the calls come from; "" is approval.PlatformCLI
	// (the user's own MCP client). An unattended platform (cron, …)
	// follows the profile's cron_mode / unattended_mode and the job's
	// mandate as an unattended run, and asks nobody.
	Platform approval.Platform
	Cwd      string // the caller's cwd, used when the profile sets none
	Sandbox  sandbox.Runner
	Guard    GuardConfig
	Version  string
	Logger   *slog.Logger
	// ApprovalDir, if set, is where the server publishes its approval
	// queue for clients that cannot elicit: a 0600 unix socket serving
	// the daemon's approvals API and a 0600 file naming it, its client
	// token and session (see MCPQueue), both removed when Run ends.
	ApprovalDir string
}

// MCPQueue is what a running `tether mcp` publishes about its approval
// queue in MCPOptions.ApprovalDir, as <pid>.json: `tether approvals
// --mcp` reads it to answer the server's pending requests.
type MCPQueue struct {
	PID         int    `json:"pid"`
	Socket      string `json:"socket"`
	ClientToken string `json:"client_token"`
	Session     string `json:"session"`
	Profile     string `json:"profile"`
	Cwd         string `json:"cwd,omitempty"`
}

// MCP is an MCP server exposing the profile's visible tools through the
// gates. Calls come from the user's own MCP client, so they are on the
// cli platform: a command needing approval is asked through MCP
// elicitation when the client supports it, and is otherwise returned as
// pending with nothing run. Create it with NewMCP; Run closes it.
type MCP struct {
	Server   *mcp.Server
	runner   *Runner
	engine   *approval.Engine
	pipeline *Pipeline
	opts     MCPOptions
	session  string
	profile  string // the resolved profile's name
	route    *elicitRoute

	mu       sync.Mutex
	turn     *Turn            // the idle-window turn; guarded by mu
	lastCall time.Time        // guarded by mu
	named    map[string]*Turn // turns the client named (MetaTurn); guarded by mu
	order    []string         // named turns, oldest first; guarded by mu
}

// turnIdle is how long without calls starts a new guardrail turn when the
// client names none (MCP has no notion of turns).
const turnIdle = 2 * time.Minute

// MetaTurn is the tools/call "_meta" key by which a client names the
// guardrail turn a call belongs to (a string, at most 128 bytes): calls
// with the same value share their counts, a new value starts afresh.
// Without it, a turn is a window of calls less than turnIdle apart.
const MetaTurn = "tether.dev/turn"

type mcpCallKey struct{}

// mcpCall is the per-invocation state of one MCP tool call: the answer
// the client sent back (multi round-trip elicitation) and the question
// asked, if any.
type mcpCall struct {
	session *mcp.ServerSession
	answer  *mcp.ElicitResult
	state   string
	asked   *approval.Question
}

// errNeedsInput makes the engine record the call as waiting: the handler
// then returns the question as an MCP input request and the client calls
// again with the user's answer.
var errNeedsInput = errors.New("waiting for the user's answer through MCP elicitation")

// elicitRoute asks the MCP client's user through elicitation. MCP asks
// through multi round-trip input requests (SEP-2322): the first
// invocation of a tool call returns the question, the client asks its
// user and calls again with the answer, and the whole pipeline decides
// again from the start (so the hardline floor, deny rules and mandate are
// re-checked). The answer is bound to the question by an HMAC in the
// request state, so it applies to that command only.
//
// A client that cannot elicit has its question queued in the engine's
// gateway (queue, when the server publishes it), where a person answers
// through `tether approvals --mcp` while the call waits up to the
// approval timeout.
type elicitRoute struct {
	key   []byte
	queue *approval.Gateway // nil: nobody can answer out of band
}

func (*elicitRoute) Name() string { return "mcp-elicitation" }

func (r *elicitRoute) mac(q approval.Question) string {
	h := hmac.New(sha256.New, r.key)
	// The tool keeps an answer about a file access from answering a
	// terminal command of the same text, and the reverse.
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s", q.Profile, q.Cwd, q.Tool, q.Command)
	return hex.EncodeToString(h.Sum(nil))
}

func supportsElicitation(ss *mcp.ServerSession) bool {
	if ss == nil {
		return false
	}
	ip := ss.InitializeParams()
	return ip != nil && ip.Capabilities != nil && ip.Capabilities.Elicitation != nil
}

func (r *elicitRoute) Ask(ctx context.Context, q approval.Question) (approval.Answer, error) {
	st, _ := ctx.Value(mcpCallKey{}).(*mcpCall)
	if st == nil || !supportsElicitation(st.session) {
		if r.queue == nil {
			return approval.Answer{}, errNoElicitation
		}
		return r.queue.Ask(ctx, q)
	}
	if st.answer != nil && hmac.Equal([]byte(st.state), []byte(r.mac(q))) {
		res := st.answer
		st.answer = nil
		switch res.Action {
		case "accept":
			d, _ := res.Content["decision"].(string)
			switch d {
			case "once", "session", "always":
				return approval.Answer{Verdict: approval.VerdictApprove, Scope: approval.Scope(d), By: "mcp:user"}, nil
			}
			return approval.Answer{Verdict: approval.VerdictDeny, By: "mcp:user", Reason: "denied by the user"}, nil
		case "decline":
			return approval.Answer{Verdict: approval.VerdictDeny, By: "mcp:user", Reason: "declined by the user"}, nil
		}
		return approval.Answer{Verdict: approval.VerdictDeny, By: "mcp:user", Reason: "the user dismissed the question"}, nil
	}
	qq := q
	st.asked = &qq
	return approval.Answer{}, errNeedsInput
}

// elicitParams is the question shown to the user.
func elicitParams(q approval.Question) *mcp.ElicitParams {
	choices := []any{"deny"}
	for _, s := range q.Scopes {
		choices = append(choices, string(s))
	}
	var why []string
	for _, f := range q.Findings {
		why = append(why, f.Description)
	}
	if q.Reason != "" {
		why = append(why, q.Reason)
	}
	var b strings.Builder
	verb := "run"
	if q.Tool != "" {
		verb = "use a file tool (not a shell command)"
	}
	fmt.Fprintf(&b, "tether: the agent wants to %s\n\n    %s\n\nin %s. Flagged: %s.\n", verb, q.Command, q.Cwd, strings.Join(why, "; "))
	// Say exactly what each answer lets run, so "session" is not read as
	// "everything flagged for the same reasons".
	var offered []string
	for _, s := range q.Scopes {
		offered = append(offered, string(s))
		if c := q.Covers[s]; c != "" {
			fmt.Fprintf(&b, "\n%s: %s", s, c)
		}
	}
	fmt.Fprintf(&b, "\n\nApprove (%s) or deny?", strings.Join(offered, ", "))
	msg := b.String()
	return &mcp.ElicitParams{Message: msg, RequestedSchema: map[string]any{
		"type": "object",
		"properties": map[string]any{
			"decision": map[string]any{"type": "string", "enum": choices, "description": strings.Join(offered, ", ") + " or deny"},
		},
		"required": []any{"decision"},
	}}
}

// NewMCP builds the server. The caller must call Run or Close.
func NewMCP(opts MCPOptions) (*MCP, error) {
	if opts.Config == nil {
		return nil, fmt.Errorf("starting the MCP server: no configuration (%v)", opts.ConfigErr)
	}
	prof, ok := opts.Config.Profile(opts.Profile)
	if !ok {
		return nil, fmt.Errorf("starting the MCP server: unknown profile %q", opts.Profile)
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("making the MCP state key: %w", err)
	}
	route := &elicitRoute{key: key}
	p, err := NewPipeline(PipelineOptions{Config: opts.Config, ConfigErr: opts.ConfigErr, Sandbox: opts.Sandbox,
		Prompter: route, Guard: opts.Guard, Logger: log})
	if err != nil {
		return nil, err
	}
	m := &MCP{opts: opts, pipeline: p, runner: p.Runner, engine: p.Engine, route: route,
		session: fmt.Sprintf("mcp-%d-%s", os.Getpid(), randomID("", 3)), profile: prof.Name}
	if opts.ApprovalDir != "" {
		route.queue = p.Engine.Gateway()
	}
	m.Server = mcp.NewServer(&mcp.Implementation{Name: "tether", Version: opts.Version}, &mcp.ServerOptions{Instructions: mcpInstructions})
	var names []string
	for _, t := range m.runner.Tools().Visible(prof) {
		m.Server.AddTool(&mcp.Tool{Name: t.Name, Description: t.Description, InputSchema: publicSchema(t.Schema),
			OutputSchema: outputSchema(), Annotations: annotations(t, prof)}, m.handler(t.Name))
		names = append(names, t.Name)
	}
	m.Server.AddReceivingMiddleware(negotiateMiddleware, unknownToolMiddleware(names, m.handler))
	return m, nil
}

// platform is the platform of the server's calls.
func (m *MCP) platform() approval.Platform {
	if m.opts.Platform == "" {
		return approval.PlatformCLI
	}
	return m.opts.Platform
}

// currentTurn returns the guardrail turn of a call whose MetaTurn is id
// ("" when the client named none).
func (m *MCP) currentTurn(id string) *Turn {
	m.mu.Lock()
	defer m.mu.Unlock()
	if id != "" {
		if t := m.named[id]; t != nil {
			return t
		}
		if m.named == nil {
			m.named = map[string]*Turn{}
		}
		t := NewTurn(m.runner.guard(m.opts.Profile), false)
		m.named[id] = t
		m.order = append(m.order, id)
		if len(m.order) > maxTurns {
			delete(m.named, m.order[0])
			m.order = m.order[1:]
		}
		return t
	}
	if m.turn == nil || time.Since(m.lastCall) > turnIdle {
		m.turn = NewTurn(m.runner.guard(m.opts.Profile), false)
	}
	m.lastCall = time.Now()
	return m.turn
}

func (m *MCP) handler(name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		st := &mcpCall{session: req.Session, state: req.Params.RequestState}
		for _, v := range req.Params.InputResponses {
			if er, ok := v.(*mcp.ElicitResult); ok {
				st.answer = er
			}
		}
		ctx = context.WithValue(ctx, mcpCallKey{}, st)
		args := req.Params.Arguments
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		out := m.runner.Execute(ctx, Batch{Profile: m.opts.Profile, Session: m.session, Platform: m.platform(),
			Job: m.opts.Job, Cwd: m.opts.Cwd, Calls: []RawCall{{ID: "mcp", Name: name, Arguments: args}}}, m.currentTurn(metaTurn(req.Params.Meta)))
		if len(out.Results) == 0 {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: out.EndReason}}}, nil
		}
		r := out.Results[0]
		if st.asked != nil && r.Class == ClassPending {
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"approval": elicitParams(*st.asked)},
				RequestState: m.route.mac(*st.asked)}, nil
		}
		text := r.Message
		if s, ok := r.Output["stdout"].(string); ok && s != "" {
			text += "\nstdout:\n" + s
		}
		if s, ok := r.Output["stderr"].(string); ok && s != "" {
			text += "\nstderr:\n" + s
		}
		if s, ok := r.Output["content"].(string); ok {
			text = s
		}
		if r.Warning != "" {
			text += "\nwarning: " + r.Warning
		}
		return &mcp.CallToolResult{IsError: r.Class != ClassSucceeded, Content: []mcp.Content{&mcp.TextContent{Text: text}},
			StructuredContent: r}, nil
	}
}

// Run serves one MCP connection on t until the client disconnects or ctx
// ends, then closes the server's sandboxes and state.
func (m *MCP) Run(ctx context.Context, t mcp.Transport) error {
	// Like a daemon, a server reaps what a crashed predecessor left.
	m.runner.init()
	reapLeftovers(m.opts.Sandbox, m.runner.log)
	stop := func() {}
	if m.opts.ApprovalDir != "" {
		s, err := m.publishQueue(ctx)
		if err != nil {
			return errors.Join(err, m.Close())
		}
		stop = s
	}
	err := m.Server.Run(ctx, t)
	stop() // before Close: the queue's API uses the engine and the store
	if cerr := m.Close(); err == nil {
		err = cerr
	}
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}

// Close clears the server's session (closing its sandbox) and closes the
// state.
func (m *MCP) Close() error {
	m.engine.ClearSession(m.opts.Profile, m.session)
	return m.pipeline.Close()
}

// metaTurn returns the turn a call's _meta names (MetaTurn), or "" when it
// names none or something that is not a short string.
func metaTurn(meta mcp.Meta) string {
	if s, ok := meta[MetaTurn].(string); ok && len(s) <= 128 {
		return s
	}
	return ""
}
