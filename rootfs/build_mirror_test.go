package rootfs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMirrorFromSources(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string // path under /etc/apt → content
		suite string
		want  string
	}{
		{
			name: "deb822 as on Debian 12",
			files: map[string]string{"sources.list.d/debian.sources": `Types: deb
# http://snapshot.debian.org/archive/debian/20250520T000000Z
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
`},
			suite: "bookworm",
			want:  "http://deb.debian.org/debian",
		},
		{
			name: "deb822 disabled stanza, deb-src and other suites skipped",
			files: map[string]string{"sources.list.d/a.sources": `Types: deb
URIs: http://disabled.example/debian
Suites: bookworm
Enabled: no

Types: deb-src
URIs: http://src.example/debian
Suites: bookworm

Types: deb
URIs: http://other.example/debian
Suites: trixie

Types: deb deb-src
URIs: cdrom:/media/cdrom/ https://mirror.example/debian/
Suites:
 bookworm
`},
			suite: "bookworm",
			want:  "https://mirror.example/debian",
		},
		{
			name: "one-line format with options and comments",
			files: map[string]string{"sources.list": `# deb http://commented.example/debian bookworm main
deb-src http://src.example/debian bookworm main
deb [arch=amd64 signed-by=/k.gpg] http://mirror.example/debian/ bookworm main # local
`},
			suite: "bookworm",
			want:  "http://mirror.example/debian",
		},
		{
			name: "sources.list is read before sources.list.d",
			files: map[string]string{
				"sources.list":                  "deb http://first.example/debian bookworm main\n",
				"sources.list.d/debian.sources": "Types: deb\nURIs: http://second.example/debian\nSuites: bookworm\n",
			},
			suite: "bookworm",
			want:  "http://first.example/debian",
		},
		{
			name: "Ubuntu host: no source for the Debian suite",
			files: map[string]string{"sources.list.d/ubuntu.sources": `Types: deb
URIs: http://archive.ubuntu.com/ubuntu/
Suites: noble noble-updates
Components: main
`},
			suite: "bookworm",
			want:  "",
		},
		{
			name:  "no apt sources at all",
			suite: "bookworm",
			want:  "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			apt := t.TempDir()
			for name, content := range tt.files {
				p := filepath.Join(apt, name)
				require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
				require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
			}
			assert.Equal(t, tt.want, mirrorFromSources(apt, tt.suite))
		})
	}
}

func TestDefaultMirrorIsUsable(t *testing.T) {
	m := DefaultMirror(DefaultSuite)
	require.NoError(t, checkMirror(m), "DefaultMirror returned %q", m)
}
