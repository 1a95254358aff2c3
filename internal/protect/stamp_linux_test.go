package protect

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestKernelRelease(t *testing.T) {
	for _, c := range []struct {
		in           string
		major, minor int
		ok           bool
	}{
		{"6.18.44-fc-v1252", 6, 18, true},
		{"6.13", 6, 13, true},
		{"6.13-rc1", 6, 13, true},
		{"5.15.0-91-generic", 5, 15, true},
		{"", 0, 0, false},
		{"6", 0, 0, false},
		{"x.y", 0, 0, false},
	} {
		major, minor, ok := kernelRelease(c.in)
		assert.Equal(t, c.ok, ok, c.in)
		if c.ok {
			assert.Equal(t, []int{c.major, c.minor}, []int{major, minor}, c.in)
		}
	}
}
