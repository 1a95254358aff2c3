package shellparse

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// divergentCases are commands where bash runs "id" (or writes f) although
// mvdan.cc/sh reads no such command; the oracle (approval/oracle_test.go)
// runs each under real bash and checks that it does.
var divergentCases = []string{
	// arithmetic evaluation of a string holding a subscript with a substitution
	`x='a[$(id)]'; [[ $x -eq 0 ]]`,
	`[[ 'a[$(id)]' -eq 0 ]]`,
	`x='a[$(id)]'; [[ 1 -lt $x ]]`,
	`(( 'a[$(id)]' ))`,
	`x='a[$(id)]'; echo $(( x ))`,
	`x='a[$(id)]'; echo $[x]`,
	`x='a[$(id)]'; for ((i=0;i<x;i++)); do :; done`,
	`let 'a[$(id)]'`,
	`test -v 'a[$(id)]'`,
	`[ -v 'a[$(id)]' ]`,
	`[[ -v 'a[$(id)]' ]]`,
	`declare -i x='a[$(id)]'`,
	`declare -i n; n='a[$(id)]'`,
	`typeset -i n="a[\$(id)]"`,
	`printf -v 'a[$(id)]' x`,
	"read 'a[`id`]' <<< x",
	`x=abc; y='a[$(id)]'; echo ${x:y}`,
	`echo ${a['$(id)']}`,
	`x='a[$(id)]'; a=(1 2); echo ${a[x]}`,
	`declare 'a[$(id)]'=1`,
	`x=a[\$\(id\)]; (( x ))`,
	`x='a[$'; y='(id)]'; z=$x$y; (( z ))`,
	`x=$'a[\x24(id)]'; (( x ))`,
	`bash -c "x='a[\$(id)]'; echo \$((x))"`,
	// let arguments that bash splits at operators
	`let x=1|id`,
	`let x=1>f`,
	`let y=2 x=1|id`,
	// an array assignment glued to the next word
	`a=(1)#; id`,
	`a=(1)#x id`,
	// a comment continued by a backslash
	"x=1 #\\\nid",
	"echo a #b\\\nid",
	"bash -c 'x=1 #\\\nid'",
	// $'…' with a NUL: bash ends the word there
	`$'id\0x'`,
	`$'i\x64\x00'`,
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
