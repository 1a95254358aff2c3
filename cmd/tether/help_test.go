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
