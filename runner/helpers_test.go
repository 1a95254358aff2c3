package runner

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tether-dev/tether/approval"
	"github.com/tether-dev/tether/config"
	"github.com/tether-dev/tether/mandate"
	"github.com/tether-dev/tether/sandbox"
)

type contextT = context.Context

// testStore opens the mandate store in cfg's state directory, closed at
// cleanup.
func testStore(t testing.TB, cfg *config.Config) *mandate.Store {
	t.Helper()
	store, err := mandate.Open(cfg.StateDir, mandate.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { store.Close() })
	return store
}

// testEngine returns an approval engine over cfg with opts, closed at
// cleanup.
func testEngine(t testing.TB, cfg *config.Config, opts approval.Options) *approval.Engine {
	t.Helper()
	eng, err := approval.NewEngine(cfg, opts)
	require.NoError(t, err)
	t.Cleanup(func() { eng.Close() })
	return eng
}

// testSessions returns the session manager of sb's state root and cgroup
// prefix, closed at cleanup, which must end every session it holds.
func testSessions(t testing.TB, sb sandbox.Runner) *sandbox.Sessions {
	t.Helper()
	sessions := &sandbox.Sessions{StateRoot: sb.StateRoot, CgroupPrefix: sb.CgroupPrefix, Grace: sb.Grace}
	t.Cleanup(func() { assert.NoError(t, sessions.Close()) })
	return sessions
}
