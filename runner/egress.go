package runner

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tether-dev/tether/config"
	"github.com/tether-dev/tether/egress"
	"github.com/tether-dev/tether/mandate"
	"github.com/tether-dev/tether/sandbox"
)

// Network mode proxy (issue 8): a profile with terminal.network.mode
// proxy runs its commands in a network namespace holding only loopback
// and the egress proxy's listener (egress.NewNamespace), served from the
// host under the profile's allow/deny lists narrowed, for a job with an
// approved mandate, by the mandate's hosts. Each one-shot command gets
// its own namespace and proxy, closed when it ends; a session sandbox
// gets one for its lifetime, closed when the session ends (explicitly,
// idle, or with the daemon), found again by the session's pointer.
//
// Connections are recorded in the job's mandate through egress.Recorder:
// allowed hosts are observations in observe mode, refusals by the
// enforced mandate are drift (family hosts). The proxy's limits come from
// terminal.network (max_connections, max_bytes, connect_timeout,
// idle_timeout; 0 means the egress defaults); a session keeps the limits
// it was opened with.
//
// Attribution is per command: Begin moves the proxy's attribution (and
// byte budget) to the newest command, so connections of two commands
// running at once in one session (a background command and a foreground
// one) are attributed to the later one.

// egressBox is one sandbox's egress: its namespace, the proxy serving it
// and the recorder of its connections.
type egressBox struct {
	ns     *egress.Namespace
	proxy  *egress.Proxy
	rec    *egress.Recorder
	served chan struct{}
	once   sync.Once
}

// egressCommands numbers commands for egress.Attribution.Command.
var egressCommands atomic.Int64

// sessionEgress maps a live session sandbox to its egress box.
var sessionEgress sync.Map // *sandbox.Session → *egressBox

// newEgressBox makes the namespace and starts serving the proxy in it.
// Its policy refuses everything until begin.
func newEgressBox(r *Runner, n config.Network) (*egressBox, error) {
	ns, err := egress.NewNamespace()
	if err != nil {
		return nil, fmt.Errorf("network mode proxy needs root to create the proxy's network namespace: %w", err)
	}
	rec := &egress.Recorder{Store: r.Mandates, Log: r.log}
	p := egress.New(egress.Options{Observe: rec.Observe, OnDecision: rec.OnDecision, Log: r.log,
		Limits: egress.Limits{MaxConns: n.MaxConnections, MaxBytes: int64(n.MaxBytes),
			DialTimeout: n.ConnectTimeout.D(), IdleTimeout: n.IdleTimeout.D()}})
	b := &egressBox{ns: ns, proxy: p, rec: rec, served: make(chan struct{})}
	go func() {
		defer close(b.served)
		if err := p.Serve(ns.Listener()); err != nil {
			r.log.Warn("egress proxy stopped", "err", err)
		}
	}()
	return b, nil
}

// close stops the proxy (cutting its connections), waits for it and
// releases the namespace. It is idempotent.
func (b *egressBox) close() {
	b.once.Do(func() {
		b.proxy.Close()
		<-b.served
		b.ns.Close()
	})
}

// configure points cfg at the box: network mode proxy in its namespace,
// with the proxy variables replacing any the command environment had.
func (b *egressBox) configure(cfg *sandbox.Config) {
	cfg.Network, cfg.AllowHostNetwork, cfg.NetNSPath = sandbox.NetworkProxy, false, b.ns.Path()
	env := make([]string, 0, len(cfg.Env)+8)
	for _, kv := range cfg.Env {
		name, _, _ := strings.Cut(kv, "=")
		switch strings.ToUpper(name) {
		case "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY":
			continue // a passed-through proxy would bypass tether's
		}
		env = append(env, kv)
	}
	cfg.Env = append(env, b.ns.Env()...)
}

// begin sets the policy for env's next command and attributes the
// connections that follow to it. An error (bad allow/deny lists, a
// mandate that cannot be verified) means the command must not run.
func (b *egressBox) begin(ctx context.Context, env *Env, pol TerminalPolicy) error {
	p, err := egress.NewPolicy(pol.Network.Allow, pol.Network.Deny)
	if err != nil {
		return err
	}
	r := env.Runner
	run := mandate.Run{Job: env.Job, ID: env.Session}
	if run.ID == "" {
		run.ID = "no-session" // as mandate.Hook names it
	}
	if env.Job != "" && r.Mandates != nil {
		p.Mandate, err = egress.MandateHostsOf(ctx, r.Mandates, env.Job)
		if err != nil {
			return err
		}
		run.Mode, run.CronIdentity = runMode(env.Platform)
		if env.Profile != nil {
			run.Violation = string(env.Profile.Mandate.InteractiveViolation)
		}
	}
	id := "cmd-" + strconv.FormatInt(egressCommands.Add(1), 10)
	b.proxy.SetPolicy(p)
	b.rec.Attribute(id, egress.Target{Run: run, Enforced: p.Mandate != nil})
	b.proxy.Begin(egress.Attribution{Run: run.ID, Command: id})
	return nil
}

// oneShotEgress prepares cfg for a one-shot command in proxy mode and
// returns the box to close after it (nil when the profile is not in proxy
// mode).
func oneShotEgress(ctx context.Context, env *Env, pol TerminalPolicy, cfg *sandbox.Config) (*egressBox, error) {
	if pol.Network.Mode != config.NetworkProxy {
		return nil, nil
	}
	b, err := newEgressBox(env.Runner, pol.Network)
	if err != nil {
		return nil, err
	}
	b.configure(cfg)
	if err := b.begin(ctx, env, pol); err != nil {
		b.close()
		return nil, err
	}
	return b, nil
}

// openSession opens the session sandbox (profile, env.Session) with spec;
// in proxy mode it first makes the session's egress box, which lives until
// the session ends.
func openSession(ctx context.Context, env *Env, pol TerminalPolicy, spec sandbox.SessionSpec) (*sandbox.Session, error) {
	r := env.Runner
	if pol.Network.Mode != config.NetworkProxy {
		return r.Sessions.Open(ctx, pol.Profile, env.Session, spec)
	}
	b, err := newEgressBox(r, pol.Network)
	if err != nil {
		return nil, err
	}
	b.configure(&spec.Config)
	sess, err := r.Sessions.Open(ctx, pol.Profile, env.Session, spec)
	if errors.Is(err, sandbox.ErrSpecChanged) {
		// A concurrent first call opened it with its own namespace.
		b.close()
		if s, ok := r.Sessions.Lookup(pol.Profile, env.Session); ok {
			return s, nil
		}
		return nil, err
	}
	if err != nil {
		b.close()
		return nil, err
	}
	if _, loaded := sessionEgress.LoadOrStore(sess, b); loaded {
		b.close() // defensive: the session already has its box
		return sess, nil
	}
	go func() {
		<-sess.Done()
		b.close()
		sessionEgress.Delete(sess)
	}()
	return sess, nil
}

// beginSessionEgress attributes the next command of sess to env; a
// session without an egress box (not in proxy mode) needs nothing.
func beginSessionEgress(ctx context.Context, env *Env, pol TerminalPolicy, sess *sandbox.Session) error {
	v, ok := sessionEgress.Load(sess)
	if !ok {
		return nil
	}
	return v.(*egressBox).begin(ctx, env, pol)
}
