package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

func BenchmarkRunTrue(b *testing.B) {
	r := newTestRunner(b)
	for i := 0; i < b.N; i++ {
		res, err := r.Run(context.Background(), Config{}, Command{Args: []string{"/bin/true"}})
		if err != nil || res.ExitCode != 0 {
			b.Fatal(err, res)
		}
	}
}

// BenchmarkRunTrueWorkspace: a one-shot /bin/true with an empty
// workspace, as a project and as a home directory, where every missing
// per-user entry of the protected list is reserved and released each run,
// and a home holding the caches of go, pip, npm, cargo, maven and gradle
// (each frozen, as the dot-entries holding them).
func BenchmarkRunTrueWorkspace(b *testing.B) {
	caches := []string{".cache/pip", ".cache/go-build", ".npm/_cacache", ".cargo/registry", ".cargo/bin",
		".m2/repository", ".gradle/caches", "go/pkg/mod", "go/bin", ".config/git", ".local/bin"}
	for _, name := range []string{"project", "home", "home-caches"} {
		b.Run(name, func(b *testing.B) {
			r := newTestRunner(b)
			ws := b.TempDir()
			if name == "home-caches" {
				for _, c := range caches {
					if err := os.MkdirAll(filepath.Join(ws, c), 0o755); err != nil {
						b.Fatal(err)
					}
				}
				chownWorkspace(b, ws)
			}
			if err := os.Lchown(ws, wsOwner, wsOwner); err != nil {
				b.Fatal(err)
			}
			if name != "project" {
				b.Setenv("HOME", ws)
			}
			for b.Loop() {
				res, err := r.Run(context.Background(), Config{Workspace: ws}, Command{Args: []string{"/bin/true"}})
				if err != nil || res.ExitCode != 0 {
					b.Fatal(err, res)
				}
			}
		})
	}
}
