package mandate

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestKernelPaths(t *testing.T) {
	trees, files, skipped := KernelPaths([]string{
		"src/**", "Makefile", ".", "../shared/**", "/etc/hosts", "**", "$HOME/.cache/**", "~/.npmrc", "a/../b",
	}, "/work/proj")
	assert.Equal(t, []string{"/work/proj/src", "/work/shared", "/work/proj"}, trees)
	assert.Equal(t, []string{"/work/proj/Makefile", "/work/proj", "/etc/hosts", "/work/proj/b"}, files)
	assert.Equal(t, []string{"$HOME/.cache/**", "~/.npmrc"}, skipped, "non-literal rules are left to the text gate")

	// Without a workspace, relative rules name nothing the kernel can hold.
	trees, files, skipped = KernelPaths([]string{"src/**", "/opt/x/**", "/**"}, "")
	assert.Equal(t, []string{"/opt/x", "/"}, trees)
	assert.Empty(t, files)
	assert.Equal(t, []string{"src/**"}, skipped)
}
