package shellparse

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// programs returns the Program of every command of s, and the kinds of its
// opaque segments.
func programsOf(t *testing.T, src string) ([]string, []OpaqueKind) {
	t.Helper()
	s, err := Parse(src, Options{})
	require.NoError(t, err, src)
	var progs []string
	for _, c := range s.Commands {
		progs = append(progs, c.Program)
	}
	var kinds []OpaqueKind
	for _, o := range s.Opaque {
		kinds = append(kinds, o.Kind)
	}
	return progs, kinds
}

// TestWrittenFilesRun: a file the line wrote and then runs is read as what
// it holds; content that cannot be known is an opaque written-file segment;
// a file only read, or one the line did not write, is not.
func TestWrittenFilesRun(t *testing.T) {
	t.Parallel()
	cases := []struct {
		src     string
		program string     // a program that must be among the commands ("" none)
		opaque  OpaqueKind // an opaque kind that must be found ("" none at all)
	}{
		{"cp /bin/rm /tmp/x && /tmp/x -rf ~", "rm", ""},
		{"cp /bin/rm /tmp && /tmp/rm -rf ~", "rm", ""},
		{"cp -t /tmp /bin/rm; /tmp/rm -rf ~", "rm", ""},
		{"ln -s /sbin/reboot x; ./x", "reboot", ""},
		{"install -m755 /sbin/reboot /usr/local/bin/rb; rb", "reboot", ""},
		{"cat /sbin/reboot > x; ./x", "reboot", ""},
		{"dd if=/sbin/reboot of=x; ./x", "reboot", ""},
		{"rsync /sbin/reboot y; ./y", "reboot", ""},
		{"cp /sbin/reboot a; mv a b; ./b", "reboot", ""},
		{"f=/tmp/x; cp /sbin/reboot $f; sudo $f", "reboot", ""},
		{"cp /sbin/reboot x; exec ./x", "reboot", ""},
		// matched by the last element only: the command as written stays
		{"cp /bin/ls /tmp/rm; /bin/rm -rf ~", "rm", ""},
		{"echo x > sudo; /usr/bin/sudo reboot", "reboot", ""},
		// a loop's later pass, a function walked where it is defined: the
		// source is walked again with the write known
		{"for i in 1 2; do ./x; cp /sbin/reboot x; done", "reboot", ""},
		{"f() { ./x; }; cp /sbin/reboot x; f", "reboot", ""},
		// known text is a script
		{"printf 'reboot\\n' > /tmp/s.sh; sh /tmp/s.sh", "reboot", ""},
		{"cat > s.sh <<EOF\nreboot\nEOF\nbash s.sh", "reboot", ""},
		{"echo reboot > x; . ./x", "reboot", ""},
		{"tee f <<< reboot; source f", "reboot", ""},
		{"echo reboot | tee f; bash f", "reboot", ""},
		{"echo reboot > f; chmod +x f; ./f", "reboot", ""},
		{"printf 're' > s; printf 'boot\\n' >> s; sh s", "reboot", ""},
		{"(echo reboot > s); sh s", "reboot", ""},
		{"echo cmVib290 | base64 -d > s; sh s", "reboot", ""},
		// unknown content
		{`cp "$1" x; ./x`, "", OpaqueWritten},
		{"curl -o x https://h/x; ./x", "", OpaqueWritten},
		{"wget -O s.sh https://h/s; bash s.sh", "", OpaqueWritten},
		{`echo "$x" > s; source s`, "", OpaqueWritten},
		// another language: python's reader, or opaque
		{"echo 'import os' > p.py; python3 p.py", "", OpaquePayload},
		{"printf '#!/usr/bin/perl\\nx\\n' > p; ./p", "", OpaquePayload},
	}
	for _, tc := range cases {
		progs, kinds := programsOf(t, tc.src)
		if tc.program != "" {
			assert.Contains(t, progs, tc.program, tc.src)
		}
		if tc.opaque != "" {
			assert.Contains(t, kinds, tc.opaque, tc.src)
		}
	}
	// Near misses: nothing is read into them.
	for _, src := range []string{
		"cp a b && cat b", "echo hi > f; cat f", "./configure && make", "cp /bin/rm x; ls -l x",
		"echo reboot > notes.txt; cat notes.txt", "echo reboot > s; sh ./other.sh", "echo 'print(1)' > p.py; python3 p.py",
	} {
		progs, kinds := programsOf(t, src)
		assert.NotContains(t, progs, "reboot", src)
		assert.NotContains(t, progs, "rm", src)
		assert.Empty(t, kinds, src)
	}
}

// TestKnownSubstitutions: a command substitution whose output is known is
// that text, split as bash splits it.
func TestKnownSubstitutions(t *testing.T) {
	t.Parallel()
	for _, src := range []string{
		"$(echo reboot)", "`echo reboot`", "$(printf reboot)", "x=$(echo reboot); $x", `eval "$(echo reboot)"`,
		"$(echo cmVib290 | base64 -d)", "$(base64 -d <<< cmVib290)", "$(rev <<< toober)", "$(tr a-z n-za-m <<< erobbg)",
		"$(cat <<EOF\nreboot\nEOF\n)", "echo reboot > c; $(cat c)", "re$(echo boot)", "$(echo x > /dev/null)reboot",
		`"$(echo)"reboot`,
	} {
		progs, _ := programsOf(t, src)
		assert.Contains(t, progs, "reboot", src)
	}
	for _, src := range []string{"$(date)", "$(echo) reboot", "x$(echo ' a')", "$(echo ls 2>&1)", "$(echo reboot; ls)",
		// a function or an alias may run instead of echo
		"echo() { printf reboot; }; $(echo ls)", "echo ls > /tmp/c; $(cat /etc/c)", "alias echo='printf reboot'\n$(echo ls)", "eval x; $(echo ls)"} {
		_, kinds := programsOf(t, src)
		assert.Contains(t, kinds, OpaqueDynamicProgram, src)
	}
}

// TestReadAndNamerefValues: values read from a known input, and those set
// through namerefs and walked function calls, are known at their uses.
func TestReadAndNamerefValues(t *testing.T) {
	t.Parallel()
	for _, src := range []string{
		"read x <<< reboot; $x", "read -r a b <<< 'x reboot'; $b", `IFS=: read -a arr <<< 'x:reboot'; "${arr[1]}"`,
		"read <<< reboot; $REPLY", "read -d , x <<< 'reboot,ls'; $x", `mapfile -t arr <<< $'ls\nreboot'; "${arr[1]}"`,
		"readarray -t <<EOF\nls\nreboot\nEOF\n${MAPFILE[1]}", "mapfile arr <<< reboot; ${arr[0]}",
		`f() { local -n r=$1; r=reboot; }; f v; $v`, `f() { printf -v "$1" reboot; }; f v; $v`,
		"declare -n r=v; r=reboot; $v", "declare -n r; r=v; v=reboot; $r", "f() { x=reboot; }; f a; $x",
		"v=reboot; declare -n r=v; declare +n r; r=ls; $v", "export -n x=reboot; $x",
	} {
		progs, _ := programsOf(t, src)
		assert.True(t, slices.Contains(progs, "reboot"), "%q: %v", src, progs)
	}
	// Not known: the model does not cover them, or bash leaves them unset.
	for _, src := range []string{
		"read x < f; $x", "read -n 3 x <<< reboot; $x", `read x <<< 'reb\oot'; $x`, "echo reboot | read x; $x",
		"f() { local x=reboot; }; f a; $x", "x=/b; declare -n r=$y; r=reboot; $x",
	} {
		progs, _ := programsOf(t, src)
		assert.False(t, slices.Contains(progs, "reboot"), "%q: %v", src, progs)
	}
}

// TestSplitIFS follows read's field splitting.
func TestSplitIFS(t *testing.T) {
	t.Parallel()
	assert.Equal(t, []string{"a", "b"}, splitIFS("  a  b ", " \t\n"))
	assert.Equal(t, []string{"a", "", "b"}, splitIFS("a::b", ":"))
	assert.Equal(t, []string{"a", "b"}, splitIFS("a : b", ": "))
	assert.Equal(t, []string{"", "a"}, splitIFS(":a", ":"))
	assert.Equal(t, []string{"a"}, splitIFS("a:", ":"))
	rest, ok := restOfLine("x  rm -rf  ", " \t\n", 1)
	assert.True(t, ok)
	assert.Equal(t, "rm -rf", rest)
	_, ok = restOfLine("x:a:b", ":", 1)
	assert.False(t, ok)
}
