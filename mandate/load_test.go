package mandate

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const validText = `mandate: 1
job: j
tools:
  - terminal  # seen 2x
paths:
  - src/**  # seen 3x
commands:
  - git status  # seen 2x
  - "=bash -c \"$X\""  # seen 1x
hosts:
  - "*.github.com"  # seen 1x
max_writes_per_run: 2
`

func TestLoadValid(t *testing.T) {
	m, err := Load([]byte(validText))
	require.NoError(t, err)
	assert.Equal(t, "j", m.Job)
	assert.Equal(t, []Rule{{"terminal", 2}}, m.Tools)
	assert.Equal(t, []Rule{{"src/**", 3}}, m.Paths)
	assert.Equal(t, []Rule{{`=bash -c "$X"`, 1}, {"git status", 2}}, m.Commands)
	assert.Equal(t, []Rule{{"*.github.com", 1}}, m.Hosts)
	assert.Equal(t, 2, m.MaxWritesPerRun)
}

func TestLoadRejects(t *testing.T) {
	base := "mandate: 1\njob: j\nmax_writes_per_run: 0\n"
	tests := map[string]string{
		"unknown key":          base + "extra: 1\n",
		"duplicate key":        base + "tools: [a]\ntools: [b]\n",
		"duplicate job":        base + "job: k\n",
		"wrong format version": "mandate: 2\njob: j\nmax_writes_per_run: 0\n",
		"format as string":     "mandate: \"1\"\njob: j\nmax_writes_per_run: 0\n",
		"missing max writes":   "mandate: 1\njob: j\n",
		"missing job":          "mandate: 1\nmax_writes_per_run: 0\n",
		"tools is a string":    base + "tools: terminal\n",
		"tools is a mapping":   base + "tools: {a: b}\n",
		"rule is a number":     base + "paths: [1]\n",
		"rule is a mapping":    base + "commands:\n  - {a: b}\n",
		"rule is null":         base + "tools: [~]\n",
		"negative writes":      "mandate: 1\njob: j\nmax_writes_per_run: -1\n",
		"float writes":         "mandate: 1\njob: j\nmax_writes_per_run: 1.5\n",
		"hex writes":           "mandate: 1\njob: j\nmax_writes_per_run: 0x10\n",
		"alias":                "mandate: 1\njob: j\nmax_writes_per_run: 0\ntools: &a [x]\npaths: *a\n",
		"custom tag":           base + "tools: [!foo x]\n",
		"two documents":        base + "---\n" + base,
		"bad job name":         "mandate: 1\njob: \"a b\"\nmax_writes_per_run: 0\n",
		"command after flag":   base + "commands: [\"git -v status\"]\n",
		"env without colon":    base + "commands: [\"env X make\"]\n",
		"empty exact":          base + "commands: [\"=\"]\n",
		"double space":         base + "commands: [\"git  status\"]\n",
		"host with path":       base + "hosts: [\"a.com/x\"]\n",
		"host wildcard middle": base + "hosts: [\"a.*.com\"]\n",
		"tool with space":      base + "tools: [\"a b\"]\n",
		"not a mapping":        "- a\n",
		"merge key":            "mandate: 1\njob: j\nmax_writes_per_run: 0\n<<: {tools: [x]}\n",
	}
	for name, text := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := Load([]byte(text))
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrInvalidMandate)
		})
	}
}

func TestYAMLScalarRoundTrip(t *testing.T) {
	for _, v := range []string{"plain", "true", "1", ".5", "*.x.com", "a: b", "a #b", "-*", "x\ny", "tab\there", "quote\"d", `back\slash`,
		"\u2028", "\x00", "ünïcode", "~", "null", "@x", "a ", " a", "'s'", "[x]", "{x}", "%x", "!x", "&x", "|x", ">x", "?x", "`x`"} {
		text := "mandate: 1\njob: j\ntools: []\npaths:\n  - " + yamlScalar(v) + "  # seen 1x\ncommands: []\nhosts: []\nmax_writes_per_run: 0\n"
		m, err := Load([]byte(text))
		if strings.ContainsRune(v, 0) {
			require.Error(t, err, "NUL path must be refused")
			continue
		}
		require.NoError(t, err, "%q -> %s", v, yamlScalar(v))
		require.Len(t, m.Paths, 1)
		assert.Equal(t, v, m.Paths[0].Value)
	}
}

// FuzzLoadMandate: hostile YAML never panics, and never loads as a wider
// mandate than written — what loads re-serialises to text that loads to the
// same mandate, and that text's rules are exactly the loaded ones.
func FuzzLoadMandate(f *testing.F) {
	f.Add([]byte(validText))
	f.Add([]byte("mandate: 1\njob: j\nmax_writes_per_run: 0\n"))
	f.Add([]byte("mandate: 1\njob: j\nmax_writes_per_run: 0\ntools: &a [x]\npaths: *a\n"))
	f.Add([]byte("mandate: 1\njob: j\ncommands: [\"env A,B: make -*\", \"=x\\ny\"]\nmax_writes_per_run: 3\n"))
	f.Fuzz(func(t *testing.T, text []byte) {
		m, err := Load(text)
		if err != nil {
			require.ErrorIs(t, err, ErrInvalidMandate)
			return
		}
		out := m.Marshal()
		m2, err := Load(out)
		require.NoError(t, err, "re-serialised text must load:\n%s", out)
		require.Equal(t, m, m2, "load(marshal(load(x))) must equal load(x)")
		require.Equal(t, string(out), string(m2.Marshal()))
		// Every loaded command rule parses to itself: nothing is read
		// more broadly than its canonical text says.
		for _, r := range m.Commands {
			cr, err := parseCommandRule(r.Value)
			require.NoError(t, err)
			require.Equal(t, r.Value, cr.String())
		}
	})
}

// FuzzCommandRule: a command rule that parses has one canonical text, and
// that text parses back to the same rule.
func FuzzCommandRule(f *testing.F) {
	for _, s := range []string{"git status", "env A,B: make test -*", "=bash -c \"$X\"", "go test -race -v", "git -v status", "env X make", "sudo make -j"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := parseCommandRule(s)
		if err != nil {
			return
		}
		c := r.String()
		r2, err := parseCommandRule(c)
		require.NoError(t, err, "canonical text %q of %q must parse", c, s)
		require.Equal(t, r, r2)
		require.Equal(t, c, r2.String())
	})
}
