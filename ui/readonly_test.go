package ui_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNoWritePath checks the package's source for any call that could
// change the store: the mutating Store methods and raw Exec on its
// database. The page must stay read-only by construction, not only by its
// method filter.
func TestNoWritePath(t *testing.T) {
	banned := map[string]bool{
		"Observe": true, "Check": true, "Compile": true, "Approve": true, "Undo": true, "Widen": true,
		"SetInteractiveViolation": true, "Exec": true, "ExecContext": true, "Begin": true, "BeginTx": true,
	}
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		require.NoError(t, err)
		checked++
		ast.Inspect(file, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok {
				if sel, ok := call.Fun.(*ast.SelectorExpr); ok && banned[sel.Sel.Name] {
					t.Errorf("%s: call to %s: the mandate page must not write", fset.Position(call.Pos()), sel.Sel.Name)
				}
			}
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				s := strings.ToUpper(lit.Value)
				for _, w := range []string{"INSERT ", "UPDATE ", "DELETE ", "REPLACE ", "CREATE ", "DROP ", "ALTER ", "PRAGMA "} {
					assert.NotContains(t, s, w, "%s: SQL that writes", fset.Position(lit.Pos()))
				}
			}
			return true
		})
	}
	assert.GreaterOrEqual(t, checked, 5, "the package's files were found")
}
