package sandbox

import (
	"context"
	"os"
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
// per-user entry of the protected list is reserved and released each run.
func BenchmarkRunTrueWorkspace(b *testing.B) {
	for _, home := range []bool{false, true} {
		name := "project"
		if home {
			name = "home"
		}
		b.Run(name, func(b *testing.B) {
			r := newTestRunner(b)
			ws := b.TempDir()
			if err := os.Lchown(ws, wsOwner, wsOwner); err != nil {
				b.Fatal(err)
			}
			if home {
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
