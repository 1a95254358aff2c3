package main

import (
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
)

// TestEveryHelpPageListsExitStatuses walks the command tree: a script
// must be able to read from --help what each status of each command means.
func TestEveryHelpPageListsExitStatuses(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Name() != "help" && c.Name() != "completion" && !c.Hidden {
			assert.Contains(t, c.Long, "Exit status", "%s --help lists no exit statuses", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd())
}

// TestCommandNames: run builds only the subcommand its first argument
// names, so each registered name must be the command's own, and the tree
// built for one name must dispatch as the whole tree does.
func TestCommandNames(t *testing.T) {
	for _, c := range commands {
		sub := c.make()
		assert.Equal(t, c.name, sub.Name(), "addCommand(%q) registers %q", c.name, sub.Name())
		root := newRootCmd(c.name)
		assert.Len(t, root.Commands(), 1, "newRootCmd(%q) holds one subcommand (cobra adds help and completion at Execute)", c.name)
		found, _, err := root.Find([]string{c.name})
		if assert.NoError(t, err) {
			assert.Equal(t, c.name, found.Name())
		}
	}
	// A mistyped name gets the whole tree, for its suggestions.
	assert.Len(t, newRootCmd("rnu").Commands(), len(commands))
}
