package oracle

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadTSVLeavesOutNotRunRows: a row whose note carries notRunMark is
// not given to the oracle (it would end the shared run); the others are,
// and a command column that merely mentions the mark is still read.
func TestReadTSVLeavesOutNotRunRows(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "rows.tsv")
	require.NoError(t, os.WriteFile(p, []byte("# header\n"+
		"hardline\tno\tgdb -p 1 -batch -ex 'call exit(0)'\tinit made to exit "+notRunMark+"\n"+
		"allow\tno\tls\tplain\n"+
		"allow\tno\techo '"+notRunMark+"'\n"), 0o644))
	got, err := ReadTSV(p, 2)
	require.NoError(t, err)
	assert.Equal(t, []string{"ls", "echo '" + notRunMark + "'"}, got)
}
