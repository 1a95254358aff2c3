package oracle

import (
	"regexp"
	"slices"
)

// The driver runs every command with its variables unset, so by itself the
// oracle never sees the set side of a choice expansion: "${X:+sh} -c reboot"
// runs nothing there, and reboots wherever X is set. SetVariants names the
// other states, which the static side walks too (package shellparse: set,
// unset, empty for up to three variables).

// choiceExp matches a parameter expansion whose result depends on whether
// the variable is set or empty: ${X:-w} ${X-w} ${X:=w} ${X=w} ${X:+w}
// ${X+w} ${X:?w} ${X?w}. It reads the raw text, so it also finds them in
// the script of a nested shell (bash -c '…', su -c "…"), which is exported
// the same variables.
var choiceExp = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*):?[-+=?]`)

// SetValue is the benign value a variable is set to: a name that exists
// nowhere, so it is neither a target nor a program.
const SetValue = "x"

// maxSetNames bounds the variables given every state (3^n - 1 cases
// each): beyond it, the others stay unset.
const maxSetNames = 2

// shellOwned are variables the shell (or the driver) gives a meaning of its
// own, which a benign value would not be: bash reads them to split words,
// find programs or change its own mode.
var shellOwned = []string{"HOME", "PATH", "IFS", "PWD", "OLDPWD", "CDPATH", "GLOBIGNORE", "SHELLOPTS", "BASHOPTS",
	"BASH_ENV", "ENV", "PS4", "PROMPT_COMMAND", "SHLVL", "LANG", "UID", "EUID", "PPID", "RANDOM", "SRANDOM", "SECONDS",
	"LINENO", "BASHPID", "BASH_XTRACEFD", "TMPDIR", "TIMEFORMAT", "HISTFILE", "ORACLE_TIMEOUT", "ORACLE_PIDS"}

// SetVariants returns the environments besides "all unset" that cmd should
// also run with: each combination of set (to SetValue), set and empty, and
// unset for the first maxSetNames variables its choice expansions name.
// None when it has no such expansion.
func SetVariants(cmd string) [][]string {
	var names []string
	for _, m := range choiceExp.FindAllStringSubmatch(cmd, -1) {
		if n := m[1]; !slices.Contains(shellOwned, n) && !slices.Contains(names, n) && len(names) < maxSetNames {
			names = append(names, n)
		}
	}
	n := 1
	for range names {
		n *= 3
	}
	var out [][]string
	for k := 1; k < n; k++ { // k = 0 is every name unset
		var env []string
		for i, k := 0, k; i < len(names); i, k = i+1, k/3 {
			switch k % 3 {
			case 1:
				env = append(env, names[i]+"="+SetValue)
			case 2:
				env = append(env, names[i]+"=")
			}
		}
		out = append(out, env)
	}
	return out
}

// envName matches NAME=VALUE with a variable name bash can export.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

func validAssign(e string) bool { return envName.MatchString(e) }
