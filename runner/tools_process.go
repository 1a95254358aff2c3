package runner

import (
	"context"
	"fmt"
	"sync"

	"golang.org/x/sys/unix"
)

// schemaProcess is built on first use, not at init (see schemaReadFile).
var schemaProcess = sync.OnceValue(func() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"process_id": map[string]any{"type": "integer", "description": "The process_id a background terminal call returned.", "minimum": 1.0, "x-coerce-number": true},
			"action":     map[string]any{"type": "string", "enum": []any{"status", "kill"}, "description": "status (default): whether it runs, its exit code and recent output; kill: stop it."},
		},
		"required":             []any{"process_id"},
		"additionalProperties": false,
	}
})

func processTool() Tool {
	return Tool{Name: "process", Toolset: "terminal", Kind: KindTerminal, Schema: schemaProcess(), Handler: process,
		Description: "Check on (status, recent output) or stop (kill) a background command started by the terminal tool in this session."}
}

func process(ctx context.Context, env *Env, c *Call) Result {
	r := env.Runner
	id, _ := argInt(c.Args, "process_id")
	action := argString(c.Args, "action")
	if action == "" {
		action = "status"
	}
	if env.Session == "" || r.Sessions == nil {
		return notRun("background processes live in a session sandbox; this call has no session")
	}
	if bad := env.checkMandate(ctx, c.Name, nil, action == "kill"); bad != nil {
		return *bad
	}
	sess, ok := r.Sessions.Lookup(env.Profile.Name, env.Session)
	if !ok {
		return notRun("the session has no live sandbox (it was closed or expired); its background processes are gone")
	}
	bg, err := sess.Process(uint64(id))
	if err != nil {
		return notRun(fmt.Sprintf("no background process %d in this session", id))
	}
	if action == "kill" {
		if err := bg.Signal(unix.SIGKILL); err != nil {
			return failed(fmt.Sprintf("stopping process %d: %v (it may have exited already)", id, err), nil)
		}
		return succeeded(fmt.Sprintf("process %d was sent SIGKILL", id), map[string]any{"process_id": id})
	}
	stdout, stderr, dropped := bg.Output()
	out := map[string]any{"process_id": id, "running": true, "stdout": string(stdout), "stderr": string(stderr), "output_dropped": dropped}
	select {
	case <-bg.Done():
		out["running"] = false
		if res, err := bg.Wait(ctx); err == nil && res != nil {
			out["exit_code"] = res.ExitCode
		}
	default:
	}
	msg := fmt.Sprintf("process %d is running", id)
	if out["running"] == false {
		msg = fmt.Sprintf("process %d has exited", id)
	}
	return succeeded(msg, out)
}
