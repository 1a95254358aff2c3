package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/tether-dev/tether/rootfs"
)

func init() { addCommand("rootfs", newRootfsCmd) }

func newRootfsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rootfs",
		Short: "Build root filesystems for the sandbox",
		Long: `A sandboxed command runs in the host layout (host system directories bound
read-only) or in a prepared root filesystem directory given with --rootfs DIR.
"tether rootfs build" prepares such a directory.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newRootfsBuildCmd())
	return cmd
}

func newRootfsBuildCmd() *cobra.Command {
	var (
		from   string
		opts   rootfs.BuildOptions
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "build --from busybox|debootstrap DIR",
		Short: "Build a root filesystem directory from busybox or debootstrap",
		Long: `Build a root filesystem in DIR for "tether run --rootfs DIR".

  --from busybox      Debian's static busybox (package busybox-static) and its
                      applet links, /etc/passwd and /etc/group with root and
                      nobody, and the mount points /proc /sys /dev /tmp
                      /workspace. About a second; no root needed.
  --from debootstrap  a minimal Debian (debootstrap --variant=minbase SUITE)
                      from --mirror, by default the mirror this machine's apt
                      sources use for SUITE. Needs root and package debootstrap.

The root is built next to DIR and renamed into place when complete and
checked, so a failed or interrupted build leaves DIR unchanged. DIR must be
absent or empty unless --force is given. Progress goes to stderr; --json
prints the result on stdout.

Exit status: 0 when built, 130 when interrupted, 1 on any other error.`,
		Example: `  tether rootfs build --from busybox ~/.local/share/tether/roots/busybox
  sudo tether rootfs build --from debootstrap --suite bookworm /var/lib/tether/roots/bookworm`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.From = rootfs.Source(from)
			opts.Dir = args[0]
			if opts.From != rootfs.FromDebootstrap && (cmd.Flags().Changed("suite") || cmd.Flags().Changed("mirror")) {
				return fmt.Errorf("--suite and --mirror apply only to --from debootstrap")
			}
			opts.Progress = cmd.ErrOrStderr()
			// Interrupting tether must stop the build's process group (which
			// is not in the terminal's foreground group) and clean up.
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			res, err := rootfs.Build(ctx, opts)
			if err != nil && ctx.Err() != nil && cmd.Context().Err() == nil {
				// Stopped by SIGINT/SIGTERM: the shell's 128+SIGINT.
				return &exitError{Code: 130, Err: fmt.Errorf("interrupted: %w", err)}
			}
			if err != nil {
				return err
			}
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(struct {
					rootfs.BuildResult
					Seconds float64 `json:"seconds"`
				}{res, res.Duration.Seconds()})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s\n", res.Dir)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&from, "from", "", "source: busybox or debootstrap (required)")
	f.StringVar(&opts.Suite, "suite", rootfs.DefaultSuite, "Debian suite for --from debootstrap")
	f.StringVar(&opts.Mirror, "mirror", "", "Debian mirror URL for --from debootstrap (default: the one apt uses for the suite, else "+rootfs.FallbackMirror+")")
	f.BoolVar(&opts.Force, "force", false, "replace DIR if it exists and is not empty")
	f.BoolVar(&asJSON, "json", false, "print the result as JSON on stdout")
	_ = cmd.MarkFlagRequired("from")
	return cmd
}
