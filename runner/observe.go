package runner

import (
	"context"
	"errors"
	"net/netip"
	"path"

	"github.com/tether-dev/tether/mandate"
	"github.com/tether-dev/tether/sandbox"
)

// observing reports whether env's call belongs to a job whose mandate is
// observing: its sandbox is then observed (sandbox.Config.Observe) and
// what the kernel saw becomes the mandate's evidence. A store that cannot
// tell means no observation (the job's mandate then decides as usual).
func (env *Env) observing(ctx context.Context) bool {
	r := env.Runner
	if env.Job == "" || r.Mandates == nil {
		return false
	}
	ok, err := r.Mandates.Observing(ctx, env.Job)
	if err != nil {
		r.log.Warn("cannot tell whether the job's mandate is observing; its sandbox is not observed", "job", env.Job, "err", err)
	}
	return ok && err == nil
}

// recordRuntime records what the kernel saw command do in an observed
// sandbox as evidence of env's job (mandate.Store.ObserveRuntime). A
// failure is logged: evidence never decides a call.
func (env *Env) recordRuntime(ctx context.Context, command string, res *sandbox.Result, proxied bool) {
	r := env.Runner
	rt := RuntimeOf(res, command, env.Root, proxied)
	run := mandate.RunFor(env.Job, env.Session, env.Platform)
	if err := r.Mandates.ObserveRuntime(ctx, run, rt); err != nil && !errors.Is(err, mandate.ErrNotObserving) {
		r.log.Error("recording what the kernel saw as mandate evidence failed", "job", env.Job, "err", err)
	}
}

// RuntimeOf is what an observed sandbox's result says the kernel saw
// command do, as mandate evidence: its files, the programs it executed,
// and the addresses it connected to, or tried to (the kernel is asked
// before it connects: a refused or failed connect is what the command
// tried, as much as one that worked). Proxied, behind the egress proxy,
// connections to loopback are left out: the proxy is there (it records
// the host names it was asked for itself) and so are only the sandbox's
// own servers; any other address went around the proxy, the namespace
// has no route to it, and it is evidence as outside proxy mode.
// workspace is the directory paths are made relative to. tether run and
// the daemon record the same.
func RuntimeOf(res *sandbox.Result, command, workspace string, proxied bool) mandate.Runtime {
	rt := mandate.Runtime{Command: command, Workspace: workspace, Lost: res.AccessesLost}
	for _, a := range res.Accesses {
		switch {
		case a.Kind == sandbox.AccessConnect:
		case a.Missing:
			rt.Missing = append(rt.Missing, a.Target)
			continue
		case a.Links > 1:
			rt.Linked = append(rt.Linked, a.Target)
			continue
		}
		switch a.Kind {
		case sandbox.AccessRead:
			rt.Read = append(rt.Read, a.Target)
		case sandbox.AccessWrite:
			rt.Written = append(rt.Written, a.Target)
		case sandbox.AccessExec:
			rt.Executed = append(rt.Executed, a.Target)
		case sandbox.AccessConnect:
			if !proxied || !loopback(a.Target) {
				rt.Connected = append(rt.Connected, a.Target)
			}
		}
	}
	for _, ev := range res.Execs {
		if len(ev.Argv) > 0 && ev.Argv[0] != "" {
			rt.Programs = append(rt.Programs, path.Base(ev.Argv[0]))
		}
	}
	return rt
}

// loopback reports whether target ("IP:port", as the sandbox records a
// connection) is a loopback address; an unreadable one is not.
func loopback(target string) bool {
	ap, err := netip.ParseAddrPort(target)
	return err == nil && ap.Addr().Unmap().IsLoopback()
}
