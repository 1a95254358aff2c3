package approval

import (
	"testing"

	"github.com/tether-dev/tether/shellparse"
)

// typicalCommands are one-line commands an agent runs all day.
var typicalCommands = []string{
	"git status",
	"ls -la",
	"go test ./...",
	"grep -rn TODO src",
	"npm run build",
	"cat README.md | head -20",
	"git diff --stat HEAD~1",
	"find . -name '*.go' -newer go.mod",
	"python3 -m pytest -q tests/",
	"git commit -m \"fix: handle empty input\"",
}

// BenchmarkCheck measures Analyze on typical agent commands, one
// sub-benchmark each; compare with BenchmarkParseOnly to see how much of the
// time is the parser.
func BenchmarkCheck(b *testing.B) {
	opts := AnalyzeOptions{Home: "/home/alice", Cwd: "/home/alice/src"}
	for _, cmd := range typicalCommands {
		b.Run(cmd, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Analyze(cmd, opts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkParseOnly measures shellparse.Parse alone on the same commands.
func BenchmarkParseOnly(b *testing.B) {
	for _, cmd := range typicalCommands {
		b.Run(cmd, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := shellparse.Parse(cmd, shellparse.Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
