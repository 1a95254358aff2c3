package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/tether-dev/tether/config"
	"github.com/tether-dev/tether/runner"
	"github.com/tether-dev/tether/sandbox"
)

func init() { addCommand("serve", newServeCmd) }

type serveFlags struct {
	config       string
	socket       string
	listen       string
	tokenFile    string
	stateRoot    string
	cgroupPrefix string
	workers      int
	verbose      bool
	limits       runner.Limits
}

func newServeCmd() *cobra.Command {
	f := &serveFlags{}
	cmd := &cobra.Command{
		Use:   "serve [--socket PATH] [--listen ADDR --token-file FILE]",
		Short: "Run the daemon: an HTTP/JSON API for tool calls, sessions and approvals",
		Long: `tether serve runs the execution control plane as a daemon. Agent hosts send
batches of tool calls to it, create and clear sessions, and answer approval
requests, over an HTTP/JSON API (see docs/api.md).

It listens on a unix socket (mode 0600, so only this user and root can
connect): --socket, else $TETHER_SOCKET, else $XDG_RUNTIME_DIR/tether/tether.sock
(/run/tether/tether.sock for root). A TCP listener (--listen 127.0.0.1:8421)
is opened only with --token-file: a file (mode 600) of bearer tokens, one per
line, that every TCP request must carry ("Authorization: Bearer TOKEN").

Each client is identified by the client token returned when it creates its
first session; it sees and answers only the approvals of its own sessions.

SIGHUP reloads the configuration (the same --config, $TETHER_CONFIG or
default path as at start): a file that does not load or validate is
refused with a log line and the configuration in force stays. A valid one
applies from the next request on: the approval engine, placement and the
exec gate of every sandbox, sessions' included. Every pool whose profile
changed is drained and refilled under the new configuration (docs/pool.md);
approvals given for a session are forgotten. A change of state_dir or ui
needs a restart and is refused.

SIGTERM or SIGINT shut it down gracefully: waiting calls are denied (nothing
runs), requests drain, every session is cleared and its sandbox closed, and
the audit log, allowlists and mandates stay on disk for the next start.

Exit status: 0 after a clean shutdown, 1 when it cannot start (socket in
use, bad configuration), 2 for bad usage.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runServe(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.config, "config", "", "config file (default: $TETHER_CONFIG, then the XDG and /etc paths, then the embedded default)")
	fl.StringVar(&f.socket, "socket", "", "unix socket path (default: $TETHER_SOCKET, else the per-user runtime dir)")
	fl.StringVar(&f.listen, "listen", "", "also listen on this TCP address (requires --token-file)")
	fl.StringVar(&f.tokenFile, "token-file", "", "file of bearer tokens, one per line (mode 600)")
	fl.StringVar(&f.stateRoot, "state-root", "", "sandbox state root (default: $TETHER_STATE_ROOT, else /run/tether or the runtime dir)")
	fl.StringVar(&f.cgroupPrefix, "cgroup-prefix", "", "cgroup directory of the sandboxes (default: $TETHER_CGROUP_PREFIX, else tether)")
	fl.IntVar(&f.workers, "workers", 0, "calls run in parallel at most (default: 2 x CPUs)")
	fl.BoolVarP(&f.verbose, "verbose", "v", false, "log every request outcome at debug level")
	fl.IntVar(&f.limits.MaxConns, "max-connections", 0, "open connections per listener; more are answered 503 (default 512)")
	fl.IntVar(&f.limits.MaxSessions, "max-sessions", 0, "live API sessions (default 4096)")
	fl.IntVar(&f.limits.MaxSessionsPerClient, "max-client-sessions", 0, "live API sessions of one client (default 64)")
	fl.DurationVar(&f.limits.SessionIdle, "session-idle", 0, "clear an API session no request used for this long (default 1h)")
	return cmd
}

func runServe(cmd *cobra.Command, f *serveFlags) error {
	// The daemon starts sandboxes all the time (pool refills, sessions):
	// from a sealed copy of its binary, made once, libcontainer needs no
	// copy per sandbox. This re-executes the process (once).
	sealErr := sandbox.RunSealed()
	if f.listen != "" && f.tokenFile == "" {
		return &exitError{Code: 2, Err: fmt.Errorf("%w", runner.ErrTCPWithoutTokens)}
	}
	var tokens []string
	if f.tokenFile != "" {
		t, err := runner.ReadTokens(f.tokenFile)
		if err != nil {
			return &exitError{Code: 2, Err: err}
		}
		tokens = t
	}
	cfg, err := config.Resolve(f.config)
	if err != nil {
		return &exitError{Code: 1, Err: fmt.Errorf("loading the configuration: %w", err)}
	}
	sock := f.socket
	if sock == "" {
		sock = os.Getenv("TETHER_SOCKET")
	}
	level := slog.LevelInfo
	if f.verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: level}))
	if sealErr != nil {
		log.Warn("running from the binary itself: each sandbox's start copies it", "err", sealErr)
	}
	sb := runnerFor(f.stateRoot, f.cgroupPrefix, "", 0)
	d, err := runner.NewDaemon(runner.DaemonOptions{Config: cfg, Socket: sock, Listen: f.listen, Tokens: tokens,
		Sandbox: *sb, Workers: f.workers, Version: version, Logger: log, ShutdownGrace: 10 * time.Second, Limits: f.limits})
	if err != nil {
		return &exitError{Code: 1, Err: err}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, unix.SIGTERM)
	defer stop()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, unix.SIGHUP)
	defer signal.Stop(hup)
	go reloadOnHangup(ctx, hup, d, f.config, log)
	err = d.Serve(ctx, func(s string) {
		fmt.Fprintf(cmd.ErrOrStderr(), "tether serve: listening on %s\n", s)
	})
	if err != nil {
		return &exitError{Code: 1, Err: err}
	}
	fmt.Fprintln(cmd.ErrOrStderr(), "tether serve: stopped")
	return nil
}

// reloadOnHangup reloads d's configuration from path (resolved as at
// start) on every signal from hup until ctx ends. A configuration that
// does not load, or that the daemon cannot take while it runs, is refused
// with a log line; the one in force stays.
func reloadOnHangup(ctx context.Context, hup <-chan os.Signal, d *runner.Daemon, path string, log *slog.Logger) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
		}
		cfg, err := config.Resolve(path)
		if err != nil {
			log.Error("configuration reload refused; the configuration in force stays", "err", err)
			continue
		}
		changed, err := d.Reload(cfg)
		switch {
		case err != nil:
			log.Error("configuration reload refused; the configuration in force stays", "source", cfg.Source, "err", err)
		case changed:
			log.Info("configuration reloaded", "source", cfg.Source)
		default:
			log.Info("configuration reload: nothing changed", "source", cfg.Source)
		}
	}
}
