package sandbox

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"time"
)

// Pooled sandboxes
//
// A fresh sandbox per command is the strongest isolation, and its price is
// the set-up: cgroups, namespaces, mounts, the seccomp filter, the exec
// gate. Pools pays it ahead: per profile it keeps a few sandboxes set up by
// the one set-up path (setUp) with a supervisor as their init, waiting for
// a command. Run takes one, runs exactly one command in it (Session.begin
// refuses a second, and any background one) and destroys it; the pool
// refills in the background. A pooled sandbox is built from the spec the
// call asks for: a call whose spec differs from the pool's drains the pool
// (nothing built for an old configuration serves a command) and gets
// ErrPoolEmpty while it refills. Nothing that depends on the workspace's
// contents is built ahead: the protected paths (what is frozen, reserved,
// hidden; the creation gate's trees) are planned and mounted when the
// sandbox is taken (Session.protect), so a pooled command is protected as
// a cold one started at the same moment, and a waiting sandbox leaves no
// reservation placeholder in the workspace.

// ErrPoolEmpty: no pooled sandbox of the asked spec is ready; the caller
// runs the command in a sandbox of its own (Runner.Run). Nothing ran.
var ErrPoolEmpty = errors.New("no pooled sandbox ready")

// poolMaxAge is how long a pooled sandbox waits for its command before it
// is replaced by a fresh one (its /etc snapshot and root are then rebuilt
// from the host's current files).
const poolMaxAge = 30 * time.Minute

// poolWait bounds how long a take waits for a sandbox being built (or
// refilled after use) before its caller builds one of its own.
const poolWait = 2 * time.Second

// poolRetry is how long a pool waits after a failed build before trying
// again (a broken spec must not spin).
const poolRetry = 5 * time.Second

// Pools keeps the pre-started sandboxes of each profile. The zero value is
// ready to use; fields must not change after first use. A Pools is safe
// for concurrent use. The owner must call Close before exiting (a crash
// leaves the sandboxes to the keeper and GC, like sessions').
type Pools struct {
	// StateRoot, CgroupPrefix, Grace and UserNSBase mean what they mean
	// on Runner; pools, sessions and one-shot runs may share them.
	StateRoot    string
	CgroupPrefix string
	Grace        time.Duration
	UserNSBase   int
	// Logf, when set, reports builds that failed.
	Logf func(format string, args ...any)
	// Sessions, when set, are the owner's session sandboxes: a pool
	// builds a sandbox only while the profile's pids budget
	// (ProfileLimits.Pids) holds it next to them and the pool's others,
	// each reserving its own limit, as sessions reserve theirs.
	Sessions *Sessions

	mu    sync.Mutex
	pools map[string]*pool
	// policy is the configuration the pools serve under (Reconfigure);
	// "" accepts every PoolSpec.
	policy string
	closed bool
	// live counts pooled sandboxes from the start of their build to the
	// end of their teardown; Close waits for it.
	live sync.WaitGroup
	// hangupWait, when set (tests; guarded by mu), replaces
	// poolHangupWait.
	hangupWait time.Duration
}

// PoolSpec is what a pool's sandboxes are built from: the profile's
// sandbox (SessionSpec's Config and ProfileLimits; a command's Timeout and
// OutputBytes are per call and not part of it), how many to keep ready,
// and the exec gate of the profile.
type PoolSpec struct {
	Profile string
	// Policy identifies the configuration the spec was placed under (an
	// opaque digest): once Reconfigure set another, the spec is neither
	// served nor built.
	Policy string
	Spec   SessionSpec
	// Size is how many sandboxes to keep ready; zero or less disables the
	// pool.
	Size int
	// ExecGate decides every exec in the pool's sandboxes (as
	// Sessions.ExecGate); nil lets every exec through.
	ExecGate ExecGate
}

// pool is one profile's sandboxes, all of one spec.
type pool struct {
	pools   *Pools
	profile string
	spec    SessionSpec // normalised (poolKey)
	size    int
	gate    ExecGate
	mgr     Sessions // what the pooled Sessions are built with

	mu       sync.Mutex // guards the fields below
	ready    []*Session
	building bool
	taken    map[*Session]bool // taken sandboxes not yet torn down (each refills when done)
	waiting  bool              // a take waits for the next sandbox
	changed  chan struct{}     // closed (and replaced) when a build ends
	drained  bool              // replaced or closed: builds no more, serves nothing
	retryAt  time.Time         // after a failed build
}

// poolKey is spec without the per-command limits: a pooled sandbox serves
// any timeout and output cap, which the command's ExecOptions carry.
func poolKey(spec SessionSpec) SessionSpec {
	spec.Config.Limits.Timeout, spec.Config.Limits.OutputBytes = 0, 0
	spec.Options = SessionOptions{IdleTimeout: poolMaxAge, MaxAge: poolMaxAge}
	return spec
}

// Poolable reports whether a sandbox of cfg may come from a pool: not one
// with a disk limit (a pooled sandbox would hold the workspace's quota
// while it waits), behind the egress proxy (its network is joined per
// command), observed (a job's run in observe mode: its calls would
// replace the profile's pool with observed sandboxes and back) or under
// an enforced mandate's Landlock ruleset and mount plan (likewise: each
// job and mandate version is a spec of its own, and the plan creates the
// mandate's missing write trees when it is set up, which a sandbox built
// ahead would do before any call of the job asked for it).
func Poolable(cfg Config) bool {
	return cfg.Limits.DiskBytes == 0 && cfg.Network != NetworkProxy && !cfg.Observe && cfg.Landlock == nil
}

// Prepare makes sure the profile's pool holds sandboxes of ps, building
// them in the background: a pool of another spec is drained first (its
// sandboxes are destroyed unused), and a Size of zero drains the profile's
// pool and keeps none.
func (ps *Pools) Prepare(p PoolSpec) {
	ps.pool(p)
}

// Reconfigure makes policy the configuration the pools serve under, as
// the owner's configuration is reloaded: from then on a PoolSpec of
// another Policy is neither served nor built (a call placed under the old
// configuration builds its own sandbox), so no pooled sandbox outlives
// the configuration it was built for. The pool of each profile keep
// reports unchanged carries over; every other pool is drained (its
// waiting sandboxes destroyed unused, sandboxes in use end after their
// one command). It returns the specs of the drained pools, for the
// owner to refill under the new configuration (Prepare). A nil keep
// drains every pool.
func (ps *Pools) Reconfigure(policy string, keep func(profile string) bool) []PoolSpec {
	ps.mu.Lock()
	ps.policy = policy
	var drained []*pool
	for name, pl := range ps.pools {
		if keep == nil || !keep(name) {
			drained = append(drained, pl)
			delete(ps.pools, name)
		}
	}
	ps.mu.Unlock()
	specs := make([]PoolSpec, 0, len(drained))
	for _, pl := range drained {
		pl.drain()
		specs = append(specs, PoolSpec{Profile: pl.profile, Spec: pl.spec, Size: pl.size})
	}
	return specs
}

// Run runs cmd in a sandbox of p's pool, with opts' per-command limits,
// and destroys the sandbox. Without one ready it returns ErrPoolEmpty and
// nothing ran (the pool fills for the next call): the caller runs cmd its
// own way. The Result is the command's, as Session.Exec reports it; the
// sandbox's teardown goes on after Run returns.
func (ps *Pools) Run(ctx context.Context, p PoolSpec, cmd Command, opts ExecOptions) (*Result, error) {
	s, err := ps.take(ctx, p)
	if err != nil {
		return nil, err
	}
	// Whatever happens, this sandbox serves nothing else.
	defer s.end(ErrSessionClosed)
	return s.Exec(ctx, cmd, opts)
}

// take hands out a ready sandbox of p's pool, or ErrPoolEmpty. The caller
// runs one command in it and ends it.
func (ps *Pools) take(ctx context.Context, p PoolSpec) (*Session, error) {
	if !Poolable(p.Spec.Config) {
		return nil, fmt.Errorf("%w: the sandbox has a disk limit, a proxied network, observation or a Landlock ruleset", ErrPoolEmpty)
	}
	pl := ps.pool(p)
	if pl == nil {
		return nil, ErrPoolEmpty
	}
	s := pl.take(ctx)
	if s == nil {
		return nil, ErrPoolEmpty
	}
	// What is protected depends on what the workspace holds now (a .git
	// the host made since the sandbox was built, a nested repository, a
	// home's new dot-file): planned and mounted here, as a cold sandbox
	// plans at its start. A sandbox that cannot be protected so serves
	// nothing; the caller builds its own, which reports why.
	Trace("pool protect")
	if err := s.protect(); err != nil {
		s.end(ErrSessionClosed)
		if logf := ps.Logf; logf != nil {
			logf("discarding a pooled sandbox of profile %s: protecting its paths: %v", p.Profile, err)
		}
		return nil, fmt.Errorf("%w: protecting the pooled sandbox's paths: %w", ErrPoolEmpty, err)
	}
	Trace("pool protected")
	return s, nil
}

// Close drains every pool, refuses new ones and waits until every pooled
// sandbox is torn down.
func (ps *Pools) Close() error {
	ps.mu.Lock()
	ps.closed = true
	pools := ps.pools
	ps.pools = nil
	ps.mu.Unlock()
	for _, pl := range pools {
		pl.drain()
	}
	ps.live.Wait()
	return nil
}

// lookup returns the profile's pool, nil when it has none.
func (ps *Pools) lookup(profile string) *pool {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return ps.pools[profile]
}

// Ready is how many sandboxes the profile's pool holds ready.
func (ps *Pools) Ready(profile string) int {
	pl := ps.lookup(profile)
	if pl == nil {
		return 0
	}
	pl.mu.Lock()
	defer pl.mu.Unlock()
	return len(pl.ready)
}

// pool returns the profile's pool for p (nil when p.Size is zero, p is
// of another configuration than the current one, or ps is closed),
// replacing and draining one of another spec or size.
func (ps *Pools) pool(p PoolSpec) *pool {
	key := poolKey(p.Spec)
	ps.mu.Lock()
	if ps.policy != "" && p.Policy != ps.policy {
		// Placed under a configuration that was since reloaded: it
		// must not replace the current one's pool.
		ps.mu.Unlock()
		return nil
	}
	old := ps.pools[p.Profile]
	if old != nil && old.size == p.Size && reflect.DeepEqual(old.spec, key) {
		ps.mu.Unlock()
		old.fill()
		return old
	}
	var pl *pool
	if !ps.closed && p.Size > 0 {
		pl = &pool{pools: ps, profile: p.Profile, spec: key, size: p.Size, gate: p.ExecGate,
			mgr: Sessions{StateRoot: ps.StateRoot, CgroupPrefix: ps.CgroupPrefix, Grace: ps.Grace, UserNSBase: ps.UserNSBase, ExecGate: p.ExecGate}}
		if ps.pools == nil {
			ps.pools = map[string]*pool{}
		}
		ps.pools[p.Profile] = pl
	} else {
		delete(ps.pools, p.Profile)
	}
	ps.mu.Unlock()
	if old != nil {
		old.drain()
	}
	if pl != nil {
		pl.fill()
	}
	return pl
}

// take hands out a ready sandbox, or nil when none is. With none ready
// but one on its way (being built, or about to be after a sandbox in use
// is torn down), one caller at a time waits for it (at most poolWait):
// a build under way is done sooner than one started from scratch; more
// callers than that build their own at once.
func (pl *pool) take(ctx context.Context) *Session {
	var timeout <-chan time.Time
	for waited := false; ; waited = true {
		pl.mu.Lock()
		for len(pl.ready) > 0 {
			s := pl.ready[0]
			pl.ready = pl.ready[1:]
			if !s.isDone() { // not expired or broken while it waited
				if pl.taken == nil {
					pl.taken = map[*Session]bool{}
				}
				pl.taken[s] = true
				if waited {
					pl.waiting = false
				}
				pl.mu.Unlock()
				// The refill starts when s is done (build's watcher),
				// not now: it must not take the CPU from the command s
				// is about to run.
				return s
			}
		}
		if pl.drained || !(pl.building || len(pl.taken) > 0) || (pl.waiting && !waited) {
			if waited {
				pl.waiting = false
			}
			pl.mu.Unlock()
			return nil
		}
		pl.waiting = true
		if pl.changed == nil {
			pl.changed = make(chan struct{})
		}
		changed := pl.changed
		pl.mu.Unlock()
		if timeout == nil {
			t := time.NewTimer(poolWait)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-changed:
			continue
		case <-ctx.Done():
		case <-timeout:
		}
		pl.mu.Lock()
		pl.waiting = false
		pl.mu.Unlock()
		return nil
	}
}

// wake tells a waiting take that the pool changed.
//
// Preconditions: pl.mu is held.
func (pl *pool) wake() {
	if pl.changed != nil {
		close(pl.changed)
		pl.changed = nil
	}
}

// fill starts building sandboxes until the pool is full, one at a time
// (a refill must not take the CPU from the commands being served), and
// only while the profile's pids budget holds one more.
func (pl *pool) fill() {
	// Read before pl.mu: a session's admission holds the sessions' lock
	// while it asks the pool (held, release).
	sessions := pl.pools.Sessions.held(pl.profile)
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if pl.building || pl.drained || len(pl.ready) >= pl.size || time.Now().Before(pl.retryAt) {
		return
	}
	if !pl.fits(sessions) {
		return // the next take or teardown tries again
	}
	pl.building = true
	pl.pools.live.Add(1) // held by the build, then by the sandbox
	go pl.build()
}

// build builds one sandbox, adds it to the pool and goes on while the
// pool is short.
func (pl *pool) build() {
	Trace("pool build")
	s := &Session{mgr: &pl.mgr, key: sessionKey{pl.profile, "pooled"}, spec: pl.spec, single: true, ready: make(chan struct{})}
	s.readyErr = s.create(context.Background())
	Trace("pool built")
	close(s.ready)
	sessions := pl.pools.Sessions.held(pl.profile) // before pl.mu, as in fill
	pl.mu.Lock()
	pl.building = false
	pl.wake()
	if s.readyErr != nil {
		pl.retryAt = time.Now().Add(poolRetry)
		pl.mu.Unlock()
		pl.pools.live.Done()
		if logf := pl.pools.Logf; logf != nil {
			logf("building a pooled sandbox of profile %s: %v", s.key.profile, s.readyErr)
		}
		return
	}
	// A session admitted during the build may have taken its room.
	drained := pl.drained || !pl.fits(sessions)
	if !drained {
		pl.ready = append(pl.ready, s)
	}
	pl.mu.Unlock()
	// The teardown ends the sandbox's hold on Close; a sandbox that ends
	// while it waits (max age, a broken supervisor) is replaced.
	go func() {
		<-s.Done()
		pl.forget(s)
		pl.pools.live.Done()
		pl.fill()
	}()
	if drained {
		s.end(ErrSessionClosed)
		return
	}
	pl.fill()
}

// forget drops s, torn down, from the pool: from the ready ones if it
// was still waiting, from those in use if it was taken.
func (pl *pool) forget(s *Session) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if pl.taken[s] {
		delete(pl.taken, s)
		return
	}
	for i, r := range pl.ready {
		if r == s {
			pl.ready = append(pl.ready[:i:i], pl.ready[i+1:]...)
			return
		}
	}
}

// held is the pids budget the profile's pool reserves: each of its
// sandboxes, waiting or in use, its own limit (zero for a nil ps or no
// pool). A sandbox being built is not counted: a session admitted
// meanwhile goes first, and the build is destroyed when it ends over the
// budget (build).
func (ps *Pools) held(profile string) int64 {
	if ps == nil {
		return 0
	}
	pl := ps.lookup(profile)
	if pl == nil {
		return 0
	}
	pl.mu.Lock()
	defer pl.mu.Unlock()
	return int64(len(pl.ready)+len(pl.taken)) * max(pl.spec.Config.Limits.Pids, 0)
}

// fits reports whether one more sandbox fits in the profile's pids budget
// next to sessions (what the profile's sessions reserve) and the pool's
// sandboxes.
//
// Preconditions: pl.mu is held.
func (pl *pool) fits(sessions int64) bool {
	total, each := pl.spec.ProfileLimits.Pids, pl.spec.Config.Limits.Pids
	return total <= 0 || each <= 0 || sessions+int64(len(pl.ready)+len(pl.taken)+1)*each <= total
}

// release destroys waiting sandboxes of the profile's pool until they
// freed at least need of its pids budget, or none is left waiting; it
// returns what they freed.
func (ps *Pools) release(profile string, need int64) int64 {
	if ps == nil {
		return 0
	}
	pl := ps.lookup(profile)
	if pl == nil {
		return 0
	}
	each := max(pl.spec.Config.Limits.Pids, 0)
	var freed int64
	var gone []*Session
	pl.mu.Lock()
	for each > 0 && freed < need && len(pl.ready) > 0 {
		gone = append(gone, pl.ready[len(pl.ready)-1])
		pl.ready = pl.ready[:len(pl.ready)-1]
		freed += each
	}
	pl.mu.Unlock()
	for _, s := range gone {
		s.end(ErrSessionClosed)
	}
	return freed
}

// drain destroys the pool's waiting sandboxes and stops its builds.
func (pl *pool) drain() {
	pl.mu.Lock()
	pl.drained = true
	ready := pl.ready
	pl.ready = nil
	pl.mu.Unlock()
	for _, s := range ready {
		s.end(ErrSessionClosed)
	}
}
