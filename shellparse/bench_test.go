package shellparse

import "testing"

// typicalCommands are one-line commands of the kind coding agents run most.
var typicalCommands = []string{
	"git status",
	"ls -la src/",
	"go test ./...",
	"grep -rn foo .",
	"cat README.md",
	"git diff --stat HEAD~1",
	"npm run build && npm test",
	"find . -name '*.go' | xargs wc -l",
}

func BenchmarkParse(b *testing.B) {
	for _, src := range typicalCommands {
		b.Run(src, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Parse(src, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPathological measures deeply nested input near the size limit:
// the bounds must keep each parse in the milliseconds.
func BenchmarkPathological(b *testing.B) {
	for _, src := range pathological() {
		b.Run(src[:12], func(b *testing.B) {
			for b.Loop() {
				_, _ = Parse(src, Options{})
			}
		})
	}
}

func BenchmarkManyFunctions(b *testing.B) {
	src := manyFunctions()
	for b.Loop() {
		_, _ = Parse(src, Options{})
	}
}
