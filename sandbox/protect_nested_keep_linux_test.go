package sandbox

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/tether-dev/tether/internal/protect"
)

// A walk whose HEAD changed less than racyStamp before it is not kept,
// and a directory changed then is listed again at every check: on a file
// system that keeps a second's timestamps, a change within that second
// would keep its stamp.
func TestNestedWalkKeepsOnlySettledStamps(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ws, "HEAD"), []byte("x\n"), 0o644))
	root, err := unix.Open(ws, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	defer unix.Close(root)
	dir, head := protect.StampBeneath(root, "."), protect.StampBeneath(root, "HEAD")
	now, later := time.Now(), time.Now().Add(racyStamp+time.Second)
	fresh := func() []nestedStamp {
		return []nestedStamp{{rel: ".", st: dir, dir: true}, {rel: "HEAD", st: head}}
	}

	assert.False(t, keepable(fresh(), dir.Dev(), now), "a walk of a HEAD changed just now was kept")
	assert.True(t, keepable(fresh(), dir.Dev(), later), "a walk of settled stamps was not kept")
	stamps := fresh()[:1]
	require.True(t, keepable(stamps, dir.Dev(), now))
	assert.Equal(t, protect.Stamp{}, stamps[0].st, "a directory changed just now is trusted by its stamp")
	assert.False(t, keepable(fresh(), dir.Dev()+1, later), "a walk with a stamp of another device was kept")
}
