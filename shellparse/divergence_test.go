package shellparse

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// divergentCases are read from testdata/divergence.tsv: commands where bash
// runs reboot (or writes f) although mvdan.cc/sh reads no such command; the
// oracle (internal/oracle) runs each under real bash and checks that it does.
var divergentCases = readCases("testdata/divergence.tsv")

// readCases reads a file of commands, one a line, escaped (\n \t \\), with
// "#" comment lines.
func readCases(path string) []string {
	data, err := os.ReadFile(path)
	if err != nil {
		panic(err)
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, strings.NewReplacer(`\\`, `\`, `\n`, "\n", `\t`, "\t").Replace(line))
	}
	return out
}

var convergentCases = []string{
	"echo $((1+2))",
	"for ((i=0;i<3;i++)); do echo $i; done",
	"let i++",
	`let "x = 1 | 2"`,
	"[[ $n -eq 0 ]]",
	"echo '$(not run)'",
	"x='$(not run)'; echo $x",
	"a=(1 2) # note",
	"a=(1 2); echo ${a[@]}",
	"make -j$(( $(nproc) + 1 ))",
	"# a comment \\\n",
	"docker run \\\n  --rm alpine true",
	"echo $'a\\tb'",
	"awk '{c[$(NF)]++}' f",
	"declare -a xs=(1 2)",
	"x=hi; echo ${x@P}",
	"echo ${!BASH*} ${!arr[@]}",
	"x=HOME; echo ${!x}",
	// bash 5.2 reads ' as quoting in these operands, as mvdan does.
	`echo "${x#'$(not run)'}"`,
	`echo "${x%%'$(not run)'}"`,
	`echo "${x/'$(not run)'/y}"`,
	`echo "${x:?'$(not run)'}"`,
	`echo ${x:-'$(not run)'}`,
	`echo "${x:-'no code'}"`,
	`echo "${HOME:-/tmp}"`,
	"cat <<EOF\n${x:-none} $HOME\nEOF",
	"cat <<'EOF'\n${x:-'$(not run)'}\nEOF",
	`declare -a 'x=(a b)'`,
	`declare -a xs=("$@")`,
	`declare 'x=($(not run))'`,
	`export 'x=($(not run))'`,
	"declare -n ref=arr",
	`PS1='\u@\h:\w\$ '`,
	`PS4='+ ${BASH_SOURCE}:${LINENO}: '; set -x`,
	"PROMPT_COMMAND='history -a'",
}

func TestParserDivergenceFailsClosed(t *testing.T) {
	t.Parallel()
	for _, src := range divergentCases {
		s, err := Parse(src, Options{})
		if err != nil {
			continue // unparseable fails closed too
		}
		assert.True(t, hasDivergence(s), "%q: bash and mvdan.cc/sh may disagree; want an OpaqueDivergence segment", src)
	}
	for _, src := range convergentCases {
		s, err := Parse(src, Options{})
		require.NoError(t, err, src)
		assert.False(t, hasDivergence(s), "%q: no divergence", src)
	}
}

func TestParserDivergenceCasesParse(t *testing.T) {
	t.Parallel()
	// The cases must reach the divergence check, not stop at a parse error
	// (which would hide whether the check works).
	for _, src := range divergentCases {
		_, err := Parse(src, Options{})
		assert.NoError(t, err, src)
	}
}

// TestRereadKnownText: where bash parses known text again at run time
// (testdata/reread.tsv), shellparse walks it as bash reads it, so the reboot
// inside is a command of the script.
func TestRereadKnownText(t *testing.T) {
	t.Parallel()
	cases := readCases("testdata/reread.tsv")
	require.NotEmpty(t, cases)
	for _, src := range cases {
		s, err := Parse(src, Options{})
		require.NoError(t, err, src)
		assert.True(t, slices.ContainsFunc(s.Commands, func(c Command) bool { return c.Program == "reboot" }), "%q: want reboot among the commands", src)
	}
	// Run only by an interactive shell, so not in the file the oracle runs.
	for _, src := range []string{"PROMPT_COMMAND=(: reboot)", "PS1='`reboot` $ '", "export PROMPT_COMMAND='reboot'"} {
		s, err := Parse(src, Options{})
		require.NoError(t, err, src)
		assert.True(t, slices.ContainsFunc(s.Commands, func(c Command) bool { return c.Program == "reboot" }), "%q: want reboot among the commands", src)
	}
	// Text bash does not parse again stays data.
	for _, src := range []string{`declare 'x=($(reboot))'`, `readonly x='($(reboot))'`, `echo "${x#'$(reboot)'}"`, `declare -a x; x='($(reboot))'`, "mapfile -t x < f", "mapfile() { :; }; mapfile -C reboot", "PS3='$(reboot)'", `PS4='\\$(reboot)'`, `r='a[$(reboot)]'; echo $r`} {
		s, err := Parse(src, Options{})
		require.NoError(t, err, src)
		assert.False(t, slices.ContainsFunc(s.Commands, func(c Command) bool { return c.Program == "reboot" }), "%q: reboot does not run", src)
	}
}

func hasDivergence(s *Script) bool {
	for _, o := range s.Opaque {
		if o.Kind == OpaqueDivergence {
			return true
		}
	}
	return false
}
