package approval

import (
	"path"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestFoldAndClean(t *testing.T) {
	t.Parallel()
	a := &analyzer{home: "/root", cwd: "/srv/app"}
	cases := map[string]string{
		"~":                "~",
		"~/":               "~",
		"$HOME/.aws":       "~/.aws",
		"${HOME}/.aws/":    "~/.aws",
		"/root/.ssh/x":     "~/.ssh/x",
		"/rootkit":         "/rootkit",
		"~/..":             "/home",
		"~/a/../../..":     "/",
		"//":               "/",
		"/tmp/../etc//x/.": "/etc/x",
		"build":            "/srv/app/build",
		"../../":           "/",
		"$DIR/x":           "$DIR/x",
	}
	for in, want := range cases {
		assert.Equal(t, want, a.fold(in), in)
	}
}

func TestHomeRel(t *testing.T) {
	t.Parallel()
	cases := []struct {
		p, rel string
		ok     bool
	}{
		{"~", "", true}, {"~/.ssh/id", ".ssh/id", true}, {"/root/.aws", ".aws", true},
		{"/home/bob/.kube/config", ".kube/config", true}, {"/home/bob", "", true},
		{"/Users/carol/.zshrc", ".zshrc", true}, {"~bob/.ssh", ".ssh", true},
		{"/home", "", false}, {"/home/*", "", false}, {"/etc/passwd", "", false},
	}
	for _, c := range cases {
		rel, ok := homeRel(c.p)
		assert.Equal(t, c.ok, ok, c.p)
		assert.Equal(t, c.rel, rel, c.p)
	}
}

func TestIsBlockDevice(t *testing.T) {
	t.Parallel()
	for _, p := range []string{"/dev/sda", "/dev/sda1", "/dev/nvme0n1", "/dev/nvme0n1p2", "/dev/vdb", "/dev/xvda",
		"/dev/mmcblk0", "/dev/md127", "/dev/dm-0", "/dev/mapper/vg-root", "/dev/disk/by-id/ata-X", "/dev/disk0", "/dev/loop3"} {
		assert.True(t, isBlockDevice(p), p)
	}
	for _, p := range []string{"/dev/null", "/dev/zero", "/dev/shm/x", "/dev/fd/1", "/dev/tty", "/dev/stdout", "/dev/sd",
		"/dev/disk/", "/workspace/dev/sda", "/dev/urandom", "/dev/tcp/h/1"} {
		assert.False(t, isBlockDevice(p), p)
	}
}

func TestIsCatastrophicTarget(t *testing.T) {
	t.Parallel()
	for _, p := range []string{"/", "/*", "/etc", "/etc/*", "/usr/local", "~", "~/*", "/home", "/home/*", "/home/bob", "/root"} {
		assert.True(t, isCatastrophicTarget(p), p)
	}
	for _, p := range []string{"", "*", "/tmp/x", "/etc/nginx", "~/.cache", "/home/bob/src", "/....", "/opt/app"} {
		assert.False(t, isCatastrophicTarget(p), p)
	}
}

func TestNormalizeVariant(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"ls -la":                  "ls -la",
		"\x1b[31mrm\x1b[0m -rf /": "rm -rf /",
		"\x1b]0;title\x07ls":      "ls",
		"\u009b31mrm\u009b0m":     "rm",
		"ｒｍ　-rf /":                "rm -rf /",
		"rm${IFS}-rf$IFS/":        "rm -rf /",
		"echo $IFSX":              "echo $IFSX",
		"a\r\nb":                  "a\nb",
		"printf SAFE\r#x":         "printf SAFE_#x",
		"echo h\u00e9llo":         "echo h\u00e9llo",
	}
	for in, want := range cases {
		assert.Equal(t, want, normalizeVariant(in), "%q", in)
	}
}

func TestWorldWritableAndKillParsing(t *testing.T) {
	t.Parallel()
	for mode, want := range map[string]bool{"777": true, "0666": true, "1777": true, "755": false, "644": false,
		"o+w": true, "a+rwx": true, "u+w": false, "go-w": false, "u=rwx,o=rwx": true, "+x": false} {
		assert.Equal(t, want, worldWritable(mode), mode)
	}
	for args, want := range map[string]bool{"-S": true, "-kS": true, "-nS": true, "--stdin": true, "-u S": false,
		"-uS": false, "-s": false, "--shell": false, "-p S": false} {
		assert.Equal(t, want, sudoStdin(splitArgs(args)), args)
	}
}

func splitArgs(s string) []string {
	var out []string
	cur := ""
	for _, r := range s + " " {
		if r == ' ' {
			if cur != "" {
				out = append(out, cur)
			}
			cur = ""
			continue
		}
		cur += string(r)
	}
	return out
}

// TestIsClean checks the fast path against path.Clean and cleanPath's slow
// path on every path made of a few tricky elements.
func TestIsClean(t *testing.T) {
	t.Parallel()
	elems := []string{"", ".", "..", "a", "~", "~b", "..."}
	var paths []string
	var gen func(p string, n int)
	gen = func(p string, n int) {
		paths = append(paths, p, "/"+p, p+"/")
		if n == 0 {
			return
		}
		for _, e := range elems {
			if p == "" {
				gen(e, n-1)
			} else {
				gen(p+"/"+e, n-1)
			}
		}
	}
	gen("", 3)
	for _, p := range paths {
		if isClean(p) {
			assert.Equal(t, p, path.Clean(p), "%q", p)
		}
	}
	assert.True(t, isClean("~/src/a.go"))
	assert.True(t, isClean("/"))
	assert.False(t, isClean("a//b"))
	assert.False(t, isClean("~/.."))
}
