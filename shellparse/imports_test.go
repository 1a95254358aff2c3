package shellparse

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

// TestPureImports keeps the package pure: parsing only, no I/O, no
// processes, no policy.
func TestPureImports(t *testing.T) {
	t.Parallel()
	allowed := map[string]bool{
		"errors": true, "fmt": true, "maps": true, "strconv": true, "strings": true, "sync": true,
		"unicode/utf8": true, "encoding/base64": true, "mvdan.cc/sh/v3/syntax": true, "path": true, "slices": true,
		// Only expand.BracesSeq (progword.go), which is pure: the rest of
		// the package expands against a live environment and is not used.
		"mvdan.cc/sh/v3/expand":                true,
		"github.com/tether-dev/tether/grammar": true,
	}
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
