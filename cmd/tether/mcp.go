package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/tether-dev/tether/approval"
	"github.com/tether-dev/tether/config"
	"github.com/tether-dev/tether/runner"
)

func init() { addCommand("mcp", newMCPCmd) }

func newMCPCmd() *cobra.Command {
	var cfgPath, profile, job, platform, stateRoot, prefix string
	cmd := &cobra.Command{
		Use:   "mcp [--profile P] [--job J] [--platform cli|cron|…]",
		Short: "Serve the terminal and file tools to an MCP client over stdio",
		Long: `tether mcp is an MCP server on stdin/stdout. It exposes the profile's visible
tools (terminal, process, read_file, write_file, patch, search_files) with all of
tether's gates: commands run in the profile's sandbox, the hardline floor and
deny rules refuse, the job's mandate (--job) is enforced, and file tools
cannot leave the workspace or write protected paths.

When a command needs approval and the client supports elicitation, the user
is asked through it (once, session, always or deny). When the client cannot
elicit, the request waits in this server's approval queue, up to the
profile's approvals.timeout, for a person on this machine to answer it with
"tether approvals --mcp list|approve|deny"; unanswered, it is denied and
nothing ran. The queue is a 0600 socket in $TETHER_MCP_APPROVAL_DIR, else
the "mcp" directory next to tether serve's default socket.

The workspace is the profile's terminal.cwd, else the current directory.
--platform says where the calls come from: cli (the default, a person's own
client), or an unattended platform (cron, webhook, api, single-query) for an
agent that runs without anyone watching: approvals then follow the profile's
cron_mode / unattended_mode, nobody is asked, and a --job's mandate treats the
run as unattended.

Configure it in an MCP client as: {"command": "tether", "args": ["mcp"]}.

Exit status: 0 when the client closed the session, 1 when it cannot start
(bad configuration, unknown profile), 2 for bad usage.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			plat, err := approval.ParsePlatform(platform)
			if err != nil {
				return &usageError{err: fmt.Errorf("--platform: %w", err)}
			}
			cfg, err := config.Resolve(cfgPath)
			if err != nil {
				return &exitError{Code: 1, Err: fmt.Errorf("loading the configuration: %w", err)}
			}
			wd, err := os.Getwd()
			if err != nil {
				return &exitError{Code: 1, Err: fmt.Errorf("finding the current directory: %w", err)}
			}
			// stdout carries the protocol: logs go to stderr only.
			log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelWarn}))
			m, err := runner.NewMCP(runner.MCPOptions{Config: cfg, Profile: profile, Job: job, Platform: plat, Cwd: wd,
				Sandbox: *runnerFor(stateRoot, prefix, "", 0), Version: version, Logger: log, ApprovalDir: mcpApprovalDir()})
			if err != nil {
				return &exitError{Code: 1, Err: err}
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, unix.SIGTERM)
			defer stop()
			if err := m.Run(ctx, &mcp.StdioTransport{}); err != nil {
				return &exitError{Code: 1, Err: err}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&cfgPath, "config", "", "config file (default: $TETHER_CONFIG, then the XDG and /etc paths, then the embedded default)")
	fl.StringVar(&profile, "profile", "", "profile (default: the config's default profile)")
	fl.StringVar(&job, "job", "", "mandate job the calls belong to (observed, or enforced once approved)")
	fl.StringVar(&platform, "platform", "cli", "where the calls come from: cli, gateway, cron, webhook, api or single-query")
	fl.StringVar(&stateRoot, "state-root", "", "sandbox state root (default: $TETHER_STATE_ROOT)")
	fl.StringVar(&prefix, "cgroup-prefix", "", "cgroup directory of the sandboxes (default: $TETHER_CGROUP_PREFIX, else tether)")
	return cmd
}
