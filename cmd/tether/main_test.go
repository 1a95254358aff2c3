package main

import (
	"os"
	"path/filepath"
	"strings"
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
			// Every sandbox's root is a user namespace's id, which must
			// traverse to the roots under a state root in $WORK: the
			// directories down to it are made traversable (0711), as a
			// real state root's parents are.
			for d := env.WorkDir; d != filepath.Dir(d) && strings.HasPrefix(d, os.TempDir()+"/"); d = filepath.Dir(d) {
				if err := os.Chmod(d, 0o711); err != nil {
					return err
				}
			}
			return nil
		},
		Condition: scriptCondition,
	})
}
