package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestTableGroupsRunsFromTheirLaunch(t *testing.T) {
	ms := int64(1e6)
	events := []event{
		// Written out of order (another process's line came first).
		{1*ms + 100, "warmup"},
		{2 * ms, "client main"}, // a warm-up run's: left out
		{10 * ms, "launch"},
		{13 * ms, "client main"},
		{12 * ms, "client main"}, // the first time counts
		{15 * ms, "exited"},
		{20 * ms, "launch"},
		{24 * ms, "client main"},
		{26 * ms, "exited"},
		{27 * ms, "daemon teardown"}, // after the exit: still this run's
		{30 * ms, "launch"},
		{32 * ms, "client main"},
		{37 * ms, "exited"},
	}
	assert.Equal(t, []stageRow{
		{"client main", 2, 3},
		{"exited", 6, 3},
		{"daemon teardown", 7, 1},
	}, table(events))
}
