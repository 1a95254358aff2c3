package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"mvdan.cc/sh/v3/syntax"
)

// docFiles hold the command blocks users copy.
var docFiles = []string{"../../README.md", "../../docs/api.md"}

// shBlock is one ```sh fenced block.
var shBlock = regexp.MustCompile("(?s)```sh\n(.*?)```")

// TestDocsCommandsParse parses every command block of README.md and
// docs/api.md as shell and checks each tether invocation in it against the
// real command tree: the subcommand exists, its flags parse and its
// arguments are accepted ([…] words of a synopsis are skipped). It does not
// run them (many need a daemon, root or a prepared root), and docs/api.md's
// curl calls are only parsed; the behaviour behind them is covered by the
// scripts in testdata/script and the runner's server tests.
func TestDocsCommandsParse(t *testing.T) {
	for _, file := range docFiles {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		blocks := shBlock.FindAllStringSubmatch(string(data), -1)
		require.NotEmpty(t, blocks, "%s has no ```sh blocks", file)
		seen := 0
		for _, b := range blocks {
			f, err := syntax.NewParser().Parse(strings.NewReader(b[1]), file)
			if !assert.NoError(t, err, "%s: a block does not parse as shell:\n%s", file, b[1]) {
				continue
			}
			syntax.Walk(f, func(n syntax.Node) bool {
				call, ok := n.(*syntax.CallExpr)
				if !ok || len(call.Args) == 0 || call.Args[0].Lit() != "tether" {
					return true
				}
				seen++
				checkTetherArgs(t, file, call)
				return true
			})
		}
		if file == "../../README.md" {
			assert.NotZero(t, seen, "%s: no tether command found", file)
		}
	}
}

// checkTetherArgs resolves one documented tether call in the command tree.
// Words that are not literal ($S, "$(…)") stand for a value.
func checkTetherArgs(t *testing.T, file string, call *syntax.CallExpr) {
	t.Helper()
	var args []string
	var text strings.Builder
	optional := false // inside an optional part of a synopsis: [--state-dir DIR]
	for i, w := range call.Args {
		lit := w.Lit()
		if strings.HasPrefix(lit, "[") {
			optional = true
		}
		if optional {
			optional = !strings.HasSuffix(lit, "]")
			continue
		}
		if lit == "" {
			lit = "VALUE"
			if len(w.Parts) == 1 {
				if q, ok := w.Parts[0].(*syntax.SglQuoted); ok {
					lit = q.Value
				}
			}
		}
		if i > 0 {
			args = append(args, lit)
		}
		text.WriteString(lit + " ")
	}
	root := newRootCmd()
	c, rest, err := root.Find(args)
	if !assert.NoError(t, err, "%s: %s", file, text.String()) {
		return
	}
	if c.HasSubCommands() && !c.Runnable() {
		assert.Fail(t, "a group without its subcommand", "%s: %s", file, text.String())
		return
	}
	assert.NoError(t, c.ParseFlags(rest), "%s: %s", file, text.String())
	if c.Args != nil {
		assert.NoError(t, c.ValidateArgs(c.Flags().Args()), "%s: %s", file, text.String())
	}
}
