package runner

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPlan(t *testing.T) {
	t.Parallel()
	r := func(p ...string) Access { return Access{Kind: KindRead, Paths: p} }
	w := func(p ...string) Access { return Access{Kind: KindWrite, Paths: p} }
	term := Access{Kind: KindTerminal}
	tests := []struct {
		name  string
		calls []Access
		want  [][]int
	}{
		{"readers share a segment", []Access{r("/w/a"), r("/w/b"), r("/w/a")}, [][]int{{0, 1, 2}}},
		{"readers share a subtree", []Access{r("/w/src"), r("/w/src/x.go"), r("/w")}, [][]int{{0, 1, 2}}},
		{"writer after reader of same file", []Access{r("/w/a"), w("/w/a")}, [][]int{{0}, {1}}},
		{"reader after writer of same file", []Access{w("/w/a"), r("/w/a")}, [][]int{{0}, {1}}},
		{"writer under a read subtree", []Access{r("/w/src"), w("/w/src/x.go")}, [][]int{{0}, {1}}},
		{"reader of a parent of a written file", []Access{w("/w/src/x.go"), r("/w")}, [][]int{{0}, {1}}},
		{"disjoint writers and readers share", []Access{w("/w/a"), w("/w/b"), r("/w/c")}, [][]int{{0, 1, 2}}},
		{"two writers of one file", []Access{w("/w/a"), w("/w/a")}, [][]int{{0}, {1}}},
		{"prefix is not overlap", []Access{w("/w/ab"), r("/w/a")}, [][]int{{0, 1}}},
		{"terminal is a barrier", []Access{r("/w/a"), term, r("/w/b")}, [][]int{{0}, {1}, {2}}},
		{"unknown tools are barriers", []Access{r("/w/a"), {Kind: KindEffect}, {Kind: KindInteractive}, r("/w/a")}, [][]int{{0}, {1}, {2}, {3}}},
		{"read without known paths is a barrier", []Access{r("/w/a"), {Kind: KindRead}, r("/w/b")}, [][]int{{0}, {1}, {2}}},
		{"conflict starts a new segment that later calls join", []Access{r("/w/a"), w("/w/a"), r("/w/b"), r("/w/a")}, [][]int{{0}, {1, 2}, {3}}},
		{"empty batch", nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got [][]int
			for _, s := range Plan(tc.calls) {
				got = append(got, s.Calls)
			}
			assert.Equal(t, tc.want, got)
			// Every call appears exactly once, in call order.
			var flat []int
			for _, s := range got {
				flat = append(flat, s...)
			}
			for i := range flat {
				assert.Equal(t, i, flat[i])
			}
		})
	}
}
