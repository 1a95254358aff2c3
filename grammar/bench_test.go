package grammar

import "testing"

// BenchmarkParse measures reading typical argument lists.
func BenchmarkParse(b *testing.B) {
	for _, c := range []struct {
		prog string
		args []string
	}{
		{"git", []string{"status"}},
		{"git", []string{"commit", "-m", "fix: handle empty input"}},
		{"python3", []string{"-m", "pytest", "-q", "tests/"}},
		{"rm", []string{"-rf", "build"}},
	} {
		b.Run(c.prog+"_"+c.args[0], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Parse(c.prog, c.args)
			}
		})
	}
}
