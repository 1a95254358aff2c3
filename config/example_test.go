package config

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestExampleValidates: config/example.yaml, which the README points new
// users at, loads as written (secrets included, as tether config check
// reads them).
func TestExampleValidates(t *testing.T) {
	cfg, err := Load("example.yaml")
	require.NoError(t, err)
	require.Empty(t, cfg.CheckSecrets())
	for _, name := range []string{"default", "nightly"} {
		_, ok := cfg.Profile(name)
		require.True(t, ok, "profile %s", name)
	}
}
