package runner

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tether-dev/tether/internal/protect"
)

func TestResolveIn(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(root, "src/pkg"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".git/hooks"), 0o755))
	require.NoError(t, os.Symlink("src/pkg", filepath.Join(root, "inner")))
	require.NoError(t, os.Symlink(outside, filepath.Join(root, "out")))
	require.NoError(t, os.Symlink("../../..", filepath.Join(root, "src/pkg/up")))
	require.NoError(t, os.Symlink(".git/hooks", filepath.Join(root, "hooks")))
	require.NoError(t, os.Symlink(filepath.Join(root, "src"), filepath.Join(root, "abs")))
	require.NoError(t, os.Symlink("loop", filepath.Join(root, "loop")))
	tests := []struct {
		in, want string
		escape   bool
	}{
		{"a.txt", "a.txt", false},
		{"src/../a.txt", "a.txt", false},
		{"inner/x.go", "src/pkg/x.go", false},
		{"abs/pkg", "src/pkg", false},
		{filepath.Join(root, "src"), "src", false},
		{".", ".", false},
		{"hooks/pre-commit", ".git/hooks/pre-commit", false},
		{"../x", "", true},
		{"src/../../x", "", true},
		{"/etc/passwd", "", true},
		{"out/secret", "", true},
		{"src/pkg/up/x", "", true},
		{"new/dir/file", "new/dir/file", false},
	}
	for _, tc := range tests {
		got, err := resolveIn(root, tc.in)
		if tc.escape {
			assert.ErrorIs(t, err, ErrPathEscape, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
	_, err = resolveIn(root, "loop/x")
	assert.Error(t, err)
}

func TestProtectedSetAndHidden(t *testing.T) {
	t.Parallel()
	state := "/w/.state"
	set := protect.Set{Root: "/w", Extra: []string{state, "/w/proj/.cfg"}}
	for _, p := range []string{".git/hooks/pre-commit", ".git/config", ".git", "sub/.git/hooks/x", ".git/commondir", ".git/info/attributes", ".git/objects/info/alternates", ".bashrc", "home/.zshrc", ".profile", ".config/fish/config.fish", ".envrc", ".state/audit.jsonl", ".state"} {
		assert.NotEmpty(t, set.Reason(p), p)
	}
	for _, p := range []string{"src/main.go", ".github/workflows/ci.yml", ".git-blame-ignore", "bashrc", ".gitignore", ".stateful", ".git/objects/ab/cdef", ".git/refs/heads/main"} {
		assert.Empty(t, set.Reason(p), p)
	}
	assert.NotEmpty(t, set.Reason("proj"), "a directory holding tether state is not written")
	assert.Empty(t, hiddenReason("/w", ".", []string{state, ""}), "but may be searched")
	assert.NotEmpty(t, hiddenReason("/w", ".state/audit.jsonl", []string{state}))
	assert.Empty(t, hiddenReason("/w", ".bashrc", []string{state}), "protected from writes, not hidden")
}
