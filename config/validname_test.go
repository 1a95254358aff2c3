package config

import (
	"regexp"
	"strings"
	"testing"
)

// The grammar ValidName promised as a regexp before it became a loop.
var validNameRef = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

func TestValidNameMatchesItsGrammar(t *testing.T) {
	cases := map[string]bool{
		"": false, "a": true, "Z9": true, "0": true, "web-1.2_x": true,
		"-a": false, ".a": false, "_a": false, "a/b": false, "a b": false,
		"a\x00": false, "ä": false, "a\n": false, "..": false,
		strings.Repeat("a", 64): true, strings.Repeat("a", 65): false,
		"a" + strings.Repeat("-", 63): true,
	}
	for name, want := range cases {
		if got := ValidName(name); got != want {
			t.Errorf("ValidName(%q) = %v, want %v", name, got, want)
		}
	}
	// Every string of up to two bytes from an alphabet with each class's
	// edges and its neighbours.
	alpha := "09azAZ/:@[`{_.-+ \x00\xff"
	var names []string
	for i := 0; i < len(alpha); i++ {
		names = append(names, alpha[i:i+1])
		for j := 0; j < len(alpha); j++ {
			names = append(names, alpha[i:i+1]+alpha[j:j+1])
		}
	}
	for _, name := range names {
		if got, want := ValidName(name), validNameRef.MatchString(name); got != want {
			t.Errorf("ValidName(%q) = %v, the grammar says %v", name, got, want)
		}
	}
}

func FuzzValidName(f *testing.F) {
	for _, s := range []string{"a", "-a", "web.1", strings.Repeat("b", 64), strings.Repeat("b", 65)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if got, want := ValidName(name), validNameRef.MatchString(name); got != want {
			t.Fatalf("ValidName(%q) = %v, the grammar says %v", name, got, want)
		}
	})
}
