package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/tether-dev/tether/config"
)

// Kind says what a tool can do to the world; it drives batch planning and
// result classification.
type Kind int

// Kinds. The zero value is KindEffect: a tool nobody described (a plugin,
// an MCP tool) is assumed to have side effects.
const (
	KindEffect      Kind = iota // may change anything: a barrier, effect-capable
	KindRead                    // reads the paths it names, nothing else
	KindWrite                   // writes the paths it names, nothing else
	KindTerminal                // runs a command: a barrier, effect-capable
	KindInteractive             // needs a person or a terminal: a barrier
)

// String returns the kind's name.
func (k Kind) String() string {
	switch k {
	case KindRead:
		return "read"
	case KindWrite:
		return "write"
	case KindTerminal:
		return "terminal"
	case KindInteractive:
		return "interactive"
	}
	return "effect"
}

// Handler executes one validated call and returns its Result: the class
// (refused, pending_approval, blocked, failed, succeeded), whether it ran,
// the message for the model and the output object. Classify then fills in
// the effect. Env says where the call comes from and holds its workspace.
type Handler func(ctx context.Context, env *Env, call *Call) Result

// Tool is one registry entry.
type Tool struct {
	Name        string
	Toolset     string
	Description string
	// Schema is the JSON schema of the arguments (an object schema). A
	// property with "x-coerce-number": true accepts a string holding a
	// number and turns it into a number; nothing else is coerced.
	Schema map[string]any
	// Kind says what the tool can do; Paths names the paths a call
	// touches (for reservations); nil means none known.
	Kind  Kind
	Paths func(args map[string]any) []string
	// Handler executes a validated call.
	Handler Handler
	// Decided reports whether the handler has every call decided, and so
	// audited, by the approval engine (terminal). The runner audits the
	// calls of every other tool itself: a record before the handler runs
	// (none stored: the call does not run) and one of its result.
	Decided bool
	// Check reports whether the tool is usable now; nil means always. A
	// check that fails or panics makes the tool unavailable.
	Check func() error
}

// Registry holds the known tools. It is safe for concurrent use.
type Registry struct {
	mu    sync.RWMutex
	tools map[string]*Tool // guarded by mu
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{tools: map[string]*Tool{}} }

// ErrDuplicateTool is returned by Register for a name already taken.
var ErrDuplicateTool = errors.New("tool already registered")

// Register adds t. Names are unique.
func (r *Registry) Register(t Tool) error {
	if t.Name == "" || t.Handler == nil || t.Schema == nil {
		return fmt.Errorf("registering tool %q: name, schema and handler are required", t.Name)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.tools[t.Name]; ok {
		return fmt.Errorf("registering tool %q: %w", t.Name, ErrDuplicateTool)
	}
	r.tools[t.Name] = &t
	return nil
}

// Lookup returns the tool named name.
func (r *Registry) Lookup(name string) (*Tool, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	t, ok := r.tools[name]
	return t, ok
}

// available runs t's check; a panic counts as unavailable.
func available(t *Tool) (ok bool) {
	if t.Check == nil {
		return true
	}
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return t.Check() == nil
}

// DefaultToolsets are enabled when a profile names none.
var DefaultToolsets = []string{"terminal", "files"}

// Visible returns the tools a profile exposes, sorted by name: those whose
// toolset is enabled (the profile's enabled_toolsets, DefaultToolsets when
// empty) and not disabled (disabled_toolsets is subtracted last) and whose
// availability check passes.
func (r *Registry) Visible(p *config.Profile) []*Tool {
	enabled := DefaultToolsets
	var disabled []string
	if p != nil {
		if len(p.EnabledToolsets) > 0 {
			enabled = p.EnabledToolsets
		}
		disabled = p.DisabledToolsets
	}
	r.mu.RLock()
	all := make([]*Tool, 0, len(r.tools))
	for _, t := range r.tools {
		all = append(all, t)
	}
	r.mu.RUnlock()
	var out []*Tool
	for _, t := range all {
		if !slices.Contains(enabled, t.Toolset) && !slices.Contains(enabled, "all") {
			continue
		}
		if slices.Contains(disabled, t.Toolset) || slices.Contains(disabled, t.Name) {
			continue
		}
		if !available(t) {
			continue
		}
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Names returns the names of tools.
func Names(tools []*Tool) []string {
	out := make([]string, len(tools))
	for i, t := range tools {
		out[i] = t.Name
	}
	return out
}

// FunctionSchema is one tool in the OpenAI chat-completions "tools" format.
type FunctionSchema struct {
	Type     string   `json:"type"` // "function"
	Function Function `json:"function"`
}

// Function is the function part of a FunctionSchema.
type Function struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Parameters  map[string]any `json:"parameters"`
}

// Schemas returns the OpenAI-format schemas of the tools a profile exposes.
func (r *Registry) Schemas(p *config.Profile) []FunctionSchema {
	var out []FunctionSchema
	for _, t := range r.Visible(p) {
		out = append(out, FunctionSchema{Type: "function", Function: Function{
			Name: t.Name, Description: t.Description, Parameters: publicSchema(t.Schema)}})
	}
	if out == nil {
		out = []FunctionSchema{}
	}
	return out
}

// publicSchema drops tether's own "x-" annotations from a schema.
func publicSchema(s map[string]any) map[string]any {
	out := make(map[string]any, len(s))
	for k, v := range s {
		if len(k) > 2 && k[:2] == "x-" {
			continue
		}
		if m, ok := v.(map[string]any); ok {
			v = publicSchema(m)
		}
		out[k] = v
	}
	return out
}
