package shellparse

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDirsFollowBash checks where the script's last command runs, as bash
// keeps its directory (each expectation checked with bash 5.2.15): nil is
// the start directory alone, "any" not known.
func TestDirsFollowBash(t *testing.T) {
	t.Parallel()
	cases := []struct {
		src  string
		dirs []string
	}{
		{`ls`, nil},
		{`cd /; ls`, []string{"/"}},
		{`cd /; (cd /tmp); ls`, []string{"/"}},
		{`cd /; (cd /tmp; ls)`, []string{"/tmp"}},
		{`cd /; cd /tmp | cat; ls`, []string{"/"}},
		{`cd /; { cd /tmp; } | cat; ls`, []string{"/"}},
		{`cd /; cd /tmp & ls`, []string{"/"}},
		{`cd /; x=$(cd /tmp); ls`, []string{"/"}},
		{`cd /; if a; then cd /tmp; fi; ls`, []string{"/", "/tmp"}},
		{`cd /; a && cd /tmp || cd /etc; ls`, []string{"/", "/etc", "/tmp"}},
		{`cd /; case x in y) cd /tmp;; esac; ls`, []string{"/", "/tmp"}},
		{`cd /; while a; do cd /tmp; done; ls`, []string{"/", "/tmp"}},
		{`cd /; for i in; do cd /tmp; done; ls`, []string{"/", "/tmp"}},
		{`cd /; while a; do cd /tmp; cd /etc; done; ls`, []string{"/", "/etc"}},
		{`cd /usr/lib; while a; do cd ..; done; ls`, []string{"/", "/usr", "/usr/lib"}},
		{`cd /; while a; do cd x; done; ls`, []string{"any"}},
		{`cd /; cd /x; ls`, []string{"/", "/x"}},
		{`cd /; cd /x && ls`, []string{"/x"}},
		{`cd /; cd /x || exit; ls`, []string{"/x"}},
		{`cd /; cd x; ls`, []string{"/", "/x"}},
		{`cd build; ls`, []string{"", "build"}},
		{`cd /; cd ""; ls`, []string{"/"}},
		{`cd /; cd /a /b; ls`, []string{"/"}},
		{`cd /; cd -q /tmp; ls`, []string{"/"}},
		{`cd /; cd -P -e -- /tmp; ls`, []string{"/tmp"}},
		{`cd /; cd; ls`, []string{"~"}},
		{`cd /; cd /tmp; cd -; ls`, []string{"/"}},
		{`cd -; ls`, []string{"any"}},
		{`cd /dev; cd /work; cd -; ls`, []string{"", "/dev", "/work"}},
		{`cd /dev; pushd /work; popd; ls`, []string{"", "/dev", "/work"}},
		{`cd /; pushd /tmp; popd; ls`, []string{"/"}},
		{`cd /; pushd /tmp; pushd; ls`, []string{"/"}},
		{`popd; ls`, nil},
		{`CDPATH=/ cd dev; ls`, []string{"", "/dev", "dev"}},
		{`cd /; f() { cd /tmp; }; ls`, []string{"/"}},
		{`cd /; f() { cd /tmp; }; f; ls`, []string{"any"}},
		{`cd /; f() { cd "$1"; }; f /tmp; ls`, []string{"/tmp"}},
		{`cd /; sudo cd /tmp; ls`, []string{"/"}},
		{`cd /; env cd /tmp; ls`, []string{"/"}},
		{`cd /; builtin cd /tmp; ls`, []string{"/tmp"}},
		{`cd "$d"; ls`, []string{"any"}},
		{`cd /; eval "$x"; ls`, []string{"any"}},
		{`cd /; eval 'cd /tmp'; ls`, []string{"any"}},
		{`cd /; $cmd; ls`, []string{"any"}},
		{`cd /; shopt -s nullglob; read x; ls`, []string{"/"}},
		{`cd /; bash -c 'cd /tmp'; ls`, []string{"/"}},
		{`cd /dev; bash -c 'ls'`, []string{"/dev"}},
		{`cd ~; cd ..; ls`, []string{"any"}},
		{"alias c='cd /tmp'\ncd /; c; ls", []string{"/", "/tmp"}},
		{`cd /tmp; cd ..; ls`, []string{"/"}},
		{`cd /tmp; ln -s / r; cd r; ls`, []string{"/", "/tmp", "/tmp/r"}},
		{`cd /tmp; shopt -s cdable_vars; r=/; cd r; ls`, []string{"any"}},
	}
	for _, tc := range cases {
		s, err := Parse(tc.src, Options{})
		require.NoError(t, err, tc.src)
		require.NotEmpty(t, s.Commands, tc.src)
		last := s.Commands[len(s.Commands)-1]
		require.Equal(t, "ls", last.Program, tc.src)
		got := last.Dirs
		if last.AnyDir {
			got = []string{"any"}
		}
		assert.Equal(t, tc.dirs, got, tc.src)
	}
}

// TestDirsExpand checks $PWD, $OLDPWD, ~+, ~- and $(pwd) after a cd: the
// values the rm commands get (one walk per directory bash may be in).
func TestDirsExpand(t *testing.T) {
	t.Parallel()
	cases := []struct {
		src    string
		values []string // "?" for a value not known
	}{
		{`cd /tmp; rm "$PWD"`, []string{"/tmp"}},
		{`cd /; cd /tmp; rm "$OLDPWD"`, []string{"/"}},
		{`cd /; cd /tmp; rm ~-/x`, []string{"//x"}},
		{`cd /tmp; rm ~+/x`, []string{"/tmp/x"}},
		{`cd /tmp; rm "$(pwd)"`, []string{"/tmp"}},
		{`cd /tmp; rm "$(pwd -P)"`, []string{"/tmp"}},
		{`cd /; cd /x; rm "$PWD"`, []string{"/", "/x"}},
		{`cd /; a && cd /tmp || cd /; rm "$PWD"`, []string{"/", "/tmp"}},
		{`cd /; cd /x; rm "$OLDPWD"`, []string{"?", "?"}}, // set only if the cd succeeded
		{`cd x; rm "$PWD"`, []string{"?", "?"}},
		{`rm ~+`, []string{"?"}},
		{`rm "$PWD"`, []string{"?"}},
	}
	for _, tc := range cases {
		s, err := Parse(tc.src, Options{})
		require.NoError(t, err, tc.src)
		var got []string
		for _, c := range s.Commands {
			if c.Program != "rm" {
				continue
			}
			a := c.Args[len(c.Args)-1]
			v := a.Value
			if a.Unknown {
				v = "?"
			}
			got = append(got, v)
		}
		assert.Equal(t, tc.values, got, tc.src)
	}
}
