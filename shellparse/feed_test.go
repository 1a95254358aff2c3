package shellparse

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestXargsFeed: xargs given a known input runs its command with the
// input's items, split as xargs splits them; an unknown input adds nothing.
func TestXargsFeed(t *testing.T) {
	t.Parallel()
	cases := []struct {
		src  string
		args []string // the rm command's arguments; nil: no feed
	}{
		{"echo ~ /tmp/x | xargs rm -rf", []string{"-rf", "~", "/tmp/x"}},
		{`printf '%s\0' "a b" c | xargs -0 rm`, []string{"a b", "c"}},
		{"ls -d /etc | xargs -n1 rm -r", []string{"-r", "/etc"}},
		{"xargs rm <<< \"'a b' c\\\\d\"", []string{"a b", "cd"}},
		{"xargs -I{} rm -rf /x/{} <<< '  y z'", []string{"-rf", "/x/y z"}},
		{"xargs rm <<'E'\n/a\n/b\nE", []string{"/a", "/b"}},
		{"echo $X | xargs rm", nil},
		{"echo -e 'a\\nb' | xargs rm", nil},
		{"cat f | xargs rm", nil},
		{"xargs rm <<< / < f", nil}, // the later redirection wins
		{"xargs rm < f <<< /", []string{"/"}},
		{"xargs -E x rm <<< /", nil},
		{"xargs rm <<< \"'a\"", nil}, // unmatched quote: xargs fails
	}
	for _, c := range cases {
		s, err := Parse(c.src, Options{})
		require.NoError(t, err, c.src)
		var rm *Command
		for i := range s.Commands {
			if s.Commands[i].Program == "rm" {
				rm = &s.Commands[i]
			}
		}
		require.NotNil(t, rm, c.src)
		var got []string
		for _, a := range rm.Args {
			got = append(got, a.Value)
		}
		if c.args == nil {
			assert.NotContains(t, got, "/", c.src)
			assert.LessOrEqual(t, len(got), 1, "%q: %q", c.src, got)
			continue
		}
		assert.Equal(t, c.args, got, c.src)
	}
}
