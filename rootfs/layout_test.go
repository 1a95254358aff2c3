package rootfs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeHost builds a host tree with a merged /usr (Debian 12 style).
func fakeHost(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for _, d := range []string{"usr/bin", "usr/lib", "usr/sbin", "etc/ssl", "etc/alternatives", "opt"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	for link, target := range map[string]string{"bin": "usr/bin", "lib": "usr/lib", "sbin": "usr/sbin"} {
		require.NoError(t, os.Symlink(target, filepath.Join(root, link)))
	}
	for _, f := range []string{"etc/passwd", "etc/group", "etc/shadow", "etc/ld.so.cache"} {
		require.NoError(t, os.WriteFile(filepath.Join(root, f), []byte("x"), 0o644))
	}
	// /etc/localtime is an absolute link on Debian: bound as a file.
	require.NoError(t, os.Symlink("/usr/share/zoneinfo/UTC", filepath.Join(root, "etc/localtime")))
	return root
}

func TestHostLayoutMergedUsr(t *testing.T) {
	t.Parallel()
	l, err := hostLayoutAt(fakeHost(t))
	require.NoError(t, err)
	assert.Equal(t, KindHost, l.Kind)
	assert.Equal(t, map[string]string{"/bin": "usr/bin", "/lib": "usr/lib", "/sbin": "usr/sbin"}, l.Symlinks)
	assert.ElementsMatch(t, []string{"/usr", "/opt", "/etc/ssl", "/etc/alternatives", "/etc/passwd", "/etc/group", "/etc/ld.so.cache", "/etc/localtime"}, l.Binds)
	assert.NotContains(t, l.Binds, "/etc/shadow", "secrets in /etc stay out")
	assert.NotContains(t, l.Binds, "/lib64", "absent directories are not bound")
	assert.NoError(t, l.Validate())
}

func TestHostLayoutSplitUsr(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for _, d := range []string{"usr/bin", "bin", "lib"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	l, err := hostLayoutAt(root)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"/usr", "/bin", "/lib"}, l.Binds)
	assert.Empty(t, l.Symlinks)
}

func TestHostLayoutNeedsUsr(t *testing.T) {
	t.Parallel()
	_, err := hostLayoutAt(t.TempDir())
	assert.ErrorIs(t, err, ErrUnusableRoot)
}

func TestHostLayoutOfThisMachine(t *testing.T) {
	t.Parallel()
	l, err := HostLayout()
	require.NoError(t, err)
	assert.Contains(t, l.Binds, "/usr")
	assert.NotContains(t, l.Binds, "/etc", "never the whole /etc")
	for _, b := range l.Binds {
		assert.NotEqual(t, "/etc/shadow", b)
	}
}

func TestParse(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "host"} {
		l, err := Parse(s)
		require.NoError(t, err)
		assert.Equal(t, KindHost, l.Kind)
	}
	_, err := Parse(filepath.Join(t.TempDir(), "missing"))
	assert.ErrorIs(t, err, ErrUnusableRoot)

	empty := t.TempDir()
	_, err = Parse(empty)
	assert.ErrorIs(t, err, ErrUnusableRoot, "a directory without /bin/sh is not a root")

	file := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	_, err = Parse(file)
	assert.ErrorIs(t, err, ErrUnusableRoot)
}

func TestLayoutValidate(t *testing.T) {
	t.Parallel()
	bad := []Layout{
		{Kind: "tarball"},
		{Kind: KindDir, Dir: "relative"},
		{Kind: KindDir, Dir: "/"},
		{Kind: KindHost, Binds: []string{"usr"}},
		{Kind: KindHost, Binds: []string{"/"}},
		{Kind: KindHost, Binds: []string{"/usr/../etc"}},
		{Kind: KindHost, Symlinks: map[string]string{"bin": "usr/bin"}},
		{Kind: KindHost, Symlinks: map[string]string{"/bin": ""}},
	}
	for _, l := range bad {
		assert.ErrorIs(t, l.Validate(), ErrUnusableRoot, "%+v", l)
	}
	for _, l := range []Layout{{}, {Kind: KindDir, Dir: "/srv/root"}, {Kind: KindHost, Binds: []string{"/usr"}}} {
		assert.NoError(t, l.Validate(), "%+v", l)
	}
}
