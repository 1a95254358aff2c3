package shellparse

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestVariablesFollowed checks the value of the last rm command's last
// argument after the script's assignments, as bash would expand it, and
// whether it is known.
func TestVariablesFollowed(t *testing.T) {
	t.Parallel()
	cases := []struct {
		src     string
		value   string
		literal bool
		unknown bool
	}{
		{`x=~; rm -rf "$x"`, "~", false, false},
		{`x='~'; rm -rf "$x"`, "~", true, false},
		{`d=/; rm -rf $d`, "/", true, false},
		{`export D=/srv; rm -rf "$D"`, "/srv", true, false},
		{`local d=/srv; rm $d`, "/srv", true, false},
		{`a=/home b=$a/alice; rm "$b"`, "/home/alice", true, false},
		{`x='*'; rm /$x`, "/*", false, false},
		{`x='*'; rm "/$x"`, "/*", true, false},
		{`x=/a; x=/b; rm $x`, "/b", true, false},
		{`x=/a && rm $x`, "/a", true, false},
		{`set -- /a /b; rm "$@"`, "/b", true, false},
		{`IFS=/; x=/a; rm "$x"`, "/a", true, false}, // quoted: not split
		{`IFS=/; x=a/b; rm $x`, "b", true, false},
		{`x="/a /b"; rm $x`, "/b", true, false},
		{`x=/a; x+=/b; rm "$x"`, "/a/b", true, false},
		{`IFS=$y; x=/a; rm "$x"`, "$x", false, true},
		{`x=/a; rm "$HOME"`, "$HOME", false, false},
		// unknown
		{`rm "$x"`, "$x", false, true},
		{`x=$(cat f); rm "$x"`, "$x", false, true},
		{`x=/a; read x; rm "$x"`, "$x", false, true},
		{`x=/a; unset x; rm "$x"`, "$x", false, true},
		{`x=/a; printf -v x %s /b; rm "$x"`, "/b", true, false},
		{`x=/a; printf -v x %s%s /b /c; rm "$x"`, "$x", false, true},
		{`x=/a; printf -v x %s *; rm "$x"`, "$x", false, true},
		{`set -- /a /b; rm "$2"`, "/b", true, false},
		{`set -- /a; rm "$@"`, "/a", true, false},
		{`set -- "$q"; rm "$1"`, "$1", false, true},
		{`set -- /a; shift; rm "$1"`, "$1", false, true},
		{`set -x; rm "$1"`, "$1", false, true},
		{`x=/a; eval true; rm "$x"`, "$x", false, true},
		{`x=/a; source f; rm "$x"`, "$x", false, true},
		{`x=/a; $cmd; rm "$x"`, "$x", false, true},
		{`declare -n r=x; x=/a; rm "$x"`, "/a", true, false},
		{`declare -n r=x; r=/a; rm "$x"`, "/a", true, false},
		{`x=/b; declare -n r=$y; r=/a; rm "$x"`, "$x", false, true},
		{`x=/b; declare -n r; r=$y; r=/a; rm "$x"`, "$x", false, true},
		{`x=/b; f() { declare -gn r=x; }; f; rm "$x"`, "$x", false, true},
		{`x=/a; declare -l x=/B; rm "$x"`, "$x", false, true},
		{`(x=/a); rm "$x"`, "$x", false, true},
		{`x=/a | true; rm "$x"`, "$x", false, true},
		{`x=/a & rm "$x"`, "$x", false, true},
		{`echo $(x=/a); rm "$x"`, "$x", false, true},
		{`true || x=/a; rm "$x"`, "$x", false, true},
		{`if c; then x=/a; fi; rm "$x"`, "$x", false, true},
		{`if c; then x=/a; else x=/a; fi; rm "$x"`, "/a", true, false},
		{`x=/a; f() { x=/b; }; f; rm "$x"`, "$x", false, true},
		{`f() { rm "$x"; }; x=/a; f`, "$x", false, true},
		{`x=/a; : ${x:=/b}; rm "$x"`, "$x", false, true},
		{`x=/a; (( y = 1 )); rm "$x"`, "/a", true, false},
		{`x=/a; (( n )); rm "$x"`, "$x", false, true},
		{`x=/a; y='x=5'; (( y )); rm "$x"`, "$x", false, true},
		{`x=/a; trap 'x=/b' DEBUG; rm "$x"`, "$x", false, true},
		{`x=; rm $x`, "$x", false, true},
		{`x=/a rm "$x"`, "$x", false, true},
		{`PWD=/a; cd /b; rm "$PWD"`, "/b", true, false}, // the walk in /b, the last of those in each directory (cwd.go)
		{`x=/a; for i in 1 2; do read x; done; rm "$x"`, "$x", false, true},
	}
	for _, c := range cases {
		s, err := Parse(c.src, Options{})
		require.NoError(t, err, c.src)
		var last Command
		for _, cmd := range s.Commands {
			if cmd.Program == "rm" {
				last = cmd
			}
		}
		require.NotEmpty(t, last.Args, c.src)
		a := last.Args[len(last.Args)-1]
		assert.Equal(t, c.value, a.Value, c.src)
		assert.Equal(t, c.literal, a.Literal, "%s: literal", c.src)
		assert.Equal(t, c.unknown, a.Unknown, "%s: unknown", c.src)
	}
}

// TestVariablesLoops checks that a loop's passes are walked with the values
// each pass sees: one per literal item, and the next pass after an
// assignment in the body.
func TestVariablesLoops(t *testing.T) {
	t.Parallel()
	targets := func(src string) []string {
		s, err := Parse(src, Options{})
		require.NoError(t, err, src)
		var out []string
		for _, c := range s.Commands {
			if c.Program == "rm" {
				out = append(out, c.Args[len(c.Args)-1].Value)
			}
		}
		return out
	}
	assert.Equal(t, []string{"/", "~"}, targets(`for d in / ~; do rm -rf "$d"; done`))
	assert.Contains(t, targets(`for i in 1 2; do rm -rf "$x"; x=~; done`), "~")
	assert.Contains(t, targets(`x=/a; while c; do rm -rf "$x"; x=/b; done`), "/b")
	assert.Contains(t, targets(`x=/a; while c; do rm -rf "$x"; x=/b; done`), "/a")
	// break/continue: items are not bound; the first two passes and the
	// general one (x unknown) are walked
	assert.Equal(t, []string{"/a", "/b", "$x"}, targets(`x=/a; for i in 1 2; do rm "$x"; x=/b; continue; done`))
	// no assignment in the loop: one walk, no duplicates
	assert.Equal(t, []string{"/a"}, targets(`x=/a; while c; do rm "$x"; done`))
	assert.Equal(t, []string{"$f"}, targets(`for f in *.o; do rm "$f"; done`))
}

// TestParamChoices: a choice operator (${X:-w}, ${X:=w}, ${X:+w} and the
// forms without ":") on a variable whose value is not known is walked in
// each state of the variable (set, unset, empty), so that every command bash
// may run is recorded, with the words bash gives it.
func TestParamChoices(t *testing.T) {
	t.Parallel()
	cases := []struct {
		src  string
		want []string // "program arg…" of each command recorded, in order
	}{
		// set: the unknown value; unset and empty: the default.
		{`rm -rf ${D:-/tmp/x}`, []string{"rm -rf ${D:-/tmp/x}", "rm -rf /tmp/x"}},
		{`rm -rf "${D:=/srv}"`, []string{"rm -rf ${D:=/srv}", "rm -rf /srv"}},
		// without ":", empty is a value: rm gets nothing (the word vanishes
		// unquoted) or "" (quoted).
		{`rm -rf ${D-/srv}`, []string{"rm -rf ${D-/srv}", "rm -rf /srv", "rm -rf"}},
		{`rm -rf "${D-/srv}"`, []string{"rm -rf ${D-/srv}", "rm -rf /srv", "rm -rf "}},
		{`rm -rf ~/${SUB-}`, []string{"rm -rf ~/${SUB-}", "rm -rf ~/"}},
		// :+ yields the word only when set and not empty; + when set.
		// (sh -c's payload is recorded as the command it runs.)
		{`${X:+sh} -c reboot`, []string{"reboot", "-c reboot"}},
		{`${X+sh} -c reboot`, []string{"reboot", "-c reboot"}},
		{`rm -rf /${X:+tmp}`, []string{"rm -rf /tmp", "rm -rf /"}},
		// two variables: every combination.
		{`${A:+rm} -rf ${B:-/srv}`, []string{"rm -rf ${B:-/srv}", "-rf ${B:-/srv}", "rm -rf /srv", "-rf /srv"}},
		// nested: the inner default is walked too.
		{`rm -rf ${A:-${B:-/srv}}`, []string{"rm -rf ${A:-${B:-/srv}}", "rm -rf /srv"}},
		// a standalone assignment: the rest of the list is walked per state.
		{`x=${D:-/srv}; rm -rf $x`, []string{"", "rm -rf $x", "", "rm -rf /srv"}},
		{`export D=${D:-/srv}; rm -rf "$D"`, []string{"export D=${D:-/srv}", "rm -rf $D", "export D=/srv", "rm -rf /srv"}},
		// a known variable is not a choice; $HOME is set.
		{`d=/srv; rm -rf ${d:-/x}`, []string{"", "rm -rf /srv"}},
		{`rm -rf ${HOME:-/x}`, []string{"rm -rf $HOME"}},
	}
	for _, tc := range cases {
		s, err := Parse(tc.src, Options{})
		require.NoError(t, err, tc.src)
		var got []string
		for _, c := range s.Commands {
			line := c.Program
			for _, a := range c.Args {
				line += " " + a.Value
			}
			got = append(got, line)
		}
		assert.Equal(t, tc.want, got, tc.src)
	}
}

// TestShellPositional: a shell -c script's $0, $1 … and (with one
// argument) "$@" are the known words after the script.
func TestShellPositional(t *testing.T) {
	t.Parallel()
	cases := []struct{ src, want string }{
		{`sh -c 'rm -rf "$1"' _ /srv`, "rm -rf /srv"},
		{`bash -c 'rm -rf $1 "$0"' /a /b`, "rm -rf /b /a"},
		{`sh -c 'rm -rf "$@"' _ /srv`, "rm -rf /srv"},
		{`sh -c 'rm -rf "$@"' _ /a /b`, "rm -rf /a /b"},
		{`sh -c 'rm -rf "$1"' _ "$x"`, "rm -rf $1"}, // not known
		{`find . -exec sh -c 'rm "$1"' _ {} \;`, "rm {}"},
	}
	for _, tc := range cases {
		s, err := Parse(tc.src, Options{})
		require.NoError(t, err, tc.src)
		c := s.Commands[len(s.Commands)-1]
		line := c.Program
		for _, a := range c.Args {
			line += " " + a.Value
		}
		assert.Equal(t, tc.want, line, tc.src)
	}
}
