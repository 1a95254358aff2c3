package config

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkFilesMatch is what the path rules cost a file tool call: the
// default secret list and two user globs against a written and a
// resolved name.
func BenchmarkFilesMatch(b *testing.B) {
	f := Files{Deny: []string{"private/**"}, Ask: []string{"*.sqlite"}, SecretFiles: FileAsk}
	for b.Loop() {
		if _, ok := f.Match("src/pkg/server/handler.go", "src/pkg/server/handler.go"); ok {
			b.Fatal("matched")
		}
	}
}

// BenchmarkLayerProject is what the project file costs a call: absent
// (one failed open) and present (read, parse, check, copy).
func BenchmarkLayerProject(b *testing.B) {
	cfg, err := Parse("user.yaml", []byte(projectUser), "/")
	if err != nil {
		b.Fatal(err)
	}
	p := cfg.Profiles["default"]
	ws := b.TempDir()
	b.Run("absent", func(b *testing.B) {
		for b.Loop() {
			if _, err := LayerProject(p, ws); err != nil {
				b.Fatal(err)
			}
		}
	})
	if err := os.WriteFile(filepath.Join(ws, ProjectFile), []byte("approvals: {mode: manual, deny: [\"git push*\"]}\nfiles: {deny: [secrets]}\nterminal: {limits: {memory: 256MiB}}\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	b.Run("present", func(b *testing.B) {
		for b.Loop() {
			if _, err := LayerProject(p, ws); err != nil {
				b.Fatal(err)
			}
		}
	})
}
