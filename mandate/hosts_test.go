package mandate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestExtractObservedHosts(t *testing.T) {
	tests := []struct {
		name string
		call Call
		want []string
	}{
		{name: "argument guessing without observed hosts",
			call: term("curl -s https://api.github.com/x"), want: []string{"api.github.com"}},
		{name: "observed hosts replace argument guesses",
			call: Call{Tool: ToolTerminal, Command: "curl -s https://api.github.com/x", Hosts: []string{"Objects.GitHubusercontent.com."}},
			want: []string{"objects.githubusercontent.com"}},
		{name: "observed hosts alone, normalised and deduplicated",
			call: Call{Tool: ToolTerminal, Hosts: []string{"[::1]", "B.example", "b.example", "a.example"}},
			want: []string{"::1", "a.example", "b.example"}},
		{name: "behind the proxy nothing is guessed from arguments",
			call: Call{Tool: ToolTerminal, Command: "curl -s https://api.github.com/x", HostsAtRunTime: true},
			want: nil},
		{name: "behind the proxy, observed hosts still count",
			call: Call{Tool: ToolTerminal, Command: "curl -s https://api.github.com/x", HostsAtRunTime: true, Hosts: []string{"api.github.com"}},
			want: []string{"api.github.com"}},
		{name: "invalid observed hosts fall back to guessing",
			call: Call{Tool: ToolTerminal, Command: "ssh git@github.com", Hosts: []string{"bad host", "=$URL", ""}},
			want: []string{"github.com"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := extract(tt.call, defaultParse)
			require.NoError(t, err)
			assert.Equal(t, tt.want, f.Hosts)
		})
	}
}

func TestCallTextShowsHosts(t *testing.T) {
	assert.Equal(t, "terminal (contacted a.example, b.example)",
		callText(Call{Tool: ToolTerminal, Hosts: []string{"b.example", "A.example", "not valid"}}))
	assert.Equal(t, "git fetch", callText(term("git fetch")))
}

// TestObservedHostsCompileWithEvidence: hosts recorded at run time become
// the mandate's hosts family, counted once per observed call.
func TestObservedHostsCompileWithEvidence(t *testing.T) {
	ctx := t.Context()
	s := newStore(t)
	run := Run{Job: "net", ID: "r1", Mode: RunCron}
	for _, c := range []Call{
		{Tool: ToolTerminal, Hosts: []string{"proxy.golang.org"}},
		{Tool: ToolTerminal, Hosts: []string{"proxy.golang.org"}},
		{Tool: ToolTerminal, Hosts: []string{"sum.golang.org", "proxy.golang.org"}},
	} {
		require.NoError(t, s.Observe(ctx, run, c))
	}
	v, err := s.Compile(ctx, "net")
	require.NoError(t, err)
	assert.Contains(t, v.Text, "hosts:\n  - proxy.golang.org  # seen 3x\n  - sum.golang.org  # seen 1x\n")
}

// TestEnforcedMandateRecordsHostDrift: a host outside the enforced mandate
// blocks and becomes a drift record of family hosts naming the host.
func TestEnforcedMandateRecordsHostDrift(t *testing.T) {
	s, ctx := enforced(t) // hosts: api.github.com
	d := s.Check(ctx, cron, Call{Tool: ToolTerminal, Hosts: []string{"api.github.com"}})
	assert.Equal(t, Allow, d.Verdict, d.Reason)

	d = s.Check(ctx, cron, Call{Tool: ToolTerminal, Hosts: []string{"evil.example"}})
	require.Equal(t, Block, d.Verdict)
	assert.Equal(t, []Failure{{Family: FamilyHosts, Value: "evil.example"}}, d.Failures)
	drift, err := s.Drift(ctx, "j")
	require.NoError(t, err)
	require.Len(t, drift, 1)
	assert.Equal(t, d.DriftID, drift[0].ID)
	assert.Equal(t, []string{FamilyHosts}, drift[0].Families)
	assert.Equal(t, "terminal (contacted evil.example)", drift[0].Call)

	// Widening from the record allows the host.
	_, err = s.Widen(ctx, "j", d.DriftID, false)
	require.NoError(t, err)
	v, err := s.Approve(ctx, "j", 0, "alice")
	require.NoError(t, err)
	assert.Contains(t, v.Text, "  - evil.example")
	d = s.Check(ctx, cron, Call{Tool: ToolTerminal, Hosts: []string{"evil.example"}})
	assert.Equal(t, Allow, d.Verdict, d.Reason)
}
