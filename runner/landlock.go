package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/tether-dev/tether/approval"
	"github.com/tether-dev/tether/mandate"
	"github.com/tether-dev/tether/sandbox"
)

// KernelPolicy is the Landlock ruleset of a call's sandbox under its job's
// enforced mandate (mp, from the decision: approval.Decision.MandatePaths),
// for the workspace root: the paths family's rules, resolved against the
// workspace as the sandbox mounts it, with the mount plan (the workspace
// read-only but for the write rules: chmod, chown, utimensat and xattrs,
// which Landlock does not govern, are refused outside them). Nil without
// an enforced mandate: no ruleset. Every entry point that runs a job's
// call in a sandbox uses it.
//
// Where every rule of the hosts family names a port (mandate.KernelPorts;
// an empty family names none), TCP connects are confined to those ports
// too, unless proxied: behind the egress proxy every connection goes to
// the proxy's own port, and the proxy holds the hosts themselves.
func KernelPolicy(mp *approval.MandatePaths, root string, proxied bool) *sandbox.Landlock {
	if mp == nil {
		return nil
	}
	k := mandate.KernelPaths(mp.Rules, root)
	ll := &sandbox.Landlock{Trees: k.Trees, Files: singleNamed(k.Files), ReadTrees: k.ReadTrees,
		ReadFiles: singleNamed(k.ReadFiles), ReadOnlyWorkspace: true}
	if ports, ok := mandate.KernelPorts(mp.Hosts); ok && !proxied {
		ll.RestrictTCPConnect, ll.TCPConnectPorts = true, ports
	}
	return ll
}

// singleNamed returns files without the regular files that have more
// than one name (hard links) now: a rule for one name of such a file
// grants it by all of them, and the approver saw one. Left out, the
// kernel refuses it and the refusal is paths drift naming it. Compile
// makes no rule for a file observed so (mandate.Runtime.Linked); this
// catches a link made since, or a rule written by hand.
func singleNamed(files []string) []string {
	out := files[:0:0]
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil && fi.Mode().IsRegular() {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 {
				continue
			}
		}
		out = append(out, f)
	}
	return out
}

// pathsRefused records the accesses the kernel refused during a command
// under its job's enforced mandate (audit, drift in the paths family) and
// reports the call blocked at gate "landlock" with them in
// "paths_refused"; a call already blocked at the exec gate keeps that
// verdict and gains the list. The command's own output stays (it ran).
func pathsRefused(ctx context.Context, env *Env, command string, refused []sandbox.PathRefused, ran Result) Result {
	ds := recordPathRefusals(ctx, env, command, refused)
	list := make([]map[string]any, len(ds))
	for i, d := range ds {
		list[i] = map[string]any{"blockers": refused[i].Blockers, "drift_id": d.DriftID}
		if a := refused[i].Addr; a != "" {
			list[i]["addr"] = a
		} else {
			list[i]["path"] = refused[i].Path
		}
		if op := refused[i].Op; op != "" {
			list[i]["op"] = op
		}
	}
	out := ran.Output
	if out == nil {
		out = map[string]any{}
	}
	out["paths_refused"] = list
	ran.Output = out
	if ran.Class == ClassBlocked {
		return ran
	}
	what := refused[0].Path
	if a := refused[0].Addr; a != "" {
		what = "a connect to " + a
	}
	msg := fmt.Sprintf("the kernel refused access to %s: outside the job's mandate (%s); the command ran with that access refused",
		what, strings.Join(refused[0].Blockers, ", "))
	if len(refused) > 1 {
		msg += fmt.Sprintf(", and %d more", len(refused)-1)
	}
	if code, ok := out["exit_code"].(int); ok {
		msg += fmt.Sprintf(", and exited with status %d", code)
	}
	res := Result{Class: ClassBlocked, Gate: GateLandlock, Rule: approval.RuleMandate, Ran: true, Message: msg, Output: out}
	first := ds[0]
	res.Decision = &first
	return res
}

// recordPathRefusals audits each access the kernel refused during a
// command of env and, in a job, records it as paths drift (the path
// relative to the workspace, as the family's rules are), or a refused
// connect as hosts drift (its address).
func recordPathRefusals(ctx context.Context, env *Env, command string, refused []sandbox.PathRefused) []approval.Decision {
	in := make([]approval.PathRefusal, len(refused))
	for i, p := range refused {
		in[i] = approval.PathRefusal{Path: WorkspaceRelative(p.Path, env.Root), Addr: p.Addr, Op: p.Op, Blockers: p.Blockers}
	}
	return env.Runner.Engine.RecordPathRefusals(ctx, approval.ExecCall{Profile: env.Profile.Name, Session: env.Session,
		Platform: env.Platform, Job: env.Job, Command: command}, in)
}

// WorkspaceRelative is p relative to the workspace root when inside it,
// as the mandate's paths rules are; p otherwise.
func WorkspaceRelative(p, root string) string {
	if root == "" {
		return p
	}
	if rel, err := filepath.Rel(root, p); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
		return rel
	}
	return p
}
