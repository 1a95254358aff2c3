package mandate

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/tether-dev/tether/approval"
)

// ErrExecRefused is why an exec-gate drift record cannot be widened: the
// exec was refused by the hardline floor or a deny glob, which no mandate
// rule lifts.
var ErrExecRefused = errors.New("refused at the exec gate by the hardline floor or a deny glob; no mandate rule can allow it")

// RecordExec records an exec the sandbox's exec gate refused during a
// call of run as a blocked call with an open drift record in the commands
// family, whatever the job's mode: the job tried something that never
// runs. argv is the refused exec's argument vector as command text.
func (s *Store) RecordExec(ctx context.Context, run Run, c Call, argv, reason string) (string, error) {
	var id string
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if err := s.ensureJob(ctx, tx, run.Job); err != nil {
			return err
		}
		callID, err := s.insertCall(ctx, tx, run, c, Facts{Tool: c.Tool}, "blocked")
		if err != nil {
			return err
		}
		id, err = s.insertDrift(ctx, tx, run, callID, c, []Failure{{Family: FamilyCommands, Value: argv, Exec: true}},
			"refused at the exec gate: "+redact(reason), Block, "open")
		return err
	})
	if err != nil {
		return "", fmt.Errorf("recording the exec gate's block of %s: %w", run.Job, err)
	}
	return id, nil
}

// RecordExec implements approval.ExecRecorder: an exec refused in a call
// of a job becomes drift. Calls without a job record nothing.
func (h *Hook) RecordExec(ctx context.Context, call approval.MandateCall, argv, reason string) (string, error) {
	if call.Job == "" {
		return "", nil
	}
	if h.Store == nil {
		return "", errors.New("recording an exec block: no mandate store is configured")
	}
	run := RunFor(call.Job, call.Session, call.Platform)
	c := Call{Tool: ToolTerminal, Command: call.Command}
	if h.Workspace != nil {
		c.Workspace = h.Workspace(call.Profile)
	}
	return h.Store.RecordExec(ctx, run, c, argv, reason)
}

var _ approval.ExecRecorder = (*Hook)(nil)
