package runner

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/tether-dev/tether/config"
)

func BenchmarkValidate(b *testing.B) {
	vis := Builtins().Visible(nil)
	raw := RawCall{ID: "1", Name: "terminal", Arguments: json.RawMessage(`"{\"command\":\"go test ./...\",\"timeout\":\"120\"}"`)}
	for b.Loop() {
		if _, bad := Validate(vis, raw); bad != nil {
			b.Fatal(bad.Message)
		}
	}
}

func BenchmarkPlan(b *testing.B) {
	var acc []Access
	for i := 0; i < 64; i++ {
		k := KindRead
		if i%8 == 0 {
			k = KindWrite
		}
		acc = append(acc, Access{Kind: k, Paths: []string{fmt.Sprintf("/w/dir%d/file%d", i%5, i)}})
	}
	for b.Loop() {
		Plan(acc)
	}
}

// BenchmarkExecuteFileBatch runs a batch of 8 file calls (reads, a write,
// a patch, a search) through the whole pipeline, without a sandbox.
func BenchmarkExecuteFileBatch(b *testing.B) {
	dir := b.TempDir()
	ws := filepath.Join(dir, "ws")
	if err := os.MkdirAll(filepath.Join(ws, "src"), 0o755); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		_ = os.WriteFile(filepath.Join(ws, "src", fmt.Sprintf("f%d.go", i)), []byte("package src\n// TODO\n"), 0o644)
	}
	cfg := benchConfig(b, dir, ws)
	r := &Runner{Config: cfg}
	calls := []RawCall{
		rawCall("1", "read_file", args("path", "src/f1.go")),
		rawCall("2", "read_file", args("path", "src/f2.go")),
		rawCall("3", "write_file", args("path", "out/a.txt", "content", "hello\n")),
		rawCall("4", "patch", args("path", "out/a.txt", "old_string", "hello", "new_string", "bye")),
		rawCall("5", "search_files", args("pattern", "TODO", "path", "src")),
		rawCall("6", "read_file", args("path", "src/f3.go")),
		rawCall("7", "read_file", args("path", "src/f4.go")),
		rawCall("8", "read_file", args("path", "out/a.txt")),
	}
	for b.Loop() {
		out := r.Execute(b.Context(), Batch{Calls: calls}, nil)
		for _, res := range out.Results {
			if res.Class != ClassSucceeded {
				b.Fatal(res.Message)
			}
		}
	}
}

func benchConfig(b *testing.B, dir, ws string) *config.Config {
	b.Helper()
	y := fmt.Sprintf("state_dir: %s\nprofiles:\n  default:\n    terminal:\n      cwd: %s\n", filepath.Join(dir, "state"), ws)
	cfg, err := config.Parse("bench.yaml", []byte(y), dir)
	if err != nil {
		b.Fatal(err)
	}
	return cfg
}

// BenchmarkWriteFileInRepo is one write_file call three directories deep
// in a repository whose config names a hooks directory, an included file
// and an alias's program: the protected-path checks read that config on
// every call (protect.NamedReason).
func BenchmarkWriteFileInRepo(b *testing.B) {
	dir := b.TempDir()
	ws := filepath.Join(dir, "ws")
	for _, d := range []string{"src/a/b", ".git/refs/heads", "tools"} {
		if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
			b.Fatal(err)
		}
	}
	files := map[string]string{
		".git/HEAD":              "ref: refs/heads/main\n",
		".git/config":            "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\thooksPath = .husky\n[include]\n\tpath = ../tools/shared.gitconfig\n[alias]\n\tlint = !./scripts/lint\n\tst = status\n",
		"tools/shared.gitconfig": "[color]\n\tui = auto\n",
	}
	for p, c := range files {
		if err := os.WriteFile(filepath.Join(ws, p), []byte(c), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	r := &Runner{Config: benchConfig(b, dir, ws)}
	calls := []RawCall{rawCall("1", "write_file", args("path", "src/a/b/out.txt", "content", "hello\n"))}
	for b.Loop() {
		out := r.Execute(b.Context(), Batch{Calls: calls}, nil)
		if res := out.Results[0]; res.Class != ClassSucceeded {
			b.Fatal(res.Message)
		}
	}
}
