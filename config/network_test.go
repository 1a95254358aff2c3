package config

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestProxyLimits(t *testing.T) {
	cfg, err := Load("example.yaml")
	require.NoError(t, err)
	p, ok := cfg.Profile("default")
	require.True(t, ok)
	n := p.Terminal.Network
	assert.Equal(t, 32, n.MaxConnections)
	assert.Equal(t, ByteSize(1<<30), n.MaxBytes)
	assert.Equal(t, 10*time.Second, n.ConnectTimeout.D())
	assert.Equal(t, 2*time.Minute, n.IdleTimeout.D())

	const proxy = "profiles:\n  default:\n    terminal:\n      network:\n        mode: proxy\n"
	cases := []struct {
		name, text string
		line       int
		msg        string
	}{
		{"limits without proxy", "profiles:\n  default:\n    terminal:\n      network:\n        max_connections: 4\n", 4, "need mode: proxy"},
		{"negative connections", proxy + "        max_connections: -1\n", 6, "network.max_connections must be 0"},
		{"negative bytes", proxy + "        max_bytes: -5\n", 6, ""},
		{"tiny connect timeout", proxy + "        connect_timeout: 1us\n", 6, "network.connect_timeout must be 0"},
		{"bad idle timeout", proxy + "        idle_timeout: later\n", 6, `invalid duration "later"`},
		{"misspelt key", proxy + "        max_conns: 4\n", 6, `unknown key "max_conns"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, t.TempDir(), "config.yaml", tc.text)
			_, err := Load(path)
			var ie *InvalidError
			require.True(t, errors.As(err, &ie), "%T %v", err, err)
			assert.Equal(t, tc.line, ie.Problems[0].Line, "%v", err)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
	ok1, err := Parse("t.yaml", []byte(proxy+"        max_connections: 8\n        idle_timeout: 30s\n"), "")
	require.NoError(t, err)
	d, _ := ok1.Profile("default")
	assert.Equal(t, 8, d.Terminal.Network.MaxConnections)
	assert.Equal(t, 30*time.Second, d.Terminal.Network.IdleTimeout.D())
}
