package shellparse

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// divergentCases are read from testdata/divergence.tsv: commands where bash
// runs reboot (or writes f) although mvdan.cc/sh reads no such command; the
// oracle (internal/oracle) runs each under real bash and checks that it does.
var divergentCases = func() []string {
	data, err := os.ReadFile("testdata/divergence.tsv")
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
}()

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

func hasDivergence(s *Script) bool {
	for _, o := range s.Opaque {
		if o.Kind == OpaqueDivergence {
			return true
		}
	}
	return false
}
