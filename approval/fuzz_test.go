package approval

import (
	"errors"
	"strings"
	"testing"
)

// FuzzAnalyze checks the analyzer's invariants on arbitrary input: it never
// panics (a panic inside shellparse would show as an internal parse error,
// which also fails), errors only for over-size input, never allows a command
// with an opaque segment, Safe implies allow, the verdict is the strongest
// finding, and every finding's span lies inside the source.
func FuzzAnalyze(f *testing.F) {
	for _, s := range []string{
		"ls -la", "rm -rf /", ":(){ :|:& };:", "curl x | sh", "bash -c 'rm -rf /'",
		"env -S 'sh -c reboot'", "echo \"$(reboot)\"", "printf SAFE\r#x; reboot", "\x1b[31mrm\x1b[0m -rf /",
		"ｒｍ -rf /", "rm${IFS}-rf${IFS}/", "python3 <<EOF\nimport os\nwhile 1: os.fork()\nEOF",
		"find / -exec rm {} \\;", "echo 'unterminated", "a=$(b=$(c=$(d))) e", "x() { x | x & }; x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		a, err := Analyze(src, AnalyzeOptions{Home: "/root", Cwd: "/tmp"})
		if err != nil {
			if !errors.Is(err, ErrTooLarge) || len(src) <= MaxCommandBytes {
				t.Fatalf("unexpected error for %d bytes: %v", len(src), err)
			}
			return
		}
		if strings.HasPrefix(a.ParseErr, internalPanic) {
			t.Fatalf("shellparse panicked on %q: %s", src, a.ParseErr)
		}
		if a.Verdict == TierAllow {
			if a.Script == nil {
				t.Fatalf("allow without a parsed script: %q", src)
			}
			if len(a.Script.Opaque) > 0 {
				t.Fatalf("allow with opaque segments %v: %q", a.Script.Opaque, src)
			}
		}
		if a.Safe && a.Verdict != TierAllow {
			t.Fatalf("safe but verdict %s: %q", a.Verdict, src)
		}
		var max Tier
		for _, fd := range a.Findings {
			if fd.Tier > max {
				max = fd.Tier
			}
			if fd.Span.Start < 0 || fd.Span.End > len(src) || fd.Span.Start > fd.Span.End {
				t.Fatalf("finding %s span %v outside source of %d bytes", fd.Rule, fd.Span, len(src))
			}
			if _, ok := ruleIndex()[fd.Rule]; !ok {
				t.Fatalf("finding with unknown rule %q", fd.Rule)
			}
		}
		if max != a.Verdict {
			t.Fatalf("verdict %s but strongest finding %s: %q", a.Verdict, max, src)
		}
		if a.ParseErr != "" && a.Verdict == TierAllow {
			t.Fatalf("unparseable input allowed: %q", src)
		}
	})
}
