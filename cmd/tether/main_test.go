package main

import (
	"os"
	"regexp"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets testscript run this binary as "tether" inside scripts.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"tether": func() { os.Exit(run(os.Args[1:])) },
	})
}

// TestScripts runs the CLI scripts in testdata/script.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("NO_COLOR", "1")
			// Decisions and mandates go to the script's own state dir,
			// never the machine's /var/lib/tether (scripts may override).
			env.Setenv("TETHER_STATE_DIR", env.WorkDir+"/.tether-state")
			return nil
		},
		Condition: scriptCondition,
		Cmds:      map[string]func(ts *testscript.TestScript, neg bool, args []string){"sha2env": sha2env},
	})
}

var (
	pendingSHA = regexp.MustCompile(`pending[ _]sha256"?:? "?([0-9a-f]{64})`)
	versionSHA = regexp.MustCompile(`"sha256": "([0-9a-f]{64})"`)
)

// sha2env VAR sets $VAR to the pending SHA-256 that the previous command
// printed (`tether mandate diff`, as text or JSON; or a version's from
// `show --json`), as a reviewer copies it.
func sha2env(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: sha2env VAR")
	}
	out := ts.ReadFile("stdout")
	m := pendingSHA.FindStringSubmatch(out)
	if m == nil {
		m = versionSHA.FindStringSubmatch(out) // `tether mandate show --json`
	}
	if m == nil {
		ts.Fatalf("no pending sha256 in the last command's stdout")
	}
	ts.Setenv(args[0], m[1])
}
