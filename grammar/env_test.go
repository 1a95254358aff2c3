package grammar

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSplitOptions(t *testing.T) {
	t.Parallel()
	cases := map[string][]string{
		"--to-command=reboot":                    {"--to-command=reboot"},
		"  -v   --checkpoint=1 ":                 {"-v", "--checkpoint=1"},
		`--checkpoint-action='exec=rm -rf ~' -v`: {"--checkpoint-action=exec=rm -rf ~", "-v"},
		`-x "a b" c\ d ''`:                       {"-x", "a b", "c d", ""},
		"":                                       nil,
	}
	for in, want := range cases {
		assert.Equal(t, want, SplitOptions(in), in)
	}
}

func TestOptionsVariables(t *testing.T) {
	t.Parallel()
	assert.True(t, EnvEffects("tar", "TAR_OPTIONS").Has(Options))
	assert.True(t, EnvEffects("gtar", "TAR_OPTIONS").Has(Options), "an alias reads it too")
	assert.False(t, EnvEffects("make", "TAR_OPTIONS").Has(Options), "make does not, the tar it runs does")
	assert.Equal(t, "tar", OptionsProgram("TAR_OPTIONS"))
	assert.Empty(t, OptionsProgram("GREP_OPTIONS"), "ignored by GNU grep since 3.6")
}

func TestEnvCommands(t *testing.T) {
	t.Parallel()
	assert.Equal(t, []string{"reboot f"}, EnvCommands("LESSOPEN", "|reboot %s"))
	assert.Equal(t, []string{"reboot f"}, EnvCommands("LESSOPEN", "||reboot %s"))
	assert.Equal(t, []string{"reboot f"}, EnvCommands("LESSOPEN", "|-reboot %s"))
	assert.Equal(t, []string{"reboot", "less"}, EnvCommands("GIT_CONFIG_PARAMETERS", `'core.fsmonitor'='reboot' 'core.pager=less'`))
	assert.Equal(t, []string{"vim"}, EnvCommands("EDITOR", "vim"))
}

func TestGitConfigCommands(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"[core]\n\tfsmonitor = reboot\n":                      "reboot\n",
		"[core] pager = \"rm -rf ~\" # comment\n":             "rm -rf ~\n",
		"[alias]\n\tx = !reboot\n\tst = status\n":             "reboot\ngit status\n",
		"[CORE]\n\tSSHCommand=ssh -i k\n":                     "ssh -i k\n",
		"[diff \"x\"]\n\ttextconv = \"a \\\"b\\\"\"\n":        "a \"b\"\n",
		"[user]\n\tname = a\n\temail = b\n; pager = reboot\n": "",
	}
	for in, want := range cases {
		assert.Equal(t, want, GitConfigCommands(in), in)
	}
}
