package mandate

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// globNames are observed names that read as patterns or shell text when
// written plain: each must compile to a rule for that one file.
var globNames = []string{
	"**", "secret/**", "/**", "~", "~/x", "$HOME/x", "${HOME}", "`id`", "=x", "==",
	"secret/*", "sub/[a-z]", "{secret,ok}/key", "?.txt", `a\b`, "read:secret/key",
	"rw:x", "a/**/b", "ok/file # seen 100x", "$X/a", "=secret/**",
}

// probes are paths a forged rule could reach.
var probes = []string{
	"secret/key", "ok/file", "a.txt", "x", "/etc/shadow", "/root/.ssh/id_rsa",
	"secret/**/y", "~/.ssh/id_rsa", "$HOME/.ssh/id_rsa", "sub/a", "?.txt/z",
}

// checkLiteral: the mandate compiled from one observed read of name
// allows reading exactly that name (as the text gate and the kernel see
// it) and nothing else.
func checkLiteral(t *testing.T, name string) {
	t.Helper()
	ws := "/w/proj"
	abs := filepath.Join(ws, name)
	if filepath.IsAbs(name) {
		abs = filepath.Clean(name)
	}
	f, lost := runtimeFacts(Runtime{Workspace: ws, Read: []string{abs}})
	if lost > 0 || len(f.Paths) == 0 {
		return // no rule can hold it, or it is the workspace: nothing allowed
	}
	text := Compile("lit", []Observation{{Run: "r", Facts: f}}).Marshal()
	m, err := Load(text)
	require.NoError(t, err, "%s", text)
	x := NewMatcher(m)
	rel := normName(abs, ws)
	assert.True(t, x.pathAllowed(nameValue(rel, true)), "the name itself:\n%s", text)
	for _, p := range probes {
		if filepath.Clean(p) == rel {
			continue
		}
		assert.False(t, x.pathAllowed(nameValue(p, true)), "name %q allows the file %q:\n%s", name, p, text)
		assert.False(t, x.pathAllowed(pathValue(p, true)), "name %q allows the text %q:\n%s", name, p, text)
	}
	var rules []string
	for _, r := range m.Paths {
		rules = append(rules, r.Value)
	}
	k := KernelPaths(rules, ws)
	assert.Empty(t, k.Trees, "%s", text)
	assert.Empty(t, k.ReadTrees, "%s", text)
	assert.Empty(t, k.Files, "%s", text)
	assert.Equal(t, []string{abs}, k.ReadFiles, "the kernel grants the one file:\n%s", text)
}

// TestObservedNamesAreLiteral: a name a sandboxed program opened (O2: a
// failed open of "**" compiled to "read:**") is one file in the mandate
// and in the Landlock ruleset, whatever its characters.
func TestObservedNamesAreLiteral(t *testing.T) {
	for _, n := range globNames {
		t.Run(n, func(t *testing.T) { checkLiteral(t, n) })
	}
	f, _ := runtimeFacts(Runtime{Workspace: "/w", Read: []string{"/w/**", "/w/s/**", "/w/$HOME/x", "/w/=a"}})
	assert.Equal(t, []string{"read:=$HOME/x", "read:=**", "read:==a", "read:=s/**"}, f.Paths)
}

// FuzzObservedNameLiteral is TestObservedNamesAreLiteral for any name.
func FuzzObservedNameLiteral(f *testing.F) {
	for _, n := range append(globNames, probes...) {
		f.Add(n)
	}
	f.Fuzz(checkLiteral)
}

// TestLiteralNamesCollapse: literal names count toward their directory's
// collapse (the only step that makes a tree) when a tree rule can name
// the directory, and fold into a tree that covers them.
func TestLiteralNamesCollapse(t *testing.T) {
	f, _ := runtimeFacts(Runtime{Workspace: "/w", Read: []string{"/w/d/**", "/w/d/a", "/w/d/b", "/w/$X/a", "/w/$X/b", "/w/$X/c"}})
	m := Compile("c", []Observation{{Run: "r", Facts: f}})
	var got []string
	for _, r := range m.Paths {
		got = append(got, r.Value)
	}
	assert.Equal(t, []string{"read:=$X/a", "read:=$X/b", "read:=$X/c", "read:d/**"}, got,
		"d collapses (three names, one literal); a directory named $X cannot be a tree")
	assert.False(t, covers(FamilyPaths, "$X/**", "=$X/a"), "the shell text $X/** is not the directory named $X")
	assert.True(t, covers(FamilyPaths, "d/**", "=d/**"))
	assert.False(t, covers(FamilyPaths, "=d/**", "d/a"))
}

// TestRefusedNameLiteral: a path the kernel refused widens to that one
// file, even when it is named "**".
func TestRefusedNameLiteral(t *testing.T) {
	assert.Equal(t, "read:=**", refusedValue(normName("/w/**", "/w"), "fs.read_file"))
	assert.Equal(t, "=out/**", refusedValue(normName("/w/out/**", "/w"), "fs.write_file"))
}

// TestTextFactsLiteral: a file tool's path and a literal redirection
// target are names; an unexpanded one is shell text, as before.
func TestTextFactsLiteral(t *testing.T) {
	f, err := extract(Call{Tool: "write_file", Paths: []string{"**"}, Wrote: true, Workspace: "/w"}, defaultParse)
	require.NoError(t, err)
	assert.Equal(t, []string{"=**"}, f.Paths)
	f, err = extract(Call{Tool: ToolTerminal, Command: `echo x > '**'; cat < "$HOME/x"`, Workspace: "/w"}, defaultParse)
	require.NoError(t, err)
	assert.Contains(t, f.Paths, "=**")
	assert.Contains(t, f.Paths, `read:"$HOME/x"`, "shell text stays text")
}

// TestRuntimeMissingAndLinked: names that led to no file (O1, O4) make no
// rule and never collapse a directory; a file read by one of several
// names (O3) makes no rule and keeps its directory from collapsing; one
// call adds at most maxRuntimePaths rules, the rest lost. Compile says
// each in a comment line.
func TestRuntimeMissingAndLinked(t *testing.T) {
	ctx := t.Context()
	s := newStore(t)
	run := Run{Job: "j", ID: "r1", Mode: RunCron}
	ws := "/w"
	c := term("python3 t.py")
	c.Workspace = ws
	require.NoError(t, s.Observe(ctx, run, c))
	var missing, many []string
	for i := range 12 {
		missing = append(missing, fmt.Sprintf("%s/ok/n%d", ws, i))
	}
	for i := range maxRuntimePaths + 10 {
		many = append(many, fmt.Sprintf("%s/big/f%04d", ws, i))
	}
	require.NoError(t, s.ObserveRuntime(ctx, run, Runtime{Command: "python3 t.py", Workspace: ws,
		Read:    []string{ws + "/ok/file", ws + "/lk/a", ws + "/lk/b", ws + "/lk/c", ws + "/secret/key"},
		Missing: missing, Linked: []string{ws + "/lk/x"}}))
	require.NoError(t, s.ObserveRuntime(ctx, run, Runtime{Command: "python3 t.py", Workspace: ws, Read: many}))
	v, err := s.Compile(ctx, "j")
	require.NoError(t, err)
	m, err := Load([]byte(v.Text))
	require.NoError(t, err)
	var paths []string
	for _, r := range m.Paths {
		paths = append(paths, r.Value)
	}
	assert.Contains(t, paths, "read:ok/file", "the one real file of ok/")
	assert.NotContains(t, paths, "read:ok/**", "missing names never collapse ok/")
	assert.NotContains(t, paths, "read:lk/**", "lk/ holds a hard link: no tree")
	assert.NotContains(t, paths, "read:lk/x")
	assert.Contains(t, paths, "read:lk/a")
	assert.Contains(t, paths, "read:big/**", "the kept names of the big call collapse")
	assert.Contains(t, v.Text, "# tried 12 missing names in \"ok\" (failed opens: not evidence, no rule)\n")
	assert.Contains(t, v.Text, "# no rule for \"lk/x\": the file has more than one name")
	assert.Equal(t, 10, v.LostObservations, "what one call adds past the bound is lost")
	d, err := s.Diff(ctx, "j")
	require.NoError(t, err)
	require.Len(t, d.Notes, 2, "the diff says what made no rule")
	assert.Contains(t, d.Notes[0], `no rule for "lk/x"`)
	var b strings.Builder
	require.NoError(t, d.Render(&b))
	assert.Contains(t, b.String(), "note: tried 12 missing names in \"ok\"")
}
