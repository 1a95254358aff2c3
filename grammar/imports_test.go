package grammar

import (
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPureImports keeps the package pure (DESIGN.md §2 and §7): data and
// string handling only; no I/O, no processes, no libcontainer, no policy.
func TestPureImports(t *testing.T) {
	t.Parallel()
	allowed := map[string]bool{"strings": true, "sync": true, "regexp": true, "slices": true, "sync/atomic": true}
	entries, err := os.ReadDir(".")
	require.NoError(t, err)
	fset := token.NewFileSet()
	checked := 0
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, e.Name(), nil, parser.ImportsOnly)
		require.NoError(t, err)
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			assert.True(t, allowed[path], "%s imports %s", e.Name(), path)
		}
		checked++
	}
	assert.Positive(t, checked)
}
