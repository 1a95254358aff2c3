package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tether-dev/tether/approval"
	"github.com/tether-dev/tether/config"
	"github.com/tether-dev/tether/internal/fspath"
	"github.com/tether-dev/tether/mandate"
	"github.com/tether-dev/tether/sandbox"
	"github.com/tether-dev/tether/ui"
)

// ErrTCPWithoutTokens is returned when a TCP listener is asked for
// without bearer tokens.
var ErrTCPWithoutTokens = errors.New("refusing to listen on TCP without bearer tokens (give --token-file)")

// ErrSocketInUse is returned when another daemon answers on the socket.
var ErrSocketInUse = errors.New("another tether serve is listening on the socket")

// DefaultSocket returns the default unix socket path:
// /run/tether/tether.sock for root, else $XDG_RUNTIME_DIR/tether/tether.sock,
// else $TMPDIR/tether-<uid>/tether.sock.
func DefaultSocket() string {
	if os.Geteuid() == 0 {
		return "/run/tether/tether.sock"
	}
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "tether", "tether.sock")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("tether-%d", os.Geteuid()), "tether.sock")
}

// DaemonOptions configures a Daemon.
type DaemonOptions struct {
	Config    *config.Config
	ConfigErr error
	// Socket is the unix socket path ("" means DefaultSocket()).
	Socket string
	// Listen is an optional TCP address; it requires Tokens.
	Listen string
	Tokens []string
	// Sandbox is the template of one-shot runs; Sessions holds session
	// sandboxes (nil creates one sharing Sandbox's state root and prefix).
	Sandbox  sandbox.Runner
	Sessions *sandbox.Sessions
	// Guard sets the loop guardrail thresholds.
	Guard GuardConfig
	// Workers bounds parallel calls (0: 2×GOMAXPROCS).
	Workers int
	// ShutdownGrace bounds how long shutdown waits for requests; 0 is 10s.
	ShutdownGrace time.Duration
	// Limits bounds connections, request bodies and sessions of API
	// clients; the zero value holds the defaults.
	Limits  Limits
	Version string
	Logger  *slog.Logger
}

// Daemon is `tether serve`: the runner, the approval engine, the mandate
// store and the API server, on a unix socket and optionally TCP. Create it
// with NewDaemon, run it with Serve.
type Daemon struct {
	opts     DaemonOptions
	Mandates *mandate.Store
	Server   *Server
	pools    *sandbox.Pools
	gateway  *approval.Gateway
	sessions *sandbox.Sessions
	base     context.Context
	cancel   context.CancelFunc
	log      *slog.Logger

	// gen is the configuration in force and the pipeline built from it;
	// Reload replaces it.
	gen      atomic.Pointer[generation]
	reloadMu sync.Mutex         // serialises reloads
	retired  []*approval.Engine // engines of replaced generations, closed by Close; guarded by reloadMu

	closeOnce sync.Once
	closeErr  error

	// page is the mandate page while Serve runs with ui.enabled; set
	// before Serve calls ready.
	page *ui.Server
}

// generation is one loaded configuration and the pipeline built from it.
type generation struct {
	cfg      *config.Config
	pipeline *Pipeline
	policy   string // PolicyDigest(cfg), for the pools and the pool socket
}

// Runner returns the runner of the configuration in force.
func (d *Daemon) Runner() *Runner { return d.gen.Load().pipeline.Runner }

// Engine returns the approval engine of the configuration in force.
func (d *Daemon) Engine() *approval.Engine { return d.gen.Load().pipeline.Engine }

// Config returns the configuration in force.
func (d *Daemon) Config() *config.Config { return d.gen.Load().cfg }

// PageURL returns the read-only mandate page's address while Serve runs
// with ui.enabled, and "" otherwise. Call it after Serve's ready callback.
func (d *Daemon) PageURL() string {
	if d.page == nil {
		return ""
	}
	return d.page.URL()
}

// NewDaemon opens the state (mandate database, audit log, allowlists) and
// builds the daemon. The caller must call Serve (which closes it) or
// Close.
func NewDaemon(opts DaemonOptions) (*Daemon, error) {
	if opts.Config == nil {
		return nil, fmt.Errorf("starting the daemon: no configuration (%v)", opts.ConfigErr)
	}
	if opts.Listen != "" && len(opts.Tokens) == 0 {
		return nil, ErrTCPWithoutTokens
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cfg := opts.Config
	d := &Daemon{opts: opts, log: log}
	d.base, d.cancel = context.WithCancel(context.Background())
	// The gateway tells the server about new requests (server-sent events);
	// the server exists only after the engine, hence the indirection.
	var srv *Server
	gw := approval.NewGateway(approval.GatewayOptions{Logger: log, Resolved: func(r approval.Resolution) {
		if srv != nil {
			srv.PublishResolution(r)
		}
	}, Notify: func(ctx context.Context, p approval.Pending) error {
		var errs []error
		if srv != nil {
			errs = append(errs, srv.Publish(ctx, p))
		}
		token := ""
		cfg := d.Config() // the webhook of the configuration in force
		if prof, ok := cfg.Profile(p.Profile); ok && prof.Approvals.Webhook.URL != "" && srv != nil {
			token = srv.AnswerToken(p)
		}
		errs = append(errs, notifyWebhook(ctx, cfg, p, token))
		return errors.Join(errs...)
	}})
	d.gateway = gw
	// Session sandboxes and pooled ones outlive a reload; their exec gate
	// decides with the configuration in force at each exec.
	p, err := NewPipeline(PipelineOptions{Config: cfg, ConfigErr: opts.ConfigErr, Sandbox: opts.Sandbox,
		Sessions: opts.Sessions, Gateway: gw, Guard: opts.Guard, Workers: opts.Workers, Logger: log, ExecGates: d.execGates})
	if err != nil {
		return nil, err
	}
	d.sessions, d.Mandates = p.Sessions, p.Mandates
	p.Runner.Protected = append(p.Runner.Protected, socketPaths(d.socket())...)
	d.pools = &sandbox.Pools{StateRoot: opts.Sandbox.StateRoot, CgroupPrefix: opts.Sandbox.CgroupPrefix,
		Grace: opts.Sandbox.Grace, UserNSBase: opts.Sandbox.UserNSBase,
		Logf: func(format string, args ...any) { log.Warn(fmt.Sprintf(format, args...)) }}
	p.Runner.Pools = d.pools
	// Pooled sandboxes and sessions share each profile's pids budget.
	d.pools.Sessions, d.sessions.Pools = d.sessions, d.pools
	g := &generation{cfg: cfg, pipeline: p, policy: PolicyDigest(cfg)}
	d.pools.Reconfigure(g.policy, nil)
	d.gen.Store(g)
	srv = NewServer(d.base, p.Runner, d.Mandates, opts.Version, opts.Limits, log)
	d.Server = srv
	return d, nil
}

// execGates is the exec gate of the daemon's sandboxes (Runner.ExecGates):
// the engine of the configuration in force when the exec happens, so a
// session or pooled sandbox started before a reload is gated by the new
// rules.
func (d *Daemon) execGates(root string) sandbox.ExecGate {
	return func(ev sandbox.ExecEvent) error {
		gate := d.Runner().engineExecGate(root)
		if gate == nil {
			return nil
		}
		return gate(ev)
	}
}

// ErrReloadNeedsRestart is returned by Reload for a configuration whose
// changes the daemon cannot take while it runs (its state directory, the
// mandate page): the configuration in force stays.
var ErrReloadNeedsRestart = errors.New("the change needs a restart of tether serve")

// Reload makes cfg the configuration in force (tether serve's SIGHUP):
// the approval engine, the runner's placement and the exec gate of every
// sandbox decide by it from the next request on; requests under way
// finish under the one they started with. Every pool whose profile
// changed is drained (its waiting sandboxes destroyed unused) and
// refilled under the new configuration, and no sandbox placed under the
// old one is pooled after this returns (sandbox.Pools.Reconfigure); the
// pools of unchanged profiles are kept. Session sandboxes go on (their
// exec gate follows the new rules), as do pending approvals; approvals
// given "for this session" are forgotten (the new engine asks again).
// It reports whether anything changed. On an error (ErrReloadNeedsRestart,
// a pipeline that cannot be built) nothing changed: the configuration in
// force stays.
func (d *Daemon) Reload(cfg *config.Config) (bool, error) {
	if cfg == nil {
		return false, fmt.Errorf("reloading the configuration: %w", ErrNoConfig)
	}
	d.reloadMu.Lock()
	defer d.reloadMu.Unlock()
	old := d.gen.Load()
	policy := PolicyDigest(cfg)
	if policy == old.policy {
		return false, nil
	}
	switch {
	case cfg.StateDir != old.cfg.StateDir:
		return false, fmt.Errorf("%w: state_dir changed (%s to %s)", ErrReloadNeedsRestart, old.cfg.StateDir, cfg.StateDir)
	case cfg.UI != old.cfg.UI:
		return false, fmt.Errorf("%w: the mandate page (ui) changed", ErrReloadNeedsRestart)
	}
	p, err := NewPipeline(PipelineOptions{Config: cfg, Sandbox: d.opts.Sandbox, Sessions: d.sessions, Gateway: d.gateway,
		Store: d.Mandates, Guard: d.opts.Guard, Workers: d.opts.Workers, Logger: d.log, ExecGates: d.execGates})
	if err != nil {
		return false, fmt.Errorf("reloading the configuration: %w", err)
	}
	p.Runner.Pools = d.pools
	p.Runner.Protected = append(p.Runner.Protected, socketPaths(d.socket())...)
	g := &generation{cfg: cfg, pipeline: p, policy: policy}
	d.gen.Store(g)
	d.Server.setRunner(p.Runner)
	d.retired = append(d.retired, old.pipeline.Engine)
	same := func(profile string) bool {
		a, b := profileDigest(old.cfg, profile), profileDigest(cfg, profile)
		return a != "" && a == b
	}
	for _, spec := range d.pools.Reconfigure(policy, same) {
		d.refill(p.Runner, spec)
	}
	return true, nil
}

// refill prepares, under r's configuration, the pool of a profile that a
// reload drained: the placement of a call of the profile in the drained
// pool's workspace, if that profile still pools its sandboxes.
func (d *Daemon) refill(r *Runner, drained sandbox.PoolSpec) {
	pl, err := r.Place(d.base, drained.Profile, drained.Spec.Config.Workspace, nil)
	if err != nil {
		d.log.Warn("not refilling a pool after the reload", "profile", drained.Profile, "err", err)
		return
	}
	if pl.Proxy || !sandbox.Poolable(pl.Config) {
		return
	}
	d.pools.Prepare(PoolSpec(r.policy, pl.Policy, pl.Config, pl.ProfileLimits, d.execGates(pl.Root)))
}

// profileDigest identifies what of cfg decides about the sandboxes of
// profile: the profile and the settings every profile shares ("" when
// there is no such profile).
func profileDigest(cfg *config.Config, profile string) string {
	p, ok := cfg.Profile(profile)
	if !ok {
		return ""
	}
	c := *cfg
	c.Profiles = map[string]*config.Profile{profile: p}
	return PolicyDigest(&c)
}

// notifyWebhook POSTs p to its profile's approvals.webhook, if any, with
// the profile's token secret as a bearer token and token, the request's
// answer token, in the body.
func notifyWebhook(ctx context.Context, cfg *config.Config, p approval.Pending, token string) error {
	prof, ok := cfg.Profile(p.Profile)
	if !ok || prof.Approvals.Webhook.URL == "" {
		return nil
	}
	hook := &approval.Webhook{URL: prof.Approvals.Webhook.URL, Header: http.Header{}}
	if token != "" {
		hook.Answer = &approval.WebhookAnswer{Token: token, Method: http.MethodPost, Path: "/v1/approvals/answer"}
	}
	if name := prof.Approvals.Webhook.TokenSecret; name != "" {
		token, err := ResolveSecretScope(cfg, nil, prof.Name).Get(name, "")
		if err != nil || token == "" {
			return fmt.Errorf("webhook of profile %s: secret %q is not set; not notifying", prof.Name, name)
		}
		hook.Header.Set("Authorization", "Bearer "+token)
	}
	return hook.Notify(ctx, p)
}

// TCPHandler is the API as served on TCP: behind the bearer tokens.
func (d *Daemon) TCPHandler() http.Handler { return RequireBearer(d.opts.Tokens, d.Server) }

// socket is the path of the daemon's unix socket.
func (d *Daemon) socket() string {
	if d.opts.Socket != "" {
		return d.opts.Socket
	}
	return DefaultSocket()
}

// socketPaths are the daemon's unix socket and its directory, as tether's
// own paths (Runner.Protected): the socket is the approval authority, and
// a sandbox that reached it (a --socket in a project, $TMPDIR/tether-<uid>
// under a home workspace's ~/tmp) would open sessions anywhere and answer
// its own approvals. Like tether's state and config, they are hidden in
// every sandbox whose workspace holds them, refused to the file tools, and
// a workspace inside them is refused. The directory is included only when
// it is the socket's own (missing, so that listenUnix makes it, or holding
// nothing but the socket): a shared directory (--socket /tmp/t.sock, or
// --socket $HOME/t.sock beside the projects) is not tether's, and every
// workspace under it would be refused.
//
// The paths are recorded resolved too (fspath.Real: every symlink of the
// directory followed, as the kernel follows it at bind), so that a socket
// reached through a symlink into a workspace (--socket /tmp/ln/t.sock,
// /tmp/ln -> ~/proj/run) is hidden in a sandbox of ~/proj, where the
// spelling as given matches nothing (session-12 red team, S1). A bind
// mount alias, which no path resolution sees, is matched by identity
// when the sandbox plans its workspace (sandbox.hiddenIn).
func socketPaths(sock string) []string {
	abs, err := filepath.Abs(sock)
	if err != nil {
		return nil
	}
	out := []string{abs}
	own := socketDirOwn(abs)
	if own {
		out = append(out, filepath.Dir(abs))
	}
	if real := fspath.Real(abs); real != abs {
		out = append(out, real)
		if own {
			out = append(out, filepath.Dir(real))
		}
	}
	return out
}

// socketDirOwn reports whether the socket sock's directory is its own:
// missing, or an ordinary (not sticky) directory holding at most sock.
func socketDirOwn(sock string) bool {
	dir := filepath.Dir(sock)
	fi, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	if err != nil || !fi.IsDir() || fi.Mode()&os.ModeSticky != 0 {
		return false
	}
	f, err := os.Open(dir)
	if err != nil {
		return false
	}
	defer f.Close()
	names, err := f.ReadDir(2)
	if err != nil && !errors.Is(err, io.EOF) {
		return false
	}
	return len(names) == 0 || len(names) == 1 && names[0].Name() == filepath.Base(sock)
}

// listenUnix creates the socket (mode 0600, its directory 0700). A stale
// socket nobody answers on is replaced; a live one is ErrSocketInUse.

func listenUnix(path string) (net.Listener, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("creating the socket directory: %w", err)
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("%s exists and is not a socket; remove it or choose another --socket", path)
		}
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close()
			return nil, fmt.Errorf("%w: %s", ErrSocketInUse, path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("removing the stale socket: %w", err)
		}
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		l.Close()
		return nil, fmt.Errorf("making the socket private: %w", err)
	}
	return l, nil
}

// reapLeftovers runs the sandbox GC for sb's state root and cgroup prefix
// and logs what it removed: the sandboxes of a daemon or run that died
// (whose keeper may not have run: it was killed with them, or this is the
// first start after a reboot of the state root's filesystem).
func reapLeftovers(sb sandbox.Runner, log *slog.Logger) {
	rep, err := sandbox.GC(sandbox.GCOptions{StateRoot: sb.StateRoot, CgroupPrefix: sb.CgroupPrefix})
	switch {
	case err != nil:
		log.Warn("reaping leftover sandboxes", "err", err)
	case len(rep.Containers) > 0 || len(rep.Cgroups) > 0 || len(rep.StateDirs) > 0 || len(rep.Errors) > 0:
		log.Info("reaped leftover sandboxes", "containers", len(rep.Containers), "cgroups", len(rep.Cgroups),
			"state", len(rep.StateDirs), "errors", rep.Errors)
	}
}

// Serve listens and serves until ctx ends, then shuts down gracefully:
// waiting calls are cancelled (denied and audited; nothing runs),
// in-flight requests finish, every session is cleared (its sandboxes
// closed), and the state is closed. ready, if non-nil, is called with the
// socket path once it accepts connections.
func (d *Daemon) Serve(ctx context.Context, ready func(socket string)) error {
	sock := d.socket()
	ul, err := listenUnix(sock)
	if err != nil {
		d.Close()
		return err
	}
	// Every sandbox of this state root hides the socket, not only this
	// daemon's own (sandbox.RecordServed): another tether's one-shot in a
	// workspace holding it could take its place.
	release, err := sandbox.RecordServed(d.opts.Sandbox.StateRoot, socketPaths(sock))
	if err != nil {
		ul.Close()
		d.Close()
		return err
	}
	defer release()
	listeners := []net.Listener{ul}
	if d.opts.Listen != "" {
		tl, err := net.Listen("tcp", d.opts.Listen)
		if err != nil {
			ul.Close()
			d.Close()
			return fmt.Errorf("listening on %s: %w", d.opts.Listen, err)
		}
		listeners = append(listeners, tl)
	}
	// The socket is ours now: no other daemon serves on it. Reap what a
	// predecessor (or a crashed run) left under the same state root and
	// cgroup prefix before taking calls; GC spares whatever a live owner
	// holds (a concurrent tether run, another daemon's sessions).
	reapLeftovers(d.opts.Sandbox, d.log)
	// The pool socket: tether run of this user, under this state root,
	// takes its sandbox from the profile's pool (pool.go).
	// It stops before the pools close (d.Close).
	stopPool := func() {}
	if pl, err := sandbox.ListenPool(d.opts.Sandbox.StateRoot); err != nil {
		d.log.Warn("no pool socket: tether run builds its own sandboxes", "err", err)
	} else {
		poolDone := make(chan struct{})
		go func() {
			defer close(poolDone)
			if err := d.pools.ServePool(d.base, pl, d.choosePool); err != nil {
				d.log.Warn("serving the pool socket", "err", err)
			}
		}()
		stopPool = sync.OnceFunc(func() {
			pl.Close()
			_ = os.Remove(pl.Addr().String())
			d.cancel() // ends the commands it serves
			<-poolDone
		})
	}
	defer stopPool()
	base := func(net.Listener) context.Context { return context.WithoutCancel(ctx) }
	lim := d.Server.limits
	for i, l := range listeners {
		listeners[i] = newLimitListener(l, lim.MaxConns)
	}
	// Request bodies are bounded by the Server (BodyTimeout); headers and
	// idle keep-alive connections here. No ReadTimeout or WriteTimeout:
	// a call may wait minutes for an approval, an event stream for hours.
	servers := []*http.Server{{Handler: d.Server, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: lim.IdleConnTimeout,
		MaxHeaderBytes: 64 << 10, BaseContext: base, ConnContext: PeerContext}}
	if len(listeners) > 1 {
		servers = append(servers, &http.Server{Handler: d.TCPHandler(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: lim.IdleConnTimeout,
			MaxHeaderBytes: 64 << 10, BaseContext: base})
	}
	errc := make(chan error, len(listeners))
	for i, l := range listeners {
		go func() { errc <- servers[i].Serve(l) }()
	}
	// The read-only mandate page, when the configuration enables it, on
	// its own loopback address. It stops before the store closes.
	uiOpts := ui.Options{Logger: d.log}
	if p, ok := d.Config().Profile(""); ok {
		uiOpts.Profile, uiOpts.ProfileViolation = p.Name, string(p.Mandate.InteractiveViolation)
	}
	page, err := ui.Start(d.Config().UI, d.Mandates, uiOpts)
	switch {
	case errors.Is(err, ui.ErrDisabled):
	case err != nil:
		for _, l := range listeners {
			l.Close()
		}
		_ = os.Remove(sock)
		d.Close()
		return fmt.Errorf("starting the mandate page: %w", err)
	default:
		d.page = page
		d.log.Info("mandate page", "url", page.URL())
	}
	d.log.Info("tether serve listening", "socket", sock, "tcp", d.opts.Listen)
	if ready != nil {
		ready(sock)
	}
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-errc:
	}
	d.log.Info("shutting down")
	// Calls waiting for an approval end now (denied, audited); requests
	// then drain.
	d.cancel()
	grace := d.opts.ShutdownGrace
	if grace <= 0 {
		grace = 10 * time.Second
	}
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	for _, hs := range servers {
		if err := hs.Shutdown(sctx); err != nil {
			d.log.Warn("shutting down the API", "err", err)
			hs.Close()
		}
	}
	_ = os.Remove(sock)
	stopPool()
	if page != nil {
		if err := page.Close(); err != nil {
			d.log.Warn("stopping the mandate page", "err", err)
		}
	}
	cerr := d.Close()
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return serveErr
	}
	return cerr
}

// choosePool is the pool socket's check of a tether run's request: the
// daemon serves it from the profile's pool only when the run's policy is
// the daemon's own (the same configuration, so the same exec gate, deny
// rules and placement) and its sandbox is the one the daemon's profile
// places. It returns the reason when not: tether run then builds its own.
func (d *Daemon) choosePool(req *sandbox.PoolRequest) (sandbox.PoolSpec, string) {
	g := d.gen.Load()
	cfg := g.cfg
	if g.policy == "" || req.Policy != g.policy {
		return sandbox.PoolSpec{}, "the run's configuration is not the daemon's"
	}
	ws := req.Spec.Config.Workspace
	pol, err := ResolveTerminalScope(cfg, nil, req.Profile, ws).Policy()
	if err != nil {
		return sandbox.PoolSpec{}, err.Error()
	}
	if root, err := filepath.EvalSymlinks(pol.Cwd); err != nil || root != ws {
		return sandbox.PoolSpec{}, "the run's workspace is not the profile's"
	}
	if pol.Backend != config.BackendSandbox {
		return sandbox.PoolSpec{}, "the profile does not run commands in a sandbox"
	}
	if req.Spec.ProfileLimits != ProfileLimits(pol) {
		return sandbox.PoolSpec{}, "the run's profile limits are not the profile's"
	}
	return PoolSpec(g.policy, pol, req.Spec.Config, req.Spec.ProfileLimits, d.execGates(req.Spec.Config.Workspace)), ""
}

// PolicyDigest identifies a loaded configuration: two processes that
// loaded the same one (same file, same values) get the same digest.
// tether run and the daemon compare it before sharing a pooled sandbox.
func PolicyDigest(cfg *config.Config) string {
	if cfg == nil {
		return ""
	}
	// The same file named by another relative path (from another working
	// directory) is the same configuration.
	c := *cfg
	if c.Source != "" && c.Source != config.EmbeddedSource {
		if abs, err := filepath.Abs(c.Source); err == nil {
			c.Source = abs
		}
	}
	b, err := json.Marshal(&c)
	if err != nil {
		return "" // never equal to a real digest: no sharing
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Close clears every session, closes the session sandboxes and the state.
// Serve calls it.
func (d *Daemon) Close() error {
	d.closeOnce.Do(func() { d.closeErr = d.close() })
	return d.closeErr
}

func (d *Daemon) close() error {
	d.cancel()
	d.Server.closeSessions()
	var errs []error
	if err := d.pools.Close(); err != nil {
		errs = append(errs, fmt.Errorf("closing pooled sandboxes: %w", err))
	}
	d.reloadMu.Lock()
	for _, e := range d.retired {
		if err := e.Close(); err != nil {
			errs = append(errs, fmt.Errorf("closing the audit log of a replaced configuration: %w", err))
		}
	}
	d.retired = nil
	d.reloadMu.Unlock()
	return errors.Join(append(errs, d.gen.Load().pipeline.Close())...)
}

// ReadTokens reads bearer tokens from a file, one per line ("#"
// comments and blank lines ignored). The file must not be readable by
// others.
func ReadTokens(path string) ([]string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("reading the token file: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("the token file %s is readable by others (mode %v); chmod 600 it", path, fi.Mode().Perm())
	}
	data, err := config.ReadTrusted(path, "token file", config.MaxTokensSize)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if len(l) < 16 {
			return nil, fmt.Errorf("a token in %s is shorter than 16 characters", path)
		}
		out = append(out, l)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the token file %s holds no token", path)
	}
	return out, nil
}
