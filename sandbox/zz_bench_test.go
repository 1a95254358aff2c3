package sandbox

import (
	"context"
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
