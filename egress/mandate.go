package egress

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/tether-dev/tether/mandate"
)

// HostFacts returns the mandate facts of an allowed event: a terminal call
// that contacted the event's host. ok is false for refused or invalid
// attempts, which must not become evidence.
func HostFacts(ev Event) (f mandate.Facts, ok bool) {
	if !ev.Allowed || ev.Host == "" {
		return mandate.Facts{}, false
	}
	return mandate.Facts{Tool: mandate.ToolTerminal, Hosts: []string{ev.Host}}, true
}

// DriftFailure returns the mandate failure a refusal by the enforced
// mandate stands for (family hosts, the host as the rule that would allow
// it); ok is false for any other decision.
func DriftFailure(d Decision) (f mandate.Failure, ok bool) {
	if d.Refusal != RefusedMandate {
		return mandate.Failure{}, false
	}
	return mandate.Failure{Family: mandate.FamilyHosts, Value: d.Host}, true
}

// HostCall is the mandate call that stands for one connection to host: a
// terminal call with the host as run-time evidence and no command text, so
// it adds nothing to the commands family and, having Hosts, no
// argument-guessed host either.
func HostCall(host string) mandate.Call {
	return mandate.Call{Tool: mandate.ToolTerminal, Hosts: []string{host}}
}

// Target is the mandate run a command's connections belong to.
type Target struct {
	Run mandate.Run
	// Enforced reports whether the command's policy carries the job's
	// enforced mandate (Policy.Mandate set). Then allowed connections are
	// not recorded (the command itself was checked) and refusals by the
	// mandate become drift; otherwise allowed connections are observations.
	Enforced bool
}

// maxTargets bounds the commands a Recorder remembers; the oldest is
// forgotten first. Connections of a forgotten command are not recorded.
const maxTargets = 256

// RecordTimeout bounds one store write made for a connection.
const RecordTimeout = 10 * time.Second

// Recorder routes a proxy's connections to a job's mandate (the hosts
// family). Wire it with Options{Observe: r.Observe, OnDecision:
// r.OnDecision} and call Attribute with the Attribution.Command of each
// command before Proxy.Begin.
//
// In observe mode every allowed connection is recorded as one observation
// (HostCall), so a compiled mandate lists the host with "# seen Nx", N
// counting connections (one per HTTP request or tunnel). In enforce mode
// a refusal by the mandate is checked against the store (Store.Check with
// HostCall), which records a blocked call and a drift record of family
// hosts naming the host; the connection is refused either way (the
// proxy's policy already refused it; an "escalate" verdict cannot be
// asked about from inside a connection).
//
// Recording is separate from the command's own observation: the approval
// engine records the command before it runs, so its hosts cannot be known
// then. A command "curl https://h/" in observe mode is therefore evidence
// for h twice: once guessed from its argument, once seen by the proxy.
//
// Errors are logged and never change a proxy decision. Safe for
// concurrent use.
type Recorder struct {
	// Store receives the records; nil records nothing.
	Store *mandate.Store
	// Log receives recording errors; nil discards them.
	Log *slog.Logger

	mu      sync.Mutex
	targets map[string]Target
	order   []string
}

// Attribute says which run the connections of command belong to.
func (r *Recorder) Attribute(command string, t Target) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.targets == nil {
		r.targets = map[string]Target{}
	}
	if _, ok := r.targets[command]; !ok {
		r.order = append(r.order, command)
	}
	r.targets[command] = t
	for len(r.order) > maxTargets {
		delete(r.targets, r.order[0])
		r.order = r.order[1:]
	}
}

// logConnection appends ev to the store's connection log, attributed to
// its command's job and run when there is one.
func (r *Recorder) logConnection(ev Event) {
	if r.Store == nil {
		return
	}
	r.mu.Lock()
	t := r.targets[ev.Command]
	r.mu.Unlock()
	run := t.Run.ID
	if run == "" {
		run = ev.Run
	}
	ctx, cancel := context.WithTimeout(context.Background(), RecordTimeout)
	defer cancel()
	err := r.Store.RecordConnection(ctx, mandate.Connection{Time: ev.Time, Job: t.Run.Job, Run: run, Command: ev.Command,
		Host: ev.Host, Port: ev.Port, Method: ev.Method, Allowed: ev.Allowed, Rule: ev.Rule, Reason: ev.Message,
		BytesUp: ev.Up, BytesDown: ev.Down, Duration: ev.Duration, Err: ev.Err})
	if err != nil {
		r.log().Warn("logging an egress connection", "host", ev.Host, "err", err)
	}
}

func (r *Recorder) target(a Attribution) (Target, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.targets[a.Command]
	return t, ok && r.Store != nil && t.Run.Job != ""
}

func (r *Recorder) log() *slog.Logger {
	if r.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return r.Log
}

// Observe logs every connection attempt in the store's connection log
// (host, port, method, bytes, allowed or not, rule, run and command), and
// records an allowed connection of an observed job as evidence for its
// hosts family.
func (r *Recorder) Observe(ev Event) {
	r.logConnection(ev)
	t, ok := r.target(ev.Attribution)
	if !ok || t.Enforced {
		return
	}
	if _, ok := HostFacts(ev); !ok {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), RecordTimeout)
	defer cancel()
	if err := r.Store.Observe(ctx, t.Run, HostCall(ev.Host)); err != nil {
		r.log().Warn("recording an egress host", "job", t.Run.Job, "host", ev.Host, "err", err)
	}
}

// OnDecision records a refusal by the enforced mandate as drift.
func (r *Recorder) OnDecision(a Attribution, d Decision) {
	t, ok := r.target(a)
	if !ok || !t.Enforced {
		return
	}
	if _, ok := DriftFailure(d); !ok {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), RecordTimeout)
	defer cancel()
	md := r.Store.Check(ctx, t.Run, HostCall(d.Host))
	switch {
	case md.Err != nil:
		r.log().Warn("recording egress drift", "job", t.Run.Job, "host", d.Host, "err", md.Err)
	case md.Verdict == mandate.Allow:
		// The mandate changed since the command began; the connection
		// stays refused (its policy was fixed when it was accepted).
		r.log().Info("egress host refused by an older mandate", "job", t.Run.Job, "host", d.Host)
	}
}

// MandateHostsOf returns the hosts family of job's enforced mandate,
// verified against its approved hash, or nil when the job has no approved
// mandate (observe mode, or a job never seen). Any other error (a
// tampered text, a store failure) is returned: callers must fail closed.
func MandateHostsOf(ctx context.Context, store *mandate.Store, job string) (*MandateHosts, error) {
	e, err := store.Export(ctx, job)
	if errors.Is(err, mandate.ErrUnknownVersion) || errors.Is(err, mandate.ErrUnknownJob) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("loading the hosts of mandate %s: %w", job, err)
	}
	hosts := &MandateHosts{Job: e.Job, Version: e.Version, Rules: []string{}}
	for _, r := range e.Families[mandate.FamilyHosts] {
		hosts.Rules = append(hosts.Rules, r.Value)
	}
	// A rule's port is the kernel's (mandate.KernelPorts): the proxy,
	// asked for host names, holds the hosts.
	hosts.Rules = mandate.RuleHosts(hosts.Rules)
	return hosts, nil
}
