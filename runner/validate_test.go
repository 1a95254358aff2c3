package runner

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tether-dev/tether/config"
)

func visibleBuiltins(t *testing.T) []*Tool {
	t.Helper()
	return Builtins().Visible(nil)
}

func TestValidate(t *testing.T) {
	t.Parallel()
	vis := visibleBuiltins(t)
	tests := []struct {
		name     string
		tool     string
		args     string
		wantRule string         // "" means valid
		wantArgs map[string]any // checked when valid
	}{
		{"openai string args", "read_file", `"{\"path\":\"a.txt\"}"`, "", map[string]any{"path": "a.txt"}},
		{"object args", "read_file", `{"path":"a.txt"}`, "", map[string]any{"path": "a.txt"}},
		{"unknown tool", "rm_rf", `{}`, "validation.unknown-tool", nil},
		{"truncated string args", "terminal", `"{\"command\":\"rm -rf /tmp/x && echo"`, "validation.arguments", nil},
		{"truncated object", "terminal", `{"command":"ls`, "validation.arguments", nil},
		{"array is not an object", "terminal", `["ls"]`, "validation.arguments", nil},
		{"string payload not an object", "terminal", `"ls -la"`, "validation.arguments", nil},
		{"null", "terminal", `null`, "validation.arguments", nil},
		{"trailing data", "terminal", `{"command":"ls"} {"command":"rm"}`, "validation.arguments", nil},
		{"trailing brace", "terminal", `{"command":"ls"}}`, "validation.arguments", nil},
		{"trailing garbage in string args", "terminal", `"{\"command\":\"ls\"}]"`, "validation.arguments", nil},
		{"trailing whitespace is fine", "terminal", "{\"command\":\"ls\"}\n ", "", map[string]any{"command": "ls"}},
		{"empty arguments", "terminal", ``, "validation.arguments", nil},
		{"empty string means no args: missing required", "terminal", `""`, "validation.schema", nil},
		{"missing required", "write_file", `{"path":"a"}`, "validation.schema", nil},
		{"unknown property", "read_file", `{"path":"a","mode":"x"}`, "validation.schema", nil},
		{"wrong type", "terminal", `{"command":42}`, "validation.schema", nil},
		{"coerced number where marked", "terminal", `{"command":"ls","timeout":"30"}`, "", map[string]any{"command": "ls", "timeout": 30}},
		{"number kept", "terminal", `{"command":"ls","timeout":30}`, "", map[string]any{"command": "ls", "timeout": 30}},
		{"non-numeric string refused", "terminal", `{"command":"ls","timeout":"soon"}`, "validation.schema", nil},
		{"fraction for integer", "terminal", `{"command":"ls","timeout":1.5}`, "validation.schema", nil},
		{"below minimum", "terminal", `{"command":"ls","timeout":0}`, "validation.schema", nil},
		{"string for boolean is not coerced", "terminal", `{"command":"ls","background":"true"}`, "validation.schema", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, bad := Validate(vis, RawCall{ID: "c1", Name: tc.tool, Arguments: json.RawMessage(tc.args)})
			if tc.wantRule == "" {
				require.Nil(t, bad, "unexpected refusal: %+v", bad)
				assert.Equal(t, tc.wantArgs, c.Args)
				return
			}
			require.NotNil(t, bad)
			assert.Nil(t, c)
			assert.Equal(t, tc.wantRule, bad.Rule)
			assert.Equal(t, ClassRefused, bad.Class)
			assert.False(t, bad.Ran)
			assert.Equal(t, "c1", bad.CallID)
		})
	}
}

func TestValidateStringNotCoercedWithoutMark(t *testing.T) {
	t.Parallel()
	reg := NewRegistry()
	require.NoError(t, reg.Register(Tool{Name: "n", Toolset: "x", Handler: func(_ contextT, _ *Env, _ *Call) Result { return Result{} },
		Schema: map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer"}}}}))
	vis := reg.Visible(&config.Profile{EnabledToolsets: []string{"x"}})
	_, bad := Validate(vis, RawCall{Name: "n", Arguments: json.RawMessage(`{"n":"3"}`)})
	require.NotNil(t, bad)
	assert.Contains(t, bad.Message, "must be a number, not a string")
	c, bad := Validate(vis, RawCall{Name: "n", Arguments: json.RawMessage(`{"n":3}`)})
	require.Nil(t, bad)
	assert.Equal(t, 3, c.Args["n"])
}

func TestUnknownToolListsAvailable(t *testing.T) {
	t.Parallel()
	_, bad := Validate(visibleBuiltins(t), RawCall{Name: "shell", Arguments: json.RawMessage(`{}`)})
	require.NotNil(t, bad)
	assert.Equal(t, `unknown tool "shell"; the available tools are: patch, process, read_file, search_files, terminal, write_file`, bad.Message)
}

func TestRegistryVisibility(t *testing.T) {
	t.Parallel()
	reg := Builtins()
	mk := func(name, set string, check func() error) Tool {
		return Tool{Name: name, Toolset: set, Check: check, Schema: map[string]any{"type": "object"},
			Handler: func(contextT, *Env, *Call) Result { return Result{} }}
	}
	require.NoError(t, reg.Register(mk("ok_plugin", "plugins", nil)))
	require.NoError(t, reg.Register(mk("failing", "plugins", func() error { return assert.AnError })))
	require.NoError(t, reg.Register(mk("panicking", "plugins", func() error { panic("boom") })))
	require.ErrorIs(t, reg.Register(mk("ok_plugin", "plugins", nil)), ErrDuplicateTool)

	tests := []struct {
		name              string
		enabled, disabled []string
		want              []string
	}{
		{"default toolsets", nil, nil, []string{"patch", "process", "read_file", "search_files", "terminal", "write_file"}},
		{"files only", []string{"files"}, nil, []string{"patch", "read_file", "search_files", "write_file"}},
		{"disabled subtracted last", []string{"files", "terminal"}, []string{"terminal"}, []string{"patch", "read_file", "search_files", "write_file"}},
		{"disabled wins over enabled", []string{"terminal"}, []string{"terminal"}, nil},
		{"failing and panicking checks hide tools", []string{"plugins"}, nil, []string{"ok_plugin"}},
		{"single tool disabled by name", []string{"files"}, []string{"write_file"}, []string{"patch", "read_file", "search_files"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := &config.Profile{EnabledToolsets: tc.enabled, DisabledToolsets: tc.disabled}
			assert.Equal(t, tc.want, nilIfEmpty(Names(reg.Visible(p))))
			schemas := reg.Schemas(p)
			assert.Len(t, schemas, len(tc.want))
			for _, s := range schemas {
				assert.Equal(t, "function", s.Type)
				assert.Equal(t, "object", s.Function.Parameters["type"])
			}
		})
	}
}

func TestSchemasDropPrivateAnnotations(t *testing.T) {
	t.Parallel()
	b, err := json.Marshal(Builtins().Schemas(nil))
	require.NoError(t, err)
	assert.NotContains(t, string(b), "x-coerce-number")
	assert.Contains(t, string(b), `"name":"terminal"`)
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}
