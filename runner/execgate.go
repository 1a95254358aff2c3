package runner

import (
	"context"
	"fmt"
	"os"
	"path"
	"strings"

	"github.com/tether-dev/tether/approval"
	"github.com/tether-dev/tether/sandbox"
)

// systemBinDirs are the system tree's program directories.
var systemBinDirs = []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"}

// refusedProgramFiles are the paths, in each system program directory,
// of the programs the hardline floor refuses outright
// (approval.RefusedPrograms): every sandbox mounts those of its root that
// are regular files noexec (sandbox.Config.NoExec), so the kernel refuses
// an exec of one whatever name the exec gate checked (a symlink swapped
// between the check and the exec, docs/exec-gate.md).
var refusedProgramFiles = func() []string {
	var out []string
	for _, d := range systemBinDirs {
		for _, n := range approval.RefusedPrograms {
			out = append(out, path.Join(d, n))
		}
	}
	return out
}()

// execGate is the sandbox's exec gate for a call whose workspace is root
// ("" for a session's, which serves many calls: the profile's cwd then):
// ExecGates' when set, else the engine's (engineExecGate).
func (r *Runner) execGate(root string) sandbox.ExecGate {
	if r.ExecGates != nil {
		return r.ExecGates(root)
	}
	return r.engineExecGate(root)
}

// engineExecGate is the engine's exec gate for a call whose workspace is
// root: its hardline floor and deny globs on every argv the sandbox sees
// executed.
func (r *Runner) engineExecGate(root string) sandbox.ExecGate {
	eng := r.Engine
	if eng == nil {
		return nil
	}
	home, _ := os.UserHomeDir()
	return func(ev sandbox.ExecEvent) error {
		sandbox.Trace("exec gate")
		defer sandbox.Trace("exec gate done")
		cwd := root
		if cwd == "" && r.Config != nil {
			if p, ok := r.Config.Profile(ev.Profile); ok {
				cwd = p.Terminal.Cwd
			}
		}
		return eng.CheckExec(approval.ExecRequest{Argvs: append([][]string{ev.Argv}, ev.Runs...),
			Profile: ev.Profile, Cwd: cwd, Home: home})
	}
}

// recordExecBlocks audits the exec gate's refusals during command and, in
// a job, records them as drift; one decision per block.
func recordExecBlocks(ctx context.Context, env *Env, command string, blocks []sandbox.ExecBlock) []approval.Decision {
	in := make([]approval.ExecBlocked, len(blocks))
	for i, b := range blocks {
		in[i] = approval.ExecBlocked{Argv: b.Argv, Rule: b.Rule, Reason: b.Reason}
	}
	return env.Runner.Engine.RecordExecBlocks(ctx, approval.ExecCall{Profile: env.Profile.Name, Session: env.Session,
		Platform: env.Platform, Job: env.Job, Command: command}, in)
}

// execBlocked turns a command during which the exec gate refused programs
// into a blocked result at gate "exec": the refusals are audited and, in a
// job, recorded as drift; the command's own output stays in the result
// (it ran until, and after, the refused exec).
func execBlocked(ctx context.Context, env *Env, command string, blocks []sandbox.ExecBlock, ran Result) Result {
	ds := recordExecBlocks(ctx, env, command, blocks)
	list := make([]map[string]any, len(ds))
	for i, d := range ds {
		list[i] = map[string]any{"program": blocks[i].Program(), "argv": blocks[i].Argv, "path": blocks[i].Path,
			"rule": blocks[i].Rule, "reason": d.Reason, "drift_id": d.DriftID}
	}
	out := ran.Output
	if out == nil {
		out = map[string]any{}
	}
	out["exec_blocked"] = list
	first := ds[0]
	msg := fmt.Sprintf("refused at the exec gate: the command executed %s (%s); it ran until then",
		first.Command, strings.TrimSuffix(first.Reason, "."))
	if len(ds) > 1 {
		msg += fmt.Sprintf(", and %d more exec(s) were refused", len(ds)-1)
	}
	if code, ok := out["exit_code"].(int); ok {
		msg += fmt.Sprintf(" and exited with status %d", code)
	}
	res := Result{Class: ClassBlocked, Gate: GateExec, Rule: blocks[0].Rule, Ran: true, Message: msg, Output: out}
	res.Decision = &first
	return res
}

// createBlocked adds to res the repositories the sandbox's creation gate
// refused to let the command make (each audited): the command goes on
// after a refusal (mkdir failed with EPERM), so its own result stands.
func createBlocked(ctx context.Context, env *Env, command string, blocks []sandbox.CreateBlock, res *Result) {
	recordCreateBlocks(ctx, env, command, blocks)
	list := make([]map[string]any, len(blocks))
	for i, b := range blocks {
		list[i] = map[string]any{"op": b.Op, "path": b.Path, "reason": b.Reason}
	}
	if res.Output == nil {
		res.Output = map[string]any{}
	}
	res.Output["create_blocked"] = list
	res.Message += fmt.Sprintf("; %d attempt(s) to make a repository (%s %q first) were refused: the workspace's repositories are protected paths (docs/workspace.md)",
		len(blocks), blocks[0].Op, blocks[0].Path)
}

// recordCreateBlocks audits the creation gate's refusals during command;
// one decision per block.
func recordCreateBlocks(ctx context.Context, env *Env, command string, blocks []sandbox.CreateBlock) []approval.Decision {
	in := make([]approval.CreateBlocked, len(blocks))
	for i, b := range blocks {
		in[i] = approval.CreateBlocked{Op: b.Op, Path: b.Path, Reason: b.Reason}
	}
	return env.Runner.Engine.RecordCreateBlocks(ctx, approval.ExecCall{Profile: env.Profile.Name, Session: env.Session,
		Platform: env.Platform, Job: env.Job, Command: command}, in)
}
