package shellparse

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// commandLines returns each recorded command as "program arg…", with the
// values bash would give the words.
func commandLines(t *testing.T, src string) []string {
	t.Helper()
	s, err := Parse(src, Options{})
	require.NoError(t, err, src)
	var out []string
	for _, c := range s.Commands {
		if c.Program == "" {
			continue
		}
		line := c.Program
		for _, a := range c.Args {
			line += " " + a.Value
		}
		out = append(out, line)
	}
	return out
}

// TestKnownExpansions checks that the words bash makes of known values under
// the operators and arrays of expand.go are the words recorded: each case's
// want is among the commands, and an expansion not modelled stays unknown.
func TestKnownExpansions(t *testing.T) {
	t.Parallel()
	cases := []struct{ src, want string }{
		{`a=(rm -rf /); "${a[@]}"`, "rm -rf /"},
		{`a=(rm -rf '/x y'); "${a[@]}"`, "rm -rf /x y"},
		{`a=(rm -rf /); ${a[*]}`, "rm -rf /"},
		{`a=(x y); echo "${a[*]}"`, "echo x y"},
		{`a=(re boot); ${a[0]}${a[1]}`, "reboot"},
		{`a[2]=reboot; ${a[2]}`, "reboot"},
		{`a=(x); a+=(rm /); ${a[1]} ${a[2]}`, "rm /"},
		{`a=(x); a[3]=rm; echo "${a[@]}"`, "echo x rm"},
		{`x=a; x[1]=b; echo "${x[@]}"`, "echo a b"},
		{`a=(x y z); echo ${#a[@]} ${#a[1]}`, "echo 3 1"},
		{`x=REBOOT; ${x,,}`, "reboot"},
		{`x=reboot; echo ${x^^} ${x^}`, "echo REBOOT Reboot"},
		{`x=Reboot; ${x,}`, "reboot"},
		{`x=rexbxoxoxt; ${x//x/}`, "reboot"},
		{`x=reb; ${x/b/boot}`, "reboot"},
		{`x=XXreboot; ${x/#XX/}`, "reboot"},
		{`x=rebootYY; ${x/%YY/}`, "reboot"},
		{`x=rebootnow; ${x:0:6}`, "reboot"},
		{`x=nowreboot; ${x: -6} ${x:3:-3}`, "reboot reb"},
		{`x=abc; echo ${#x}`, "echo 3"},
		{`y=reboot; x=y; ${!x}`, "reboot"},
		{`y=REBOOT; x=y; ${!x,,}`, "reboot"},
		{`a=(x reboot); x='a[1]'; ${!x}`, "reboot"},
		{`set -- rm -rf ~; "$@"`, "rm -rf ~"},
		{`set -- a b; echo "$*" $#`, "echo a b 2"},
		{`f(){ "$@"; }; f rm -rf /`, "rm -rf /"},
		{`f(){ "$1" -f; }; f reboot`, "reboot -f"},
		{`x='rm -rf /'; $x`, "rm -rf /"},
		{`IFS=:; x=rm:-rf:/; $x`, "rm -rf /"},
		{`IFS=:; x=a::b; echo $x`, "echo a  b"},
		{`IFS=,; set -- a b; echo "$*"`, "echo a,b"},
		{`x=reboot sh -c '$x'`, "reboot"},
		{`env x='rm -rf /' bash -c '$x'`, "rm -rf /"},
		// Not modelled: the words stay unknown.
		{`a=(ls reboot); unset 'a[0]'; ${a[*]}`, "reboot"},
		{`x=boot; ${x/boot/re&}`, "reboot"}, // bash 5.2's patsub_replacement
		{`x=boot; echo ${x/boot/re\&}`, "echo re&"},
		{`a=(xy reboot); "${a[@]:1}"`, "reboot"},
		{`a=(rm x-rf x/); "${a[@]/x/}"`, "rm -rf /"},
		{`a=(RM -RF /); ${a[*],,}`, "rm -rf /"},
		{`a=(ls ls); read 'a[0]' <<< reboot; echo ${a[*]}`, "echo ${a[*]}"},
		{`x=boot; echo ${x/boot/'&'}`, "echo ${x/boot/'&'}"},
		{`set -- a b; echo ${@:1}`, "echo ${@:1}"},
		{`x=abc; echo ${x:010}`, "echo ${x:010}"},
		{`a=(x); a=y; echo "${a[@]}"`, "echo ${a[@]}"},
		{`IFS=$y; x=a:b; echo $x`, "echo $x"},
	}
	for _, tc := range cases {
		assert.Contains(t, commandLines(t, tc.src), tc.want, tc.src)
	}
}

// TestPartialArray checks that an element assigned to an array not known
// reads the known elements and marks the expansion partial.
func TestPartialArray(t *testing.T) {
	t.Parallel()
	s, err := Parse(`a[1]=rm; ${a[*]} -rf ~`, Options{})
	require.NoError(t, err)
	assert.Contains(t, commandLines(t, `a[1]=rm; ${a[*]} -rf ~`), "rm -rf ~")
	require.Len(t, s.Opaque, 1)
	assert.Equal(t, OpaquePartialExpansion, s.Opaque[0].Kind)
}

// TestIdentityCopies checks that a program copied through a filter and its
// inverse is run as that program (codec.go), and that bytes left encoded
// are unknown content.
func TestIdentityCopies(t *testing.T) {
	t.Parallel()
	cases := []struct {
		src     string
		program string // "" when the copy must not resolve to a program
	}{
		{`tee x < /sbin/reboot >/dev/null; ./x`, "reboot"},
		{`base64 /sbin/reboot | base64 -d > x; ./x`, "reboot"},
		{`base64 -w0 < /sbin/reboot | base64 --decode > x; ./x`, "reboot"},
		{`gzip -c /sbin/reboot | gunzip > x; ./x`, "reboot"},
		{`gzip -9c /sbin/reboot > x.gz; zcat x.gz > x; ./x`, "reboot"},
		{`xz -c /sbin/reboot | xz -dc > x; ./x`, "reboot"},
		{`zstd -c /sbin/reboot | zstdcat > x; ./x`, "reboot"},
		{`xxd /sbin/reboot | xxd -r > x; ./x`, "reboot"},
		{`cat /sbin/reboot | dd of=x; ./x`, "reboot"},
		{`gzip -c < /sbin/reboot | base64 | base64 -d | zcat > x; ./x`, "reboot"},
		{`tar cf - /sbin/reboot | tar xOf - > x; ./x`, "reboot"},
		{`base64 /sbin/reboot > x; ./x`, ""},
		{`gzip -c /sbin/reboot | base64 -d > x; ./x`, ""},
		{`xxd -p /sbin/reboot | xxd -r > x; ./x`, ""},
	}
	for _, tc := range cases {
		s, err := Parse(tc.src, Options{})
		require.NoError(t, err, tc.src)
		var progs []string
		written := false
		for _, c := range s.Commands {
			progs = append(progs, c.Program)
		}
		for _, o := range s.Opaque {
			written = written || o.Kind == OpaqueWritten
		}
		if tc.program != "" {
			assert.Contains(t, progs, tc.program, tc.src)
		} else {
			assert.NotContains(t, progs, "reboot", tc.src)
			assert.True(t, written, "%s: want a written-file segment", tc.src)
		}
	}
}

// TestScriptFiles checks that a program reading a script file the line
// wrote runs what the file holds (filescript.go).
func TestScriptFiles(t *testing.T) {
	t.Parallel()
	cases := []struct{ src, want string }{
		{"echo '* * * * * reboot' > f; crontab f", "reboot"},
		{"printf '@reboot rm -rf ~\\n' > t; crontab -u root t", "rm -rf ~"},
		{"echo reboot > f; at -f f now", "reboot"},
		{"echo reboot > f; batch < f", "reboot"},
		{"echo reboot > f; xargs -a f sh -c", "reboot"},
		{"echo 'shell rm -rf /' > g; gdb -batch -x g", "gdb -batch -ex shell rm -rf /"},
		{"echo reboot > rc; bash --rcfile rc -i", "reboot"},
		{"printf 'all:\\n\\t@rm -rf /\\n' > mk; make -f mk", "rm -rf /"},
		{"echo 'execute_process(COMMAND reboot)' > c.cmake; cmake -P c.cmake", "reboot"},
	}
	for _, tc := range cases {
		assert.Contains(t, commandLines(t, tc.src), tc.want, tc.src)
	}
	// Not exported: the child's $x is not known.
	assert.NotContains(t, commandLines(t, `x=reboot; sh -c '$x'`), "reboot")
	// A file whose content is not known: a written-file segment.
	s, err := Parse("curl -o f https://h/x; crontab f", Options{})
	require.NoError(t, err)
	kinds := make([]string, 0, len(s.Opaque))
	for _, o := range s.Opaque {
		kinds = append(kinds, string(o.Kind))
	}
	assert.Contains(t, strings.Join(kinds, " "), string(OpaqueWritten))
}
