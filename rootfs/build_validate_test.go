package rootfs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeRoot makes a minimal valid root in a temp dir: a shell-script /bin/sh
// (not ELF, so no loader is needed) and the required mount points.
func fakeRoot(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{"bin", "proc", "sys", "dev", "tmp"} {
		require.NoError(t, os.Mkdir(filepath.Join(dir, d), 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bin", "sh"), []byte("#!/bin/true\n"), 0o755))
	return dir
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	data, err := os.ReadFile(from)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Dir(to), 0o755))
	require.NoError(t, os.WriteFile(to, data, mode))
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		modify func(t *testing.T, dir string) string // returns the dir to validate
		extra  []string
		want   []string // substrings of the error; nil means valid
	}{
		{name: "valid", modify: func(t *testing.T, dir string) string { return dir }},
		{
			name:   "missing dir",
			modify: func(t *testing.T, dir string) string { return filepath.Join(dir, "nope") },
			want:   []string{"no such file or directory"},
		},
		{
			name: "not a directory",
			modify: func(t *testing.T, dir string) string {
				f := filepath.Join(dir, "file")
				require.NoError(t, os.WriteFile(f, nil, 0o644))
				return f
			},
			want: []string{"not a directory"},
		},
		{
			name: "missing /bin/sh",
			modify: func(t *testing.T, dir string) string {
				require.NoError(t, os.Remove(filepath.Join(dir, "bin", "sh")))
				return dir
			},
			want: []string{"missing /bin/sh"},
		},
		{
			name: "/bin/sh not executable",
			modify: func(t *testing.T, dir string) string {
				require.NoError(t, os.Chmod(filepath.Join(dir, "bin", "sh"), 0o644))
				return dir
			},
			want: []string{"/bin/sh is not executable"},
		},
		{
			name: "/bin/sh is a directory",
			modify: func(t *testing.T, dir string) string {
				sh := filepath.Join(dir, "bin", "sh")
				require.NoError(t, os.Remove(sh))
				require.NoError(t, os.Mkdir(sh, 0o755))
				return dir
			},
			want: []string{"/bin/sh is not a regular file"},
		},
		{
			name: "absolute symlink resolved inside the root",
			modify: func(t *testing.T, dir string) string {
				sh := filepath.Join(dir, "bin", "sh")
				require.NoError(t, os.Rename(sh, filepath.Join(dir, "bin", "busybox")))
				require.NoError(t, os.Symlink("/bin/busybox", sh))
				return dir
			},
		},
		{
			// /usr/bin/env exists on the host but not in the root: the link
			// must not be followed out of the root.
			name: "absolute symlink to a host-only file",
			modify: func(t *testing.T, dir string) string {
				sh := filepath.Join(dir, "bin", "sh")
				require.NoError(t, os.Remove(sh))
				require.NoError(t, os.Symlink("/usr/bin/env", sh))
				return dir
			},
			want: []string{"missing /bin/sh"},
		},
		{
			name: "relative symlink climbing out of the root",
			modify: func(t *testing.T, dir string) string {
				sh := filepath.Join(dir, "bin", "sh")
				require.NoError(t, os.Remove(sh))
				require.NoError(t, os.Symlink("../../../../../../../usr/bin/env", sh))
				return dir
			},
			want: []string{"missing /bin/sh"},
		},
		{
			name: "merged /usr with a dynamic shell and its loader",
			modify: func(t *testing.T, dir string) string {
				require.NoError(t, os.RemoveAll(filepath.Join(dir, "bin")))
				require.NoError(t, os.Symlink("usr/bin", filepath.Join(dir, "bin")))
				copyFile(t, "/bin/dash", filepath.Join(dir, "usr", "bin", "dash"), 0o755)
				require.NoError(t, os.Symlink("dash", filepath.Join(dir, "usr", "bin", "sh")))
				interp, err := Interpreter("/bin/dash")
				require.NoError(t, err)
				require.NotEmpty(t, interp, "/bin/dash is expected to be dynamically linked")
				copyFile(t, "/bin/dash", filepath.Join(dir, interp), 0o755) // any file stands in for the loader
				return dir
			},
		},
		{
			name: "dynamic shell without its loader",
			modify: func(t *testing.T, dir string) string {
				copyFile(t, "/bin/dash", filepath.Join(dir, "bin", "sh"), 0o755)
				return dir
			},
			want: []string{"/bin/sh needs the loader /lib64/ld-linux"},
		},
		{
			name: "missing mount points are all listed",
			modify: func(t *testing.T, dir string) string {
				require.NoError(t, os.Remove(filepath.Join(dir, "proc")))
				require.NoError(t, os.Remove(filepath.Join(dir, "dev")))
				return dir
			},
			want: []string{"missing mount point /proc", "missing mount point /dev"},
		},
		{
			name: "mount point is a file",
			modify: func(t *testing.T, dir string) string {
				require.NoError(t, os.Remove(filepath.Join(dir, "tmp")))
				require.NoError(t, os.WriteFile(filepath.Join(dir, "tmp"), nil, 0o644))
				return dir
			},
			want: []string{"mount point /tmp is not a directory"},
		},
		{
			name:   "caller's extra mount point",
			modify: func(t *testing.T, dir string) string { return dir },
			extra:  []string{"/workspace"},
			want:   []string{"missing mount point /workspace"},
		},
		{
			name: "several problems at once",
			modify: func(t *testing.T, dir string) string {
				require.NoError(t, os.Remove(filepath.Join(dir, "bin", "sh")))
				require.NoError(t, os.Remove(filepath.Join(dir, "sys")))
				return dir
			},
			want: []string{"missing /bin/sh; missing mount point /sys", "tether rootfs build"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := tt.modify(t, fakeRoot(t))
			err := Validate(dir, tt.extra...)
			if tt.want == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrUnusableRoot)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}
