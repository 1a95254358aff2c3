package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/tether-dev/tether/config"
	"github.com/tether-dev/tether/mandate"
	"github.com/tether-dev/tether/ui"
)

func init() { addCommand("ui", newUICmd) }

func newUICmd() *cobra.Command {
	var listen, stateDir, configPath string
	cmd := &cobra.Command{
		Use:   "ui",
		Short: "Serve the read-only mandate page on a loopback address",
		Long: `Serve the read-only Mandate page for reviewers, without the daemon: the jobs
list, each job's Leash Line, its pending diff and its drift timeline. It only
reads the mandate store; approving, widening and undoing stay in the terminal
(tether mandate …). Stop it with Ctrl-C.

The page listens on loopback only (127.0.0.1, [::1] or localhost); any other
address is refused. --listen defaults to the configuration's ui.listen
(127.0.0.1:8420) and --state-dir to its state_dir, as for "tether serve",
which serves the same page when the configuration sets ui.enabled: true.

Exit status: 0 when stopped by a signal, 2 for a refused address, 1 for other
errors.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// The same configuration as `tether serve`, so both read
			// the same store and default address.
			cfg, err := config.Resolve(configPath)
			if err != nil {
				return fmt.Errorf("loading configuration: %w", err)
			}
			if !cmd.Flags().Changed("listen") {
				listen = cfg.UI.Listen
			}
			if err := ui.CheckListen(listen); err != nil {
				return &exitError{Code: 2, Err: err}
			}
			dir := stateDir
			if dir == "" {
				dir = cfg.StateDir
			}
			// A viewer has nothing to show in an empty directory; do
			// not create a store there.
			if _, err := os.Stat(filepath.Join(dir, mandate.DBName)); err != nil {
				return fmt.Errorf("no mandate store in %s (observe a job first, or pass --state-dir): %w", dir, err)
			}
			store, err := mandate.Open(dir, mandate.Options{})
			if err != nil {
				return err
			}
			defer store.Close()
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			opts := ui.Options{}
			if p, ok := cfg.Profile(""); ok {
				opts.Profile, opts.ProfileViolation = p.Name, string(p.Mandate.InteractiveViolation)
			}
			err = ui.Serve(ctx, listen, store, opts, func(s *ui.Server) {
				fmt.Fprintf(cmd.ErrOrStderr(), "tether: mandate page at %s (read-only; Ctrl-C to stop)\n", s.URL())
			})
			if errors.Is(err, ui.ErrNotLoopback) {
				return &exitError{Code: 2, Err: err}
			}
			if errors.Is(err, context.Canceled) {
				return nil
			}
			return err
		},
	}
	cmd.Flags().StringVar(&listen, "listen", config.DefaultListen, "loopback host:port to listen on (default: the configuration's ui.listen)")
	cmd.Flags().StringVar(&stateDir, "state-dir", "", "state directory (default: the configuration's state_dir: $TETHER_STATE_DIR, /var/lib/tether as root, else $XDG_STATE_HOME/tether)")
	cmd.Flags().StringVar(&configPath, "config", "", "configuration file (default: $TETHER_CONFIG, ~/.config/tether/config.yaml, /etc/tether/config.yaml)")
	return cmd
}
