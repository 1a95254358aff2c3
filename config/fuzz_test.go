package config

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// FuzzParse: any input either loads into a complete config or fails with
// an *InvalidError; it never panics and never returns both or neither.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"example.yaml", "default.yaml"} {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(data))
	}
	f.Add("profiles:\n  default:\n    approvals: {mode: smart}\n")
	f.Add("profiles: {a: {terminal: {limits: {memory: 1e99G}}}}\n")
	f.Add("profiles:\n  default: &x {}\n  b: *x\n")
	f.Fuzz(func(t *testing.T, text string) {
		cfg, err := Parse("fuzz.yaml", []byte(text), "/base")
		if (cfg == nil) == (err == nil) {
			t.Fatalf("cfg %v, err %v", cfg, err)
		}
		if err != nil {
			var ie *InvalidError
			if !errors.As(err, &ie) || len(ie.Problems) == 0 {
				t.Fatalf("error %T %v is not an *InvalidError with problems", err, err)
			}
			return
		}
		for name, p := range cfg.Profiles {
			if p == nil || p.Name != name || p.Terminal.PersistCwd == nil || p.Terminal.LifetimeSeconds <= 0 ||
				p.Approvals.Timeout <= 0 || p.Approvals.Mode == "" || p.Terminal.Backend == "" {
				t.Fatalf("profile %q incomplete: %+v", name, p)
			}
		}
		if _, ok := cfg.Profile(""); !ok {
			t.Fatalf("default profile %q missing", cfg.DefaultProfile)
		}
	})
}

// FuzzEnvFile: the env-file parser never panics and never echoes a
// malformed line (it may hold a secret) in its error.
func FuzzEnvFile(f *testing.F) {
	f.Add("A=1\nexport B='two'\n# c\n")
	f.Add("not a line hunter2\n")
	f.Fuzz(func(t *testing.T, text string) {
		out := map[string]string{}
		err := parseEnvFile("f.env", []byte(text), out)
		if err != nil && len(text) > 0 {
			for _, line := range strings.Split(text, "\n") {
				l := strings.TrimSpace(line)
				if len(l) > 12 && !strings.Contains("f.env", l) && strings.Contains(err.Error(), l) {
					t.Fatalf("error %q echoes input line %q", err, l)
				}
			}
		}
	})
}
