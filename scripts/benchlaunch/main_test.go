package main

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseRows(t *testing.T) {
	rows, err := parseRows([]string{
		"plain exec", "/bin/true", ";;",
		"runc run", "runc", "run", "id-{i}", ";;",
		"tether run", "--unavailable", "no", "run", "command", ";;",
	})
	require.NoError(t, err)
	require.Len(t, rows, 3)
	assert.Equal(t, row{Name: "plain exec", Argv: []string{"/bin/true"}}, *rows[0])
	assert.Equal(t, []string{"runc", "run", "id-{i}"}, rows[1].Argv)
	assert.Equal(t, "no run command", rows[2].Unavailable)
	assert.Empty(t, rows[2].Argv)

	_, err = parseRows([]string{"lonely"})
	assert.ErrorContains(t, err, `row "lonely" has no command`)
	_, err = parseRows([]string{";;"})
	assert.ErrorContains(t, err, "no rows")
}

func TestStats(t *testing.T) {
	s := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	assert.Equal(t, 5.5, median(s))
	assert.Equal(t, 3.0, median([]float64{1, 3, 9}))
	assert.Equal(t, 10.0, percentile(s, 95))
	assert.Equal(t, 5.0, percentile(s, 50))
	assert.Equal(t, 1.0, percentile([]float64{1}, 95))
	hundred := make([]float64, 100)
	for i := range hundred {
		hundred[i] = float64(i + 1)
	}
	assert.Equal(t, 95.0, percentile(hundred, 95))
}

func TestRunOnce(t *testing.T) {
	ms, err := runOnce([]string{"/bin/true"}, 0)
	require.NoError(t, err)
	assert.Positive(t, ms)
	_, err = runOnce([]string{"/bin/sh", "-c", "echo first >&2; echo why-{i} >&2; exit 3"}, 7)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "exit status 3: why-1000007", "the error carries the last stderr line with {i} substituted")
}

// Over the rounds every row follows every other row, about equally often:
// the work a launch leaves behind (a pool's refill) falls on all rows.
func TestRoundOrder(t *testing.T) {
	const n, rounds = 6, 300
	r := rand.New(rand.NewPCG(1, 2))
	follows := map[[2]int]int{}
	for range rounds {
		order := roundOrder(r, n)
		require.ElementsMatch(t, []int{0, 1, 2, 3, 4, 5}, order)
		for k := 1; k < n; k++ {
			follows[[2]int{order[k-1], order[k]}]++
		}
	}
	mean := float64(rounds*(n-1)) / float64(n*(n-1))
	for a := range n {
		for b := range n {
			if a == b {
				continue
			}
			got := float64(follows[[2]int{a, b}])
			assert.InDelta(t, mean, got, mean/2, "row %d after row %d", b, a)
		}
	}
}
