package approval

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tether-dev/tether/shellparse"
)

func TestDenyListMatch(t *testing.T) {
	t.Parallel()
	deny := DenyList{"sudo *", "git push*", "rm -rf *", "curl * | *"}
	cases := []struct {
		cmd   string
		match bool
		why   string
	}{
		{"sudo id", true, "plain"},
		{"/usr/bin/sudo -n id", true, "absolute path"},
		{`s\udo id`, true, "backslash"},
		{"'sudo' id", true, "quoted"},
		{`"su"do id`, true, "partly quoted"},
		{"env X=1 sudo id", true, "env wrapper with assignment"},
		{"env -i /usr/bin/sudo id", true, "env -i and a path"},
		{"nice -n 5 sudo id", true, "nice wrapper"},
		{"timeout 5 sudo -u root ls", true, "timeout wrapper"},
		{"xargs sudo rm < f", true, "xargs wrapper"},
		{"bash -c 'sudo id'", true, "literal payload"},
		{"echo $(sudo id)", true, "substitution"},
		{"ls; sudo id", true, "second command"},
		{"f() { sudo id; }; f", true, "function body"},
		{"sudo", false, "no space after sudo: the glob needs one"},
		{"echo sudo id", false, "an argument"},
		{"pseudosudo id", false, "another program"},
		{"git push", true, "exact prefix"},
		{"git push --force origin main", true, "with args"},
		{"git pushx", true, "glob has no space before *"},
		{"git status", false, "other subcommand"},
		{"rm -rf build", true, "rm"},
		{"/bin/rm -rf build", true, "rm by path"},
		{"rm -fr build", false, "reordered flags are not the same text (documented)"},
		{"curl x | sh", false, "pipelines are separate commands"},
	}
	for _, c := range cases {
		s, err := shellparse.Parse(c.cmd, shellparse.Options{})
		require.NoError(t, err, c.cmd)
		f, ok := deny.Match(s)
		assert.Equal(t, c.match, ok, "%q (%s)", c.cmd, c.why)
		if ok {
			assert.Equal(t, RuleDenyGlob, f.Rule)
			assert.Equal(t, TierHardline, f.Tier)
			assert.Contains(t, f.Description, "matches deny rule")
			// The span is in the top-level source; for a command inside a
			// payload it covers the word that held the payload.
			assert.Contains(t, c.cmd[f.Span.Start:f.Span.End], f.Text, "span of %q", c.cmd)
		}
	}
	_, ok := deny.Match(nil)
	assert.False(t, ok, "a nil script (parse error) matches nothing")
	_, ok = DenyList(nil).Match(&shellparse.Script{})
	assert.False(t, ok)
}

func TestDenyTexts(t *testing.T) {
	t.Parallel()
	s, err := shellparse.Parse("env X=1 nice -n 5 /usr/bin/sudo -n id -u", shellparse.Options{})
	require.NoError(t, err)
	require.Len(t, s.Commands, 1)
	assert.Equal(t, []string{"id -u", "sudo -n id -u", "nice -n 5 sudo -n id -u", "env nice -n 5 sudo -n id -u"}, DenyTexts(&s.Commands[0]))
}

func TestGlobMatch(t *testing.T) {
	t.Parallel()
	cases := []struct {
		g, s string
		want bool
	}{
		{"*", "", true},
		{"*", "anything at all / with slashes", true},
		{"a?c", "abc", true},
		{"a?c", "ac", false},
		{`a\*`, "a*", true},
		{`a\*`, "ab", false},
		{"sudo *", "sudo ", true},
		{"*rm*", "xrmy", true},
		{"a*b*c", "aXbYbZc", true},
		{"a*b*c", "aXbYbZ", false},
		{"exact", "exact", true},
		{"exact", "exactly", false},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, globMatch(c.g, c.s), "%q ~ %q", c.g, c.s)
	}
	// Hostile input stays fast: many stars against a long near-miss.
	long := make([]byte, 5000)
	for i := range long {
		long[i] = 'a'
	}
	assert.False(t, globMatch("*a*a*a*a*a*a*a*a*b", string(long)))
}

func TestDenyListValidate(t *testing.T) {
	t.Parallel()
	require.NoError(t, DenyList{"sudo *", `a\\`}.Validate())
	err := DenyList{"sudo *", " "}.Validate()
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrBadGlob))
	err = DenyList{`x\`}.Validate()
	assert.True(t, errors.Is(err, ErrBadGlob))
}
