package config

import (
	"path"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPathGlob(t *testing.T) {
	cases := []struct {
		glob, rel string
		want      bool
	}{
		{".env", ".env", true},
		{".env", "app/.env", true},
		{".env", ".ENV", true}, // case ignored
		{".env", ".env/inner", true},
		{".env", "env", false},
		{".env", "a.env", false},
		{"*.pem", "certs/server.pem", true},
		{"*.pem", "certs/server.pem.txt", false},
		{"secrets", "secrets/db/password", true},
		{"secrets/**", "secrets/db/password", true},
		{"secrets/**", "secrets", true},
		{"secrets/**", "app/secrets/x", false},
		{"**/secrets/*", "app/secrets/x", true},
		{"**/secrets/*", "secrets/x", true},
		{"config/*.key", "config/tls.key", true},
		{"config/*.key", "app/config/tls.key", false},
		{"config/*.key", "config/sub/tls.key", false},
		{"a/b", "a/b/c/d", true},
		{"a/b", "a", false},
		{"x", ".", false},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, PathGlob(c.glob, c.rel), "%q on %q", c.glob, c.rel)
	}
}

func TestMatchSecretFile(t *testing.T) {
	for _, rel := range []string{".env", ".env.production", "deploy/prod.env", "tls/server.pem", "server.KEY", "home/.ssh/id_rsa",
		"keys/id_ed25519", ".npmrc", "sub/.netrc", ".pypirc", "cert.p12", "credentials", "aws/credentials.json",
		".docker/config.json", ".ssh/known_hosts", ".git-credentials"} {
		_, ok := MatchSecretFile(rel)
		assert.True(t, ok, rel)
	}
	for _, rel := range []string{"README.md", "main.go", "keys/id_ed25519.pub", "env.go", "docker/config.json", "environment.yml"} {
		_, ok := MatchSecretFile(rel)
		assert.False(t, ok, rel)
	}
}

func TestFilesMatch(t *testing.T) {
	f := Files{Deny: []string{"private/**"}, Ask: []string{"*.sqlite", "private/readme"}, SecretFiles: FileAsk}
	r, ok := f.Match("private/readme")
	require.True(t, ok)
	assert.Equal(t, PathRule{FileDeny, "files.deny", "private/**"}, r, "deny is stronger than ask")
	r, ok = f.Match("db/app.sqlite")
	require.True(t, ok)
	assert.Equal(t, "files.ask", r.Rule)
	r, ok = f.Match("README", ".env") // the written path and the resolved one
	require.True(t, ok)
	assert.Equal(t, PathRule{FileAsk, "files.secret", ".env"}, r)
	_, ok = f.Match("main.go")
	assert.False(t, ok)
	f.SecretFiles = FileAllow
	_, ok = f.Match(".env")
	assert.False(t, ok)
	f.SecretFiles = FileDeny
	r, _ = f.Match(".env")
	assert.Equal(t, FileDeny, r.Action)
}

func TestFilesValidation(t *testing.T) {
	cfg, err := Parse("t.yaml", []byte("profiles: {default: {}}\n"), "/")
	require.NoError(t, err)
	assert.Equal(t, FileAsk, cfg.Profiles["default"].Files.SecretFiles, "secret files are asked about by default")
	for _, bad := range []string{`files: {deny: ["/etc/x"]}`, `files: {ask: ["../x"]}`, `files: {ask: ["a/./b"]}`,
		`files: {deny: ["[x"]}`, `files: {deny: [""]}`, `files: {secret_files: maybe}`} {
		_, err := Parse("t.yaml", []byte("profiles: {default: {"+bad+"}}\n"), "/")
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), "t.yaml:1:", bad)
	}
}

// TestNameMatchIsPathMatch: the fast shapes agree with path.Match.
func TestNameMatchIsPathMatch(t *testing.T) {
	for _, g := range []string{".env", "*.pem", "*", "id_*", "credentials*", "secrets.y*ml", "a?c", "[ab]x", "*.env"} {
		for _, name := range []string{".env", "x.pem", "pem", "id_rsa", "id_", "credentials.json", "secrets.yaml", "abc", "ax", "prod.env", ""} {
			want, _ := path.Match(g, name)
			assert.Equal(t, want, nameMatch(g, name), "%q on %q", g, name)
		}
	}
}
