package mandate

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// bigMandate has 500 rules spread over the families.
func bigMandate() *Mandate {
	m := &Mandate{Job: "big", MaxWritesPerRun: 100}
	for i := 0; i < 20; i++ {
		m.Tools = append(m.Tools, Rule{Value: fmt.Sprintf("tool%d", i), Seen: 1})
	}
	m.Tools = append(m.Tools, Rule{Value: ToolTerminal, Seen: 1})
	for i := 0; i < 150; i++ {
		m.Paths = append(m.Paths, Rule{Value: fmt.Sprintf("dir%d/**", i), Seen: 1}, Rule{Value: fmt.Sprintf("file%d.txt", i), Seen: 1})
	}
	for i := 0; i < 120; i++ {
		m.Commands = append(m.Commands, Rule{Value: fmt.Sprintf("prog%d sub%d -a -b --long%d", i%40, i, i), Seen: 1})
	}
	m.Commands = append(m.Commands, Rule{Value: "env GOFLAGS: go test -race -run -v", Seen: 1}, Rule{Value: "git status", Seen: 1})
	for i := 0; i < 56; i++ {
		m.Hosts = append(m.Hosts, Rule{Value: fmt.Sprintf("h%d.example.com", i), Seen: 1})
	}
	m.Hosts = append(m.Hosts, Rule{Value: "*.github.com", Seen: 1})
	return m
}

// BenchmarkMatch matches one call (three commands, a path, a host) against a
// 500-rule mandate. Target: ≤ 20 µs per call.
func BenchmarkMatch(b *testing.B) {
	m := bigMandate()
	n := len(m.Tools) + len(m.Paths) + len(m.Commands) + len(m.Hosts)
	require.Equal(b, 500, n)
	m2, err := Load(m.Marshal())
	require.NoError(b, err)
	x := NewMatcher(m2)
	f, err := extract(Call{Tool: ToolTerminal, Command: "GOFLAGS=-mod=mod go test -race ./... && git status && curl https://api.github.com/x > dir77/out.txt"}, defaultParse)
	require.NoError(b, err)
	f.Hosts = append(f.Hosts, "api.github.com")
	require.Len(b, x.Evaluate(f, 0), 1, "only curl is outside: %+v", x.Evaluate(f, 0))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		x.Evaluate(f, 0)
	}
}

// BenchmarkCheck is the whole enforce-mode check of one call, including the
// parse and the transaction that records it.
func BenchmarkCheck(b *testing.B) {
	s, err := Open(b.TempDir(), Options{})
	require.NoError(b, err)
	defer s.Close()
	ctx := b.Context()
	run := Run{Job: "j", ID: "r", Mode: RunCron}
	require.NoError(b, s.Observe(ctx, run, term("git status")))
	_, err = s.Compile(ctx, "j")
	require.NoError(b, err)
	_, err = s.Approve(ctx, "j", 0, "b")
	require.NoError(b, err)
	b.ResetTimer()
	for b.Loop() {
		if d := s.Check(ctx, run, term("git status")); d.Verdict != Allow {
			b.Fatal(d.Reason)
		}
	}
}

// BenchmarkMatchExtract is BenchmarkMatch plus reading the call: the
// parse, the command grammar (risky options, assignments) and the paths
// outside the workspace, as every enforced call pays.
func BenchmarkMatchExtract(b *testing.B) {
	m2, err := Load(bigMandate().Marshal())
	require.NoError(b, err)
	x := NewMatcher(m2)
	c := Call{Tool: ToolTerminal, Workspace: "/work/repo",
		Command: "GOFLAGS=-mod=mod go test -race ./... && git status && curl https://api.github.com/x > dir77/out.txt"}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		f, err := extract(c, defaultParse)
		if err != nil {
			b.Fatal(err)
		}
		x.Evaluate(f, 0)
	}
}
