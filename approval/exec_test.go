package approval

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"

	"github.com/tether-dev/tether/config"
)

// execWords parses text as the analyser does and returns the words of its
// one simple command, or ok false when it is anything else.
func execWords(text string) (words []string, ok bool) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(text), "")
	if err != nil || len(f.Stmts) != 1 {
		return nil, false
	}
	st := f.Stmts[0]
	call, isCall := st.Cmd.(*syntax.CallExpr)
	if !isCall || len(call.Assigns) > 0 || len(st.Redirs) > 0 || st.Negated || st.Background {
		return nil, false
	}
	for _, w := range call.Args {
		lit, err := expand.Literal(nil, w)
		if err != nil {
			return nil, false
		}
		words = append(words, lit)
	}
	return words, true
}

var execTextSeeds = [][]string{
	{"reboot"},
	{"rm", "-rf", "/"},
	{"sh", "-c", "echo hi; reboot"},
	{"if", "x"},
	{"!", "rm", "-rf", "/"},
	{"X=1", "reboot"},
	{"a b", "'q'", `"d"`, "$(x)", "`y`", "*", "~", "#c", "\\", "\n", ""},
	{"{", "}", "[[", "]]", "function", "case", "time", "coproc"},
	{"rm", "-rf", "/", "\xad", "a\x01b", "\u00a0"},
}

// ExecText's text parses back to exactly the argv, with argv[0] as the
// program: no word becomes syntax, an assignment or a reserved word.
func TestExecTextRoundTrip(t *testing.T) {
	for _, argv := range execTextSeeds {
		words, ok := execWords(ExecText(argv))
		require.True(t, ok, "%q -> %s", argv, ExecText(argv))
		assert.Equal(t, argv, words)
	}
}

func FuzzExecText(f *testing.F) {
	for _, argv := range execTextSeeds {
		f.Add(strings.Join(argv, "\x00"))
	}
	f.Fuzz(func(t *testing.T, joined string) {
		argv := strings.Split(joined, "\x00")
		words, ok := execWords(ExecText(argv))
		if !ok {
			t.Fatalf("%q -> %q does not parse to one command", argv, ExecText(argv))
		}
		if len(words) != len(argv) {
			t.Fatalf("%q -> %q -> %q", argv, ExecText(argv), words)
		}
		for i := range argv {
			if words[i] != argv[i] {
				t.Fatalf("%q -> %q -> %q", argv, ExecText(argv), words)
			}
		}
	})
}

// CheckExec refuses an argv the hardline floor or a deny glob refuses, by
// any of the vectors the exec may run as, and lets the rest through.
func TestCheckExec(t *testing.T) {
	cfg, err := config.Parse("t.yaml", []byte("state_dir: "+t.TempDir()+"\nprofiles:\n  default:\n    approvals:\n      deny: [\"curl *\"]\n"), t.TempDir())
	require.NoError(t, err)
	eng, err := NewEngine(cfg, Options{})
	require.NoError(t, err)
	defer eng.Close()
	cases := []struct {
		argvs [][]string
		rule  string // "" allowed
	}{
		{[][]string{{"ls", "-l"}}, ""},
		{[][]string{{"make", "test"}}, ""},
		{[][]string{{"rm", "-rf", "build"}}, ""}, // approval tier: not the gate's
		{[][]string{{"reboot"}}, "hardline.power"},
		{[][]string{{"/usr/sbin/reboot", "-f"}}, "hardline.power"},
		{[][]string{{"ls"}, {"reboot"}}, "hardline.power"}, // the file's own name
		{[][]string{{"env", "X=1", "reboot"}}, "hardline.power"},
		{[][]string{{"sh", "-c", "echo ok; rm -rf --no-preserve-root /"}}, "hardline.rm-root"},
		{[][]string{{"dd", "if=/dev/zero", "of=/dev/sda"}}, "hardline.disk-write"},
		// Bytes the parser cannot read bare must not hide the argv.
		{[][]string{{"rm", "-rf", "/", "\xad"}}, "hardline.rm-root"},
		{[][]string{{"curl", "https://example.com"}}, "deny"},
		{[][]string{{"/usr/bin/curl", "-s", "x"}}, "deny"},
		// An argv is analysed whole up to the kernel's own ARG_MAX (E4):
		// a long linker line runs, a refused program inside one does not.
		{[][]string{longArgv("cc", "-o", "prog")}, ""},
		{[][]string{longArgv("sh", "-c", "reboot")}, "hardline.power"},
		{[][]string{append(longArgv("rm", "-rf"), "/")}, "hardline.rm-root"},
		{[][]string{{"echo", strings.Repeat("a'", 4<<20)}}, "too large"}, // 2 MiB of quotes: 8 MiB quoted
	}
	for _, c := range cases {
		err := eng.CheckExec(ExecRequest{Argvs: c.argvs, Home: "/root"})
		if c.rule == "" {
			assert.NoError(t, err, "%.80q", c.argvs)
			continue
		}
		var r *ExecRefusal
		require.ErrorAs(t, err, &r, "%.80q", c.argvs)
		assert.ErrorIs(t, err, ErrDenied)
		switch c.rule {
		case "deny":
			assert.Contains(t, r.Reason, "profile default")
		case "too large":
			assert.Contains(t, r.Reason, "could not analyse")
		default:
			assert.Equal(t, c.rule, r.Rule(), "%.80q", c.argvs)
		}
	}
}

// longArgv is prefix followed by 20,000 object files: about 740 KiB, over
// a terminal call's 128 KiB, under ARG_MAX.
func longArgv(prefix ...string) []string {
	argv := append([]string(nil), prefix...)
	for i := range 20000 {
		argv = append(argv, fmt.Sprintf("build/obj/module_%05d/object.o", i))
	}
	return argv
}

// BenchmarkCheckExec is the exec gate's check alone for a typical exec
// (the argv and the file's own name): what each exec of a build costs in
// analysis.
func BenchmarkCheckExec(b *testing.B) {
	cfg, err := config.Parse("t.yaml", []byte("state_dir: "+b.TempDir()+"\nprofiles:\n  default: {}\n"), b.TempDir())
	require.NoError(b, err)
	eng, err := NewEngine(cfg, Options{})
	require.NoError(b, err)
	defer eng.Close()
	req := ExecRequest{Argvs: [][]string{{"/usr/bin/cc", "-c", "-O2", "-o", "main.o", "main.c"}, {"cc", "-c", "-O2", "-o", "main.o", "main.c"}}, Home: "/root"}
	for b.Loop() {
		if err := eng.CheckExec(req); err != nil {
			b.Fatal(err)
		}
	}
}
