package config

import (
	"time"
)

// Config is a loaded, validated configuration. After Load every profile is
// complete: defaults are applied and paths are absolute, so consumers never
// guess a missing value. A Config is plain data; it is not modified after
// loading and may be shared between goroutines for reading.
type Config struct {
	// StateDir holds tether's state (allowlists, audit log, database).
	// $TETHER_STATE_DIR overrides it. Default: /var/lib/tether for root,
	// else $XDG_STATE_HOME/tether, else ~/.local/state/tether.
	StateDir string `yaml:"state_dir" json:"state_dir"`
	// DefaultProfile names the profile used when a call names none.
	// Default: "default". It must exist in Profiles.
	DefaultProfile string `yaml:"default_profile" json:"default_profile"`
	// UI configures the optional web UI (served by `tether serve`).
	UI UI `yaml:"ui" json:"ui"`
	// Profiles maps a profile name to its settings. Names are made of
	// letters, digits, '-', '_' and '.', because they name state files.
	Profiles map[string]*Profile `yaml:"profiles" json:"profiles"`

	// Source is the file the configuration came from, or EmbeddedSource.
	Source string `yaml:"-" json:"source"`
}

// EmbeddedSource is Config.Source for the built-in default configuration.
const EmbeddedSource = "<embedded default>"

// UI configures the web UI.
type UI struct {
	Enabled bool   `yaml:"enabled" json:"enabled"`
	Listen  string `yaml:"listen" json:"listen"` // host:port; default 127.0.0.1:8420
}

// Profile is one agent profile: where its commands run, which secrets it
// sees, and how its flagged commands are approved.
type Profile struct {
	Name             string     `yaml:"-" json:"name"`
	Terminal         Terminal   `yaml:"terminal" json:"terminal"`
	Secrets          Secrets    `yaml:"secrets" json:"secrets"`
	Approvals        Approvals  `yaml:"approvals" json:"approvals"`
	Files            Files      `yaml:"files" json:"files"`
	Guardrails       Guardrails `yaml:"guardrails" json:"guardrails"`
	EnabledToolsets  []string   `yaml:"enabled_toolsets" json:"enabled_toolsets"`
	DisabledToolsets []string   `yaml:"disabled_toolsets" json:"disabled_toolsets"`
	Mandate          Mandate    `yaml:"mandate" json:"mandate"`
}

// Guardrails are a profile's loop guardrail thresholds, counted per turn
// (the model's calls between two user messages; under MCP see
// docs/mcp.md). Each counter warns at Warn, refuses further matching calls
// at Block and, with hard stops on, ends the turn at Halt. 0 or absent
// takes the default.
type Guardrails struct {
	// IdenticalFailures counts failures of the same call (tool and
	// arguments); default 2/3/5. A landed file mutation, or a workspace
	// changed since the call last failed, resets it for that call.
	IdenticalFailures Threshold `yaml:"identical_failures" json:"identical_failures"`
	// ToolFailures counts failures of one tool, whatever the arguments;
	// default 3/5/8.
	ToolFailures Threshold `yaml:"tool_failures" json:"tool_failures"`
	// NoProgress counts identical calls with identical results; default
	// 3/4/6.
	NoProgress Threshold `yaml:"no_progress" json:"no_progress"`
	// InvalidBatches is how many consecutive batches of only invalid calls
	// end the turn; default 3.
	InvalidBatches int `yaml:"invalid_batches" json:"invalid_batches"`
	// HardStop turns halting on or off; absent means on for unattended
	// platforms and off where a person can intervene.
	HardStop *bool `yaml:"hard_stop" json:"hard_stop"`
}

// Threshold is one guardrail counter's warn, block and halt counts.
type Threshold struct {
	Warn  int `yaml:"warn" json:"warn"`
	Block int `yaml:"block" json:"block"`
	Halt  int `yaml:"halt" json:"halt"`
}

// Backend says where a profile's terminal commands run.
type Backend string

// Backends.
const (
	BackendSandbox Backend = "sandbox" // namespaces + cgroups (DESIGN.md §5); the default
	BackendHost    Backend = "host"    // directly on the host, as tether's user; no isolation
)

// Terminal is a profile's complete terminal policy.
type Terminal struct {
	Backend Backend `yaml:"backend" json:"backend"`
	// Cwd is the workspace: the working directory of commands, bound
	// read-write into the sandbox. Relative paths are resolved against the
	// config file's directory; "~" is the user's home. Empty means "the
	// caller's working directory", supplied when the scope is resolved.
	Cwd string `yaml:"cwd" json:"cwd"`
	// Rootfs is a prepared root filesystem directory (tether rootfs build).
	// Empty means the host's system directories, bound read-only.
	Rootfs  string  `yaml:"rootfs" json:"rootfs"`
	Network Network `yaml:"network" json:"network"`
	Limits  Limits  `yaml:"limits" json:"limits"`
	// LifetimeSeconds is how long an idle session sandbox lives.
	// Default 300; 0 means the default.
	LifetimeSeconds int `yaml:"lifetime_seconds" json:"lifetime_seconds"`
	// PersistCwd reports whether a `cd` in one call carries over to the
	// session's next call. Default true (set after loading, never nil).
	PersistCwd *bool `yaml:"persist_cwd" json:"persist_cwd"`
	// Pool is how many pre-started sandboxes tether serve keeps ready for
	// the profile's one-shot commands (a call with session: false, cron
	// and webhook platforms, tether run next to the daemon): each serves
	// one command and is destroyed. Default DefaultPool (set after
	// loading, never nil); 0 disables the pool; at most MaxPool.
	Pool *int `yaml:"pool" json:"pool"`
	// EnvPassthrough names the variables copied from the caller's
	// environment into commands. Nothing else is inherited.
	EnvPassthrough []string `yaml:"env_passthrough" json:"env_passthrough"`
	// Mounts are extra host paths shown in the sandbox at the same path
	// (build caches such as ~/.cache/go-build or ~/.npm). See Mount for
	// what is refused.
	Mounts []Mount `yaml:"mounts" json:"mounts"`
}

// NetworkMode is a sandbox's network access.
type NetworkMode string

// Network modes.
const (
	NetworkNone  NetworkMode = "none"  // loopback only; the default
	NetworkHost  NetworkMode = "host"  // the host's network namespace
	NetworkProxy NetworkMode = "proxy" // egress only through tether's filtering proxy
)

// Network is a sandbox's network policy. Allow and Deny are host patterns
// ("example.com", "*.example.com", an IP or CIDR, optionally ":port") and
// apply only in proxy mode; Deny wins over Allow.
type Network struct {
	Mode  NetworkMode `yaml:"mode" json:"mode"`
	Allow []string    `yaml:"allow" json:"allow"`
	Deny  []string    `yaml:"deny" json:"deny"`
	// Limits of the egress proxy per sandbox (proxy mode only): a
	// one-shot command's, or a session's over all its commands, so a
	// background process gets no fresh allowance per command. 0 or absent
	// means the proxy's default (64 concurrent connections, no byte cap,
	// 10s to connect, 2m idle).
	MaxConnections int      `yaml:"max_connections" json:"max_connections"` // concurrent connections
	MaxBytes       ByteSize `yaml:"max_bytes" json:"max_bytes"`             // bytes both ways, all connections
	ConnectTimeout Duration `yaml:"connect_timeout" json:"connect_timeout"` // to connect upstream
	IdleTimeout    Duration `yaml:"idle_timeout" json:"idle_timeout"`       // a connection with no traffic is closed
}

// Limits bound what one profile's commands may use. A zero value in the
// file means the default given for each field; negative values are errors.
//
// Memory and Pids bound the profile's parent cgroup: everything the
// profile runs together. SandboxMemory and SandboxPids are each sandbox's
// own budget inside it (a one-shot command, or a session: its supervisor,
// commands and background processes together), so one session or client
// cannot starve another.
type Limits struct {
	Memory        ByteSize `yaml:"memory" json:"memory"`                 // default 1GiB, for the profile's whole cgroup
	Pids          int      `yaml:"pids" json:"pids"`                     // default 8192, for the profile's whole cgroup
	SandboxMemory ByteSize `yaml:"sandbox_memory" json:"sandbox_memory"` // default 256MiB (at most memory), per sandbox
	SandboxPids   int      `yaml:"sandbox_pids" json:"sandbox_pids"`     // default 64 (at most pids), per sandbox
	CPUs          float64  `yaml:"cpus" json:"cpus"`                     // default 1.0
	Timeout       Duration `yaml:"timeout" json:"timeout"`               // wall clock per command; default 180s
	Output        ByteSize `yaml:"output" json:"output"`                 // stdout+stderr kept per command; default 1MiB
	Tmpfs         ByteSize `yaml:"tmpfs" json:"tmpfs"`                   // size of /tmp; default 256MiB
	// Disk caps what a command, or a session over its life, may add to the
	// workspace; 0 means no limit. Enforced with project quotas where the
	// workspace's filesystem has them, otherwise listed in the result's
	// not_enforced.
	Disk ByteSize `yaml:"disk" json:"disk"`
}

// Secrets is where a profile's secrets come from. Values given in both
// places take the named value.
type Secrets struct {
	// EnvFile is a file of NAME=VALUE lines ("#" comments, optional
	// "export ", optional single or double quotes). Relative paths are
	// resolved against the config file's directory.
	EnvFile string `yaml:"env_file" json:"env_file"`
	// Values are named secrets written in the config itself.
	Values map[string]string `yaml:"values" json:"values"`

	envFileLine int // where env_file was set, for CheckSecrets
}

// Mode is how flagged commands are approved.
type Mode string

// Approval modes.
const (
	ModeManual Mode = "manual" // ask a person (the default)
	ModeSmart  Mode = "smart"  // ask a secondary model first; ESCALATE asks a person
	ModeOff    Mode = "off"    // approve the approval tier; the hardline floor and deny globs still hold
)

// UnattendedPolicy is what happens to a flagged command when nobody can be
// asked (cron, webhook, api, single-query platforms).
type UnattendedPolicy string

// Unattended policies.
const (
	UnattendedDeny    UnattendedPolicy = "deny" // the default
	UnattendedApprove UnattendedPolicy = "approve"
)

// Approvals is a profile's approval policy.
type Approvals struct {
	Mode Mode `yaml:"mode" json:"mode"`
	// Timeout is how long a person or model has to answer; silence is a
	// deny. Default 300s.
	Timeout Duration `yaml:"timeout" json:"timeout"`
	// CronMode applies to the cron platform, UnattendedMode to webhook,
	// api and single-query. Both default to deny.
	CronMode       UnattendedPolicy `yaml:"cron_mode" json:"cron_mode"`
	UnattendedMode UnattendedPolicy `yaml:"unattended_mode" json:"unattended_mode"`
	// CommandAllowlist holds commands approved permanently: exact
	// normalised command text or a glob ("*" any run of characters, "?"
	// one character, "\" escapes), or "=<exact source text>" for a command
	// the analyser cannot see into. It is merged with the entries that
	// "always" answers add to <state_dir>/allowlist/<profile>.json.
	CommandAllowlist []string `yaml:"command_allowlist" json:"command_allowlist"`
	// Deny holds globs matched against normalised programs; a match
	// refuses the command whoever approves.
	Deny []string `yaml:"deny" json:"deny"`
	// Ask holds globs like Deny's, on the same normalised programs; a match
	// goes to a person even when the rule catalog would allow the command.
	// Yolo, mode off, the allowlist, session approvals and the smart
	// reviewer do not answer it, and an unattended platform, where nobody
	// can be asked, refuses it. The hardline floor and Deny still win.
	Ask   []string `yaml:"ask" json:"ask"`
	Smart Smart    `yaml:"smart" json:"smart"`
	// Webhook is told about every request queued for the gateway
	// platform (tether serve), besides the API's server-sent events.
	Webhook Webhook `yaml:"webhook" json:"webhook"`
}

// Webhook is where the gateway POSTs pending approval requests:
// {"event": "approval.pending", "request": {...}}. The messaging side
// answers through the API; a failed POST is logged and the request stays
// pending.
type Webhook struct {
	// URL is the http(s) endpoint; empty means no webhook.
	URL string `yaml:"url" json:"url"`
	// TokenSecret names the profile secret sent as "Authorization:
	// Bearer <value>"; empty sends no Authorization header.
	TokenSecret string `yaml:"token_secret" json:"token_secret"`
}

// Smart configures the secondary-model route (mode: smart).
type Smart struct {
	// Endpoint is an OpenAI-compatible base URL ("http://127.0.0.1:11434",
	// "https://api.example.com/v1") or the full chat-completions URL.
	Endpoint string `yaml:"endpoint" json:"endpoint"`
	Model    string `yaml:"model" json:"model"`
	// KeySecret names the profile secret holding the API key; empty sends
	// no Authorization header.
	KeySecret string `yaml:"key_secret" json:"key_secret"`
	// Policy is extra guidance for the model (what this agent is for).
	Policy string `yaml:"policy" json:"policy"`
	// Timeout bounds one request; a timeout is ESCALATE. Default 30s.
	Timeout Duration `yaml:"timeout" json:"timeout"`
	// MaxDenials is how many DENY answers in one session open the
	// session's breaker (later requests go to a person). Default 3.
	MaxDenials int `yaml:"max_denials" json:"max_denials"`
}

// Violation is what an interactive run does with a call outside its mandate.
type Violation string

// Violation handling.
const (
	ViolationBlock   Violation = "block"   // the default
	ViolationApprove Violation = "approve" // escalate to the approval prompt
)

// Mandate holds a profile's mandate settings.
type Mandate struct {
	InteractiveViolation Violation `yaml:"interactive_violation" json:"interactive_violation"`
}

// Defaults applied to unset values.
const (
	DefaultProfileName     = "default"
	DefaultListen          = "127.0.0.1:8420"
	DefaultLifetimeSeconds = 300
	DefaultPool            = 2
	MaxPool                = 16
	DefaultApprovalTimeout = 300 * time.Second
	DefaultSmartTimeout    = 30 * time.Second
	DefaultSmartMaxDenials = 3
	DefaultMemory          = ByteSize(1 << 30)
	DefaultPids            = 8192
	DefaultSandboxMemory   = ByteSize(256 << 20)
	DefaultSandboxPids     = 64
	DefaultCPUs            = 1.0
	DefaultCommandTimeout  = 180 * time.Second
	DefaultOutput          = ByteSize(1 << 20)
	DefaultTmpfs           = ByteSize(256 << 20)
)

// Profile returns the named profile, or the default profile for "".
// It reports false when there is no such profile.
func (c *Config) Profile(name string) (*Profile, bool) {
	if name == "" {
		name = c.DefaultProfile
	}
	p, ok := c.Profiles[name]
	return p, ok
}
