package shellparse

import (
	"bufio"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"mvdan.cc/sh/v3/syntax"
)

// simpleSamples are inputs at the edge of what parseSimple takes.
var simpleSamples = []string{
	"git status", "ls -la", "go test ./...", "  ls   -la  ", "git commit -m \"fix: handle empty input\"",
	"find . -name '*.go' -newer go.mod", "echo ''", `echo ""`, `a"b"'c'd`, `x --name='a b' "c d"e`,
	"python3 -m pytest -q tests/", "rm -rf /", "echo a=b", "npm run build", "echo %1 @x +y ,z :w",
	"cat README.md | head -20", "a|b|c d", "a b | c d | e", "git diff HEAD~1", "echo ~ a~b x=~",
	// refused: each must go to mvdan.cc/sh
	"x=1", "x=1 ls", "if true", "for", "time ls", "declare x", "let x", "echo $x", "echo `id`",
	`echo "$x"`, `echo "a\"b"`, "echo 'a", `echo "a`, "ls || wc", "ls |& wc", "ls |", "| ls", "a | | b", "a | x=1", "a | if", "ls; id", "ls &", "ls > f", "echo {a,b}",
	"echo #x", "echo a#b", "ls\tx", "ls\n", "ls\r", "echo [a]", "echo !x", `echo "!x"`, "echo a\\ b",
	"echo (x)", "echo é", "", " ", "coproc x", "function f", "echo a&&b", "f() { :; }",
}

// corpusCommands reads every command of the repository's corpora.
func corpusCommands(t *testing.T) []string {
	t.Helper()
	var out []string
	files := map[string]int{
		"../approval/testdata/corpus.tsv": 2, "../approval/testdata/benign.tsv": 0,
		"../approval/testdata/oracle-found.tsv": 1, "../approval/testdata/variables.tsv": 2,
		"testdata/divergence.tsv": 0,
	}
	for path, col := range files {
		f, err := os.Open(path)
		require.NoError(t, err)
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			fs := strings.Split(sc.Text(), "\t")
			if len(fs) > col && !strings.HasPrefix(fs[0], "#") {
				out = append(out, strings.NewReplacer(`\t`, "\t", `\n`, "\n", `\\`, `\`).Replace(fs[col]))
			}
		}
		require.NoError(t, sc.Err())
		f.Close()
	}
	entries, _ := os.ReadDir(filepath.Join("testdata", "fuzz", "FuzzParse"))
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("testdata", "fuzz", "FuzzParse", e.Name()))
		require.NoError(t, err)
		out = append(out, string(b)) // the file text: a mix of bytes worth trying
	}
	return out
}

// checkSimple fails t if parseSimple accepts src and its tree differs from
// mvdan.cc/sh's in any node or position.
func checkSimple(t *testing.T, src string) bool {
	f, ok := parseSimple(src)
	if !ok {
		return false
	}
	want, err := syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(false)).Parse(strings.NewReader(src), "")
	require.NoError(t, err, "%q: parseSimple took input mvdan.cc/sh refuses", src)
	if !reflect.DeepEqual(want, f) {
		var got, exp strings.Builder
		syntax.DebugPrint(&got, f)
		syntax.DebugPrint(&exp, want)
		t.Fatalf("%q: parseSimple's tree differs:\n got %s\nwant %s", src, got.String(), exp.String())
	}
	return true
}

// TestSimpleParseMatches checks parseSimple against mvdan.cc/sh on the
// samples and every corpus command, and that it takes most one-line
// commands.
func TestSimpleParseMatches(t *testing.T) {
	t.Parallel()
	taken := 0
	for _, src := range simpleSamples {
		if checkSimple(t, src) {
			taken++
		}
	}
	assert.Equal(t, 20, taken, "samples parseSimple takes")
	all := corpusCommands(t)
	taken = 0
	for _, src := range all {
		if checkSimple(t, src) {
			taken++
		}
	}
	t.Logf("parseSimple takes %d of %d corpus commands", taken, len(all))
	assert.Positive(t, taken)
}

// FuzzSimpleParse checks parseSimple against mvdan.cc/sh on any input.
func FuzzSimpleParse(f *testing.F) {
	for _, s := range simpleSamples {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		checkSimple(t, src)
	})
}
