package approval

import (
	"path"
	"strings"
	"sync"

	"github.com/tether-dev/tether/shellparse"
)

// This file holds the matchers behind the catalog. Every matcher works on
// shellparse's structure (the peeled program, its argument words, its
// redirections, wrappers, opaque segments and functions); string matching is
// used only on single, already-parsed word values (a flag, a path, a payload
// that shellparse could not parse because it is not shell).

// analyzer collects the findings for one command string.
type analyzer struct {
	src      string
	opts     AnalyzeOptions
	home     string // cleaned opts.Home
	cwd      string // canonical opts.Cwd
	depth    int    // nesting of sub-analyses (normalised variants, argument texts)
	script   *shellparse.Script
	findings []Finding
	dry      bool // the current command is a --dry-run/--help form
}

// maxSubDepth bounds the analyses nested inside one Analyze call.
const maxSubDepth = 2

// hit records a finding for rule id at text/span, once per rule and span.
func (a *analyzer) hit(id, text string, span shellparse.Span) {
	r := ruleIndex()[id]
	if r == nil {
		panic("approval: unknown rule id " + id) // a programming error, caught by tests
	}
	for i := range a.findings {
		if a.findings[i].Rule == id && a.findings[i].Span == span {
			return
		}
	}
	a.findings = append(a.findings, Finding{Rule: id, Tier: r.Tier, Description: r.Description, Text: text, Span: span})
}

// hitCmd records a finding for the whole command c. In the --dry-run form of
// a command, approval-tier command findings are dropped (hardline never is).
func (a *analyzer) hitCmd(id string, c *shellparse.Command) {
	if a.dry && ruleIndex()[id].Tier == TierApproval {
		return
	}
	a.hit(id, c.Text, c.Span)
}

// sub analyses text (an argument or a normalised variant) with the same
// options, or returns nil when the nesting budget is spent.
func (a *analyzer) sub(text string) *Analysis {
	if a.depth >= maxSubDepth || text == "" {
		return nil
	}
	an, err := analyze(text, a.opts, a.depth+1)
	if err != nil {
		return nil
	}
	return an
}

// run applies every rule to the parsed script.
func (a *analyzer) run() {
	s := a.script
	for i := range s.Opaque {
		a.opaque(&s.Opaque[i])
	}
	for i := range s.Functions {
		f := &s.Functions[i]
		if f.Invoked && (f.SelfPipe || f.SelfBackground) {
			a.hit(RuleForkBomb, a.text(f.Span), f.Span)
		}
	}
	for i := range s.Commands {
		a.command(&s.Commands[i])
	}
}

// text returns the source text at span, or the whole source when the span
// does not fit it.
func (a *analyzer) text(sp shellparse.Span) string {
	if sp.Start >= 0 && sp.Start <= sp.End && sp.End <= len(a.src) {
		return a.src[sp.Start:sp.End]
	}
	return a.src
}

// opaque maps an opaque segment to its rule: one finding per segment.
func (a *analyzer) opaque(o *shellparse.Opaque) {
	id := RuleOpaque
	switch o.Kind {
	case shellparse.OpaqueDynamicProgram:
		id = RuleDynamicProg
	case shellparse.OpaqueEval:
		id = RuleEval
	case shellparse.OpaqueSource:
		id = RuleSource
	case shellparse.OpaquePayload:
		id = RuleOpaquePay
	case shellparse.OpaquePipedShell:
		id = RulePipeShell
	case shellparse.OpaqueHeredoc:
		id = RuleHeredocInt
	case shellparse.OpaqueDepth:
		id = RuleDepthLimit
	case shellparse.OpaqueDivergence:
		id = RuleDivergence
	}
	a.hit(id, o.Text, o.Span)
}

// opaqueCovers reports whether an opaque segment overlaps span, so that a
// command-level rule does not report the same segment twice.
func (a *analyzer) opaqueCovers(sp shellparse.Span) bool {
	for i := range a.script.Opaque {
		o := a.script.Opaque[i].Span
		if o.Start < sp.End && sp.Start < o.End {
			return true
		}
	}
	return false
}

// argv returns the argument values of c.
func argv(c *shellparse.Command) []string {
	out := make([]string, len(c.Args))
	for i, w := range c.Args {
		out[i] = w.Value
	}
	return out
}

// command applies the command rules to one simple command.
func (a *analyzer) command(c *shellparse.Command) {
	args := argv(c)
	a.dry = false
	for i := range c.Wrappers {
		a.wrapper(c, &c.Wrappers[i])
	}
	a.env(c)
	a.redirs(c, args)
	if len(args) > 0 && (args[0] == "--help" || args[0] == "--version") {
		return
	}
	a.dry = !forwardsArgs()[c.Program] && (isDryRun(args) || hasLong(args, "--help"))
	prog := c.Program
	a.program(c, prog, args)
	a.interpreter(c, args)
	a.secretRead(c, args)
	a.hardlineText(c)
	a.dry = false
}

// forwardsArgs are programs that hand (some of) their arguments to another
// command, so a "--help" or "--dry-run" among them may belong to that
// command: ssh host 'rm -rf x;' --help runs rm. They get no waiver.
var forwardsArgs = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"ssh": true, "mosh": true, "docker": true, "podman": true, "nerdctl": true, "npm": true, "npx": true,
		"yarn": true, "pnpm": true, "bun": true, "cargo": true, "go": true, "make": true, "nix": true, "uv": true,
		"poetry": true, "pipx": true, "just": true, "task": true,
	}
})

// isDryRun reports whether args ask the program only to show what it would do.
func isDryRun(args []string) bool {
	for _, v := range args {
		if v == "--" {
			return false
		}
		if v == "--dry-run" || strings.HasPrefix(v, "--dry-run=") || v == "--simulate" || v == "--just-print" {
			return true
		}
	}
	return false
}

// operands returns the non-option arguments: those not starting with "-"
// and every argument after "--". valued lists options that take the next
// argument as their value.
func operands(args []string, valued ...string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		v := args[i]
		if v == "--" {
			return append(out, args[i+1:]...)
		}
		if len(v) > 1 && v[0] == '-' {
			for _, o := range valued {
				if v == o {
					i++
					break
				}
			}
			continue
		}
		out = append(out, v)
	}
	return out
}

// hasShort reports whether a short-option cluster before "--" contains any
// of the letters in set ("-rf" has 'r' and 'f').
func hasShort(args []string, set string) bool {
	for _, v := range args {
		if v == "--" {
			return false
		}
		if len(v) > 1 && v[0] == '-' && v[1] != '-' && strings.ContainsAny(v[1:], set) {
			return true
		}
	}
	return false
}

// hasLong reports whether one of the long options (or "--opt=value") occurs
// before "--".
func hasLong(args []string, opts ...string) bool {
	for _, v := range args {
		if v == "--" {
			return false
		}
		for _, o := range opts {
			if v == o || (strings.HasPrefix(v, o) && len(v) > len(o) && v[len(o)] == '=') {
				return true
			}
		}
	}
	return false
}

// optValue returns the value of an option given as "opt value", "opt=value"
// (long) or "-Xvalue" (short), and whether it was present.
func optValue(args []string, opts ...string) (string, bool) {
	for i, v := range args {
		if v == "--" {
			break
		}
		for _, o := range opts {
			switch {
			case v == o:
				if i+1 < len(args) {
					return args[i+1], true
				}
				return "", true
			case strings.HasPrefix(o, "--") && strings.HasPrefix(v, o+"="):
				return v[len(o)+1:], true
			case len(o) == 2 && o[1] != '-' && strings.HasPrefix(v, o) && len(v) > 2 && v[1] != '-':
				return v[2:], true
			}
		}
	}
	return "", false
}

// firstOperand returns the first non-option argument and the arguments after
// it, skipping the values of the listed options.
func firstOperand(args []string, valued ...string) (string, []string) {
	for i := 0; i < len(args); i++ {
		v := args[i]
		if v == "--" {
			if i+1 < len(args) {
				return args[i+1], args[i+2:]
			}
			return "", nil
		}
		if len(v) > 1 && v[0] == '-' {
			if !strings.Contains(v, "=") {
				for _, o := range valued {
					if v == o {
						i++
						break
					}
				}
			}
			continue
		}
		return v, args[i+1:]
	}
	return "", nil
}

// program dispatches on the effective program name.
func (a *analyzer) program(c *shellparse.Command, prog string, args []string) {
	switch prog {
	case "rm":
		a.rm(c, args)
	case "find":
		a.find(c, args)
	case "xargs", "parallel":
		if op, _ := firstOperand(args, "-I", "-i", "-L", "-n", "-P", "-d", "-E", "-s", "-a"); path.Base(op) == "rm" {
			a.hitCmd(RuleRmIndirect, c)
		}
	case "chmod":
		a.chmod(c, args)
	case "chown", "chgrp":
		if hasShort(args, "R") || hasLong(args, "--recursive") {
			a.hitCmd(RuleChown, c)
		}
	case "git":
		a.git(c, args)
	case "dd":
		a.dd(c, args)
	case "shred":
		for _, v := range operands(args, "-n", "-s", "--iterations", "--size", "--random-source") {
			if isBlockDevice(a.fold(v)) {
				a.hitCmd(RuleDiskWrite, c)
			}
		}
	case "mkfs", "mke2fs", "mkswap", "mkdosfs", "mkntfs", "mkexfatfs", "mkfs.ext2", "mkfs.ext3", "mkfs.ext4",
		"mkfs.xfs", "mkfs.btrfs", "mkfs.vfat", "mkfs.fat", "mkfs.ntfs", "mkfs.exfat", "mkfs.f2fs", "mkfs.minix":
		a.blockOperand(c, args, RuleDiskFormat)
	case "wipefs":
		if !hasShort(args, "n") && !hasLong(args, "--no-act") && (hasShort(args, "ao") || hasLong(args, "--all", "--offset")) {
			a.blockOperand(c, args, RuleDiskFormat)
		}
	case "sgdisk", "sfdisk", "parted":
		if hasShort(args, "zZo") || hasLong(args, "--zap", "--zap-all", "--clear", "--delete") || hasWord(args, "mklabel") {
			a.blockOperand(c, args, RuleDiskFormat)
		}
	case "diskutil":
		for _, v := range args {
			switch strings.ToLower(v) {
			case "erasedisk", "erasevolume", "zerodisk", "randomdisk", "secureerase", "partitiondisk", "reformat", "deletecontainer", "deletevolume":
				a.hitCmd(RuleDiskFormat, c)
			}
		}
	case "kill":
		a.kill(c, args)
	case "killall5":
		a.hitCmd(RuleKillAll, c)
	case "pkill", "killall":
		a.hitCmd(RuleKill, c)
	case "shutdown", "reboot", "halt", "poweroff":
		if !hasShort(args, "c") {
			a.hitCmd(RulePower, c)
		}
	case "init", "telinit":
		if len(args) > 0 {
			switch args[0] {
			case "0", "6", "1", "s", "S", "single", "emergency":
				a.hitCmd(RulePower, c)
			}
		}
	case "systemctl", "loginctl":
		a.systemctl(c, args)
	case "service", "rc-service":
		if len(args) >= 2 {
			switch args[1] {
			case "stop", "restart", "force-reload", "zap":
				a.hitCmd(RuleServiceStop, c)
			}
		}
	case "launchctl":
		if sub, _ := firstOperand(args); sub == "bootout" || sub == "unload" || sub == "remove" || sub == "stop" || sub == "kill" || sub == "disable" {
			a.hitCmd(RuleServiceStop, c)
		}
	case "sudo":
		a.sudoStdin(c, args)
	case "truncate":
		a.hitCmd(RuleTruncate, c)
	case "crontab":
		if hasShort(args, "re") || len(operands(args, "-u")) > 0 {
			a.hitCmd(RuleCrontab, c)
		}
	case "docker", "podman", "nerdctl":
		a.container(c, args)
	case "kubectl":
		if sub, _ := firstOperand(args, "-n", "--namespace", "--context", "-l"); sub == "delete" || sub == "drain" {
			a.hitCmd(RuleContainer, c)
		}
	case "ssh":
		a.ssh(c, args)
	case "nc", "ncat", "netcat", "nc.traditional", "nc.openbsd":
		if hasShort(args, "ec") || hasLong(args, "--exec", "--sh-exec", "--lua-exec") {
			a.hitCmd(RuleReverseShell, c)
		}
	case "socat":
		for _, v := range args {
			l := strings.ToLower(v)
			if strings.HasPrefix(l, "exec:") || strings.HasPrefix(l, "system:") || strings.Contains(l, ",exec:") {
				a.hitCmd(RuleReverseShell, c)
			}
		}
	case "psql", "mysql", "mariadb", "sqlite3", "mongo", "mongosh", "clickhouse-client", "cockroach":
		for _, v := range args {
			if isDestructiveSQL(v) {
				a.hitCmd(RuleDBDrop, c)
				break
			}
		}
	case "redis-cli", "valkey-cli":
		for _, v := range args {
			if l := strings.ToLower(v); l == "flushall" || l == "flushdb" {
				a.hitCmd(RuleDBDrop, c)
			}
		}
	case "dropdb", "dropuser":
		a.hitCmd(RuleDBDrop, c)
	case "mysqladmin":
		if hasWord(args, "drop") {
			a.hitCmd(RuleDBDrop, c)
		}
	case "apt", "apt-get", "aptitude", "yum", "dnf", "microdnf", "zypper", "snap", "flatpak", "brew", "port", "conda", "mamba", "gem", "cargo", "pipx":
		if hasShort(args, "s") && (prog == "apt" || prog == "apt-get") {
			return // apt-get -s simulates
		}
		switch sub, _ := firstOperand(args, "-o", "-c", "-t"); sub {
		case "remove", "purge", "autoremove", "erase", "rm", "uninstall", "autopurge", "reinstall-remove":
			a.hitCmd(RulePkgRemove, c)
		}
	case "dpkg":
		if hasShort(args, "rP") || hasLong(args, "--remove", "--purge") {
			a.hitCmd(RulePkgRemove, c)
		}
	case "pacman":
		if hasShort(args, "R") || hasLong(args, "--remove") {
			a.hitCmd(RulePkgRemove, c)
		}
	case "apk":
		if sub, _ := firstOperand(args); sub == "del" {
			a.hitCmd(RulePkgRemove, c)
		}
	case "pip", "pip3", "uv":
		for _, v := range operands(args) {
			if v == "uninstall" || (prog == "uv" && v == "remove") {
				a.hitCmd(RulePkgRemove, c)
			}
		}
	case "npm", "pnpm", "yarn", "bun":
		a.jsPackages(c, prog, args)
	case "sort":
		if v, ok := optValue(args, "--compress-program"); ok {
			a.execOption(c, v)
		}
		if hasLong(args, "--output") || hasShort(args, "o") {
			a.writeOption(c, args, "-o", "--output")
		}
	case "rg":
		if v, ok := optValue(args, "--pre", "--hostname-bin"); ok {
			a.execOption(c, v)
		}
	case "man":
		a.man(c, args)
	case "tar":
		if v, ok := optValue(args, "--to-command", "--use-compress-program", "-I", "--checkpoint-action", "--info-script", "-F", "--new-volume-script", "--rsh-command", "--rmt-command"); ok {
			a.execOption(c, v)
		}
	case "rsync":
		if hasLong(args, "--delete", "--delete-before", "--delete-during", "--delete-after", "--delete-delay", "--delete-excluded", "--remove-source-files") {
			a.hitCmd(RuleRmRecursive, c)
		}
		if v, ok := optValue(args, "-e", "--rsh", "--rsync-path"); ok {
			a.execOption(c, v)
		}
		a.destination(c, args, "--exclude", "--include", "-e", "--rsh", "--rsync-path", "--filter", "-f", "--files-from", "--password-file", "--chmod", "--chown", "--backup-dir", "--suffix", "--log-file", "--partial-dir", "--temp-dir", "-T", "--bwlimit", "--timeout", "--port", "--compare-dest", "--copy-dest", "--link-dest", "--max-size", "--min-size")
	case "zip":
		if v, ok := optValue(args, "-TT", "--unzip-command"); ok {
			a.execOption(c, v)
		}
	case "mv":
		ops := operands(args, "-t", "--target-directory", "-S", "--suffix")
		for i, v := range ops {
			if i < len(ops)-1 {
				a.moveSource(c, v)
			}
		}
		a.destination(c, args, "-t", "--target-directory", "-S", "--suffix")
	case "cp", "install", "ln", "scp":
		a.destination(c, args, "-t", "--target-directory", "-S", "--suffix", "-m", "--mode", "-o", "--owner", "-g", "--group", "-P", "-i", "-F", "-J", "-l", "-c", "-o")
	case "tee":
		for _, v := range operands(args) {
			a.writeTarget(c, v, false)
		}
	case "touch":
		for _, v := range operands(args, "-r", "-d", "-t", "--reference", "--date") {
			a.writeTarget(c, v, false)
		}
	case "curl":
		if v, ok := optValue(args, "-o", "--output"); ok {
			a.writeTarget(c, v, false)
		}
	case "wget":
		if v, ok := optValue(args, "-O", "--output-document"); ok {
			a.writeTarget(c, v, false)
		}
	case "sed":
		a.inPlace(c, args, "sed")
	case "hermes":
		a.hermes(c, args)
	case "tether":
		if sub, _ := firstOperand(args, "--home", "--cwd", "--config"); sub != "" {
			switch sub {
			case "check", "rules", "version", "help", "completion", "status", "show", "list", "log", "explain":
			default:
				a.hitCmd(RuleControlPlane, c)
			}
		}
	case "export", "declare", "typeset", "local", "readonly":
		for _, v := range args {
			if i := strings.IndexByte(v, '='); i > 0 && isExecEnv(v[:i]) {
				a.hitCmd(RuleEnvExec, c)
			}
		}
	case "env":
		if envSplit(args) {
			a.hitCmd(RuleEnvSplit, c)
		}
	case "iptables", "ip6tables", "iptables-legacy", "iptables-nft", "ebtables":
		if hasShort(args, "FXPD") || hasLong(args, "--flush", "--delete-chain", "--policy", "--delete") {
			a.hitCmd(RuleFirewall, c)
		}
	case "nft":
		if hasWord(args, "flush") || hasWord(args, "delete") {
			a.hitCmd(RuleFirewall, c)
		}
	case "ufw":
		if hasWord(args, "disable") || hasWord(args, "reset") || hasWord(args, "delete") {
			a.hitCmd(RuleFirewall, c)
		}
	case "passwd", "chpasswd", "useradd", "userdel", "usermod", "groupadd", "groupdel", "groupmod", "adduser", "deluser", "visudo", "vipw", "chsh":
		a.hitCmd(RuleAccounts, c)
	case "mount", "umount", "swapoff", "swapon":
		if len(operands(args, "-t", "-o", "-L", "-U")) > 0 || hasShort(args, "a") {
			a.hitCmd(RuleMount, c)
		}
	case "at", "batch":
		if !hasShort(args, "l") {
			a.hitCmd(RuleCrontab, c)
		}
	case "terraform", "tofu", "pulumi":
		if hasWord(args, "destroy") || hasLong(args, "-destroy") {
			a.hitCmd(RuleContainer, c)
		}
	case "helm":
		if sub, _ := firstOperand(args, "-n", "--namespace", "--kube-context"); sub == "uninstall" || sub == "delete" {
			a.hitCmd(RuleContainer, c)
		}
	case "alias":
		for _, v := range args {
			if _, val, ok := strings.Cut(v, "="); ok && strings.ContainsAny(val, " \t;|&") {
				if sub := a.sub(val); sub != nil && sub.Verdict >= TierApproval {
					a.hitCmd(RuleScriptWrite, c)
				}
			}
		}
	case "gh":
		// gh itself is allowed; its arguments are checked by hardlineText.
	}
}

// hasWord reports whether args contain w exactly.
func hasWord(args []string, w string) bool {
	for _, v := range args {
		if v == w {
			return true
		}
	}
	return false
}

// blockOperand records id when an operand of c is a disk device.
func (a *analyzer) blockOperand(c *shellparse.Command, args []string, id string) {
	for _, v := range args {
		if v == "--" || len(v) == 0 {
			continue
		}
		if isBlockDevice(a.fold(v)) {
			a.hitCmd(id, c)
			return
		}
	}
}

// rm: recursive deletes need approval; of "/", a system directory or a home
// they are hardline. rm named by xargs or find -exec deletes files chosen at
// run time.
func (a *analyzer) rm(c *shellparse.Command, args []string) {
	recursive := hasShort(args, "rR") || hasLong(args, "--recursive")
	force := hasShort(args, "f") || hasLong(args, "--force")
	if recursive {
		for _, v := range operands(args) {
			if isCatastrophicTarget(a.fold(v)) {
				a.hitCmd(RuleRmRoot, c)
				return
			}
		}
	}
	for _, w := range c.Wrappers {
		if w.Program == "xargs" || w.Program == "find" || w.Program == "parallel" {
			a.hitCmd(RuleRmIndirect, c)
		}
	}
	switch {
	case recursive:
		a.hitCmd(RuleRmRecursive, c)
	case force:
		a.hitCmd(RuleRmForce, c)
	}
}

// findValued are find primaries that take one argument.
var findValued = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"-name": true, "-iname": true, "-path": true, "-ipath": true, "-regex": true, "-iregex": true,
		"-type": true, "-xtype": true, "-newer": true, "-perm": true, "-user": true, "-group": true,
		"-size": true, "-mtime": true, "-atime": true, "-ctime": true, "-mmin": true, "-amin": true,
		"-cmin": true, "-maxdepth": true, "-mindepth": true, "-wholename": true, "-iwholename": true,
		"-lname": true, "-ilname": true, "-samefile": true, "-inum": true, "-links": true, "-uid": true,
		"-gid": true, "-fstype": true, "-printf": true, "-used": true, "-context": true, "-regextype": true,
		"-newermt": true, "-anewer": true, "-cnewer": true,
	}
})

// findActions scans find's expression: it reports -delete, file-writing
// actions and the command run by -exec/-ok, and returns the start paths.
func findActions(args []string) (starts []string, del, writes bool, execProg string) {
	i := 0
	for i < len(args) && !(strings.HasPrefix(args[i], "-") || args[i] == "(" || args[i] == "!") {
		starts = append(starts, args[i])
		i++
	}
	for ; i < len(args); i++ {
		v := args[i]
		switch {
		case findValued()[v]:
			i++
		case v == "-delete":
			del = true
		case v == "-fprint" || v == "-fprint0" || v == "-fls" || v == "-fprintf":
			writes = true
			i++
		case v == "-exec" || v == "-execdir" || v == "-ok" || v == "-okdir":
			if i+1 < len(args) && execProg == "" {
				execProg = path.Base(args[i+1])
			}
			for i < len(args) && args[i] != ";" && args[i] != "+" {
				i++
			}
		}
	}
	return starts, del, writes, execProg
}

func (a *analyzer) find(c *shellparse.Command, args []string) {
	starts, del, _, execProg := findActions(args)
	if del {
		for _, s := range starts {
			if isCatastrophicTarget(a.fold(s)) {
				a.hitCmd(RuleRmRoot, c)
				return
			}
		}
		a.hitCmd(RuleFindDelete, c)
	}
	if execProg == "rm" || execProg == "shred" || execProg == "unlink" {
		a.hitCmd(RuleRmIndirect, c)
	}
}

func (a *analyzer) chmod(c *shellparse.Command, args []string) {
	if hasShort(args, "R") || hasLong(args, "--recursive") {
		a.hitCmd(RuleChmod, c)
		return
	}
	ops := operands(args, "--reference")
	if len(ops) == 0 {
		// A mode like "-w" or "-x" looks like an option; such modes only
		// remove permissions.
		return
	}
	if worldWritable(ops[0]) {
		a.hitCmd(RuleChmod, c)
	}
}

// worldWritable reports whether the chmod mode grants write to others.
func worldWritable(mode string) bool {
	if mode == "" {
		return false
	}
	if mode[0] >= '0' && mode[0] <= '7' {
		last := mode[len(mode)-1]
		return last >= '0' && last <= '7' && (last-'0')&2 != 0
	}
	for _, clause := range strings.Split(mode, ",") {
		i := strings.IndexAny(clause, "+=")
		if i < 0 {
			continue
		}
		who, perms := clause[:i], clause[i+1:]
		if strings.ContainsAny(who, "oa") && strings.ContainsRune(perms, 'w') {
			return true
		}
	}
	return false
}

// gitGlobalValued are git options before the subcommand that take a value.
var gitGlobalValued = []string{"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env", "--super-prefix", "--list-cmds"}

// gitSplit returns git's -c settings, its subcommand and the subcommand's
// arguments.
func gitSplit(args []string) (configs []string, sub string, rest []string) {
	for i := 0; i < len(args); i++ {
		v := args[i]
		if v == "-c" && i+1 < len(args) {
			configs = append(configs, args[i+1])
			i++
			continue
		}
		if strings.HasPrefix(v, "-") {
			for _, o := range gitGlobalValued {
				if v == o {
					i++
					break
				}
			}
			continue
		}
		return configs, v, args[i+1:]
	}
	return configs, "", nil
}

// gitExecConfig reports whether a "-c key=value" setting makes git run a
// program.
func gitExecConfig(kv string) bool {
	k := strings.ToLower(kv)
	if i := strings.IndexByte(k, '='); i >= 0 {
		k = k[:i]
	}
	for _, s := range [...]string{"pager", "sshcommand", "editor", "fsmonitor", "hookspath", "external", "helper", "textconv", ".command", "askpass", "proxy", "process", ".clean", ".smudge"} {
		if strings.Contains(k, s) {
			return true
		}
	}
	return strings.HasPrefix(k, "alias.")
}

func (a *analyzer) git(c *shellparse.Command, args []string) {
	configs, sub, rest := gitSplit(args)
	for _, kv := range configs {
		if gitExecConfig(kv) {
			a.hitCmd(RuleExecOption, c)
		}
	}
	switch sub {
	case "reset":
		if hasLong(rest, "--hard") {
			a.hitCmd(RuleGitReset, c)
		}
	case "push":
		if hasLong(rest, "--force", "--force-with-lease", "--mirror", "--force-if-includes") || hasShort(rest, "f") {
			a.hitCmd(RuleGitPushForce, c)
			return
		}
		for _, v := range operands(rest, "-o", "--push-option", "--repo", "--receive-pack", "--exec") {
			if strings.HasPrefix(v, "+") {
				a.hitCmd(RuleGitPushForce, c)
				return
			}
		}
	case "clean":
		if !hasShort(rest, "n") && !hasLong(rest, "--dry-run") && (hasShort(rest, "f") || hasLong(rest, "--force")) {
			a.hitCmd(RuleGitClean, c)
		}
	case "checkout":
		if hasWord(rest, "--") || hasWord(rest, ".") || hasShort(rest, "f") || hasLong(rest, "--force") {
			a.hitCmd(RuleGitDiscard, c)
		}
	case "restore":
		if !hasLong(rest, "--staged") || hasLong(rest, "--worktree") || hasShort(rest, "W") {
			if len(operands(rest, "-s", "--source")) > 0 {
				a.hitCmd(RuleGitDiscard, c)
			}
		}
	case "stash":
		if len(rest) > 0 && (rest[0] == "drop" || rest[0] == "clear") {
			a.hitCmd(RuleGitDiscard, c)
		}
	case "branch":
		if hasShort(rest, "D") || ((hasShort(rest, "d") || hasLong(rest, "--delete")) && (hasShort(rest, "f") || hasLong(rest, "--force"))) {
			a.hitCmd(RuleGitBranchDel, c)
		}
	case "filter-branch", "filter-repo":
		a.hitCmd(RuleGitHistory, c)
	case "reflog":
		if len(rest) > 0 && (rest[0] == "expire" || rest[0] == "delete") {
			a.hitCmd(RuleGitHistory, c)
		}
	case "gc":
		if hasLong(rest, "--prune") {
			a.hitCmd(RuleGitHistory, c)
		}
	case "update-ref":
		if hasShort(rest, "d") {
			a.hitCmd(RuleGitHistory, c)
		}
	case "config":
		if !hasLong(rest, "--global", "--system") {
			return
		}
		if hasLong(rest, "--get", "--get-all", "--get-regexp", "--list", "--show-origin", "--get-urlmatch", "--get-color", "--get-colorbool") || hasShort(rest, "l") {
			return
		}
		if len(operands(rest, "--file", "-f", "--type", "--default")) >= 2 || hasLong(rest, "--unset", "--unset-all", "--add", "--replace-all", "--edit", "--rename-section", "--remove-section") || hasShort(rest, "e") {
			a.hitCmd(RuleGitConfig, c)
		}
	}
}

func (a *analyzer) dd(c *shellparse.Command, args []string) {
	for _, v := range args {
		if strings.HasPrefix(v, "of=") {
			p := a.fold(v[3:])
			if isBlockDevice(p) {
				a.hitCmd(RuleDiskWrite, c)
				return
			}
			a.checkWrite(c, v[3:], p)
		}
	}
	a.hitCmd(RuleDD, c)
}

// kill: "-1" as the pid signals every process; SIGKILL needs approval.
func (a *analyzer) kill(c *shellparse.Command, args []string) {
	var sig string
	var pids []string
	for i := 0; i < len(args); i++ {
		v := args[i]
		switch {
		case v == "--":
			pids = append(pids, args[i+1:]...)
			i = len(args)
		case v == "-l" || v == "-L" || v == "--list" || v == "--table":
			return
		case v == "-s" || v == "-n" || v == "--signal":
			if i+1 < len(args) {
				sig = args[i+1]
			}
			i++
		case strings.HasPrefix(v, "--signal="):
			sig = v[len("--signal="):]
		case len(v) > 1 && v[0] == '-' && sig == "" && len(pids) == 0 && len(args) > 1:
			sig = v[1:]
		default:
			pids = append(pids, v)
		}
	}
	for _, p := range pids {
		if p == "-1" {
			a.hitCmd(RuleKillAll, c)
			return
		}
	}
	switch strings.ToUpper(strings.TrimPrefix(strings.ToUpper(sig), "SIG")) {
	case "9", "KILL":
		a.hitCmd(RuleKill, c)
	}
}

func (a *analyzer) systemctl(c *shellparse.Command, args []string) {
	sub, rest := firstOperand(args, "-H", "--host", "-M", "--machine", "-t", "--type", "-p", "--property", "-s", "--signal", "--root", "-n", "--lines", "-o", "--output", "--kill-whom", "--kill-who", "--state", "--job-mode")
	switch sub {
	case "reboot", "poweroff", "halt", "kexec", "soft-reboot":
		a.hitCmd(RulePower, c)
	case "isolate":
		if len(rest) > 0 && (strings.HasPrefix(rest[0], "rescue") || strings.HasPrefix(rest[0], "emergency") || strings.HasPrefix(rest[0], "poweroff") || strings.HasPrefix(rest[0], "reboot") || strings.HasPrefix(rest[0], "halt")) {
			a.hitCmd(RulePower, c)
			return
		}
		a.hitCmd(RuleServiceStop, c)
	case "start", "restart-or-start":
		for _, u := range rest {
			switch strings.TrimSuffix(u, ".target") {
			case "reboot", "poweroff", "halt", "kexec", "ctrl-alt-del", "rescue", "emergency", "soft-reboot":
				a.hitCmd(RulePower, c)
				return
			}
		}
	case "stop", "disable", "mask", "kill", "restart", "try-restart", "reload-or-restart", "condrestart", "force-reload", "terminate":
		a.hitCmd(RuleServiceStop, c)
	}
}

// sudoStdin flags -S/--stdin in sudo's own options (a cluster such as -kS or
// -nS counts; the values of -u, -g, -p … do not).
func sudoStdin(args []string) bool {
	for i := 0; i < len(args); i++ {
		v := args[i]
		if v == "--" || len(v) < 2 || v[0] != '-' {
			return false
		}
		if v == "--stdin" {
			return true
		}
		if v[1] == '-' {
			switch v {
			case "--user", "--group", "--prompt", "--close-from", "--chdir", "--role", "--type", "--host", "--other-user", "--command-timeout", "--chroot":
				i++
			}
			continue
		}
		for j := 1; j < len(v); j++ {
			ch := v[j]
			if ch == 'S' {
				return true
			}
			if strings.IndexByte("ugpCDhrtTUR", ch) >= 0 {
				if j == len(v)-1 {
					i++
				}
				break
			}
		}
	}
	return false
}

// envSplit reports whether env's own options include -S or --split-string
// (or any unambiguous abbreviation of it, down to "--s"). GNU env re-splits
// that argument with its own quoting and escape rules ("\_" is a space), a
// second parse the analyzer does not trust to match exactly.
func envSplit(args []string) bool {
	for i := 0; i < len(args); i++ {
		v := args[i]
		if v == "--" || len(v) < 2 || v[0] != '-' {
			if strings.Contains(v, "=") && len(v) > 0 && v[0] != '-' {
				continue // NAME=value
			}
			return false
		}
		if v[1] == '-' {
			name, _, hasVal := strings.Cut(v, "=")
			if len(name) >= 3 && strings.HasPrefix("--split-string", name) {
				return true
			}
			if !hasVal && (name == "--unset" || name == "--chdir" || name == "--argv0") {
				i++
			}
			continue
		}
		if v == "-u" || v == "-C" || v == "-a" {
			i++
			continue
		}
		for j := 1; j < len(v); j++ {
			if v[j] == 'S' {
				return true
			}
			if v[j] == 'u' || v[j] == 'C' || v[j] == 'a' {
				break
			}
		}
	}
	return false
}

func (a *analyzer) sudoStdin(c *shellparse.Command, args []string) {
	if sudoStdin(args) {
		a.hitCmd(RuleSudoStdin, c)
	}
}

// wrapper applies the rules that concern a peeled wrapper's own options.
func (a *analyzer) wrapper(c *shellparse.Command, w *shellparse.Wrapper) {
	switch w.Program {
	case "env":
		if envSplit(w.Args) {
			a.hit(RuleEnvSplit, c.Text, c.Span)
		}
	case "sudo":
		if sudoStdin(w.Args) {
			a.hit(RuleSudoStdin, c.Text, c.Span)
		}
	case "find":
		if _, del, _, _ := findActions(w.Args); del {
			a.hit(RuleFindDelete, c.Text, c.Span)
		}
	}
	if isShell(w.Program) && shellHasC(w.Args) {
		a.hit(RuleShellPayload, c.Text, c.Span)
	}
}

func (a *analyzer) container(c *shellparse.Command, args []string) {
	for i := 0; i < len(args); i++ {
		v := args[i]
		if !strings.HasPrefix(v, "-") {
			break
		}
		val := ""
		switch {
		case v == "-H" || v == "--host" || v == "--url" || v == "--connection" || v == "-c" || v == "--context":
			if i+1 < len(args) {
				val = args[i+1]
			}
			i++
		case containerValued()[v]:
			i++
		default:
			if j := strings.IndexByte(v, '='); j > 0 {
				switch v[:j] {
				case "-H", "--host", "--url", "--connection":
					val = v[j+1:]
				}
			}
		}
		if strings.HasPrefix(val, "ssh://") || strings.HasPrefix(val, "tcp://") {
			a.hitCmd(RuleRemoteExec, c)
		}
	}
	sub, rest := firstOperand(args, containerValuedList...)
	if sub == "container" || sub == "image" || sub == "volume" || sub == "network" || sub == "system" || sub == "compose" || sub == "builder" {
		var next string
		next, rest = firstOperand(rest, "-f", "--file", "-p", "--project-name", "--profile", "--env-file", "--project-directory")
		if sub == "compose" {
			switch next {
			case "down", "kill", "rm", "stop", "restart":
				a.hitCmd(RuleContainer, c)
			}
			return
		}
		if next == "prune" || next == "rm" || next == "stop" || next == "kill" || next == "restart" {
			a.hitCmd(RuleContainer, c)
			return
		}
		sub = next
	}
	switch sub {
	case "stop", "kill", "restart", "rm", "rmi":
		a.hitCmd(RuleContainer, c)
	case "run", "create", "exec":
		a.privileged(c, rest)
	}
}

// containerValuedList are docker/podman global options that take a value.
var containerValuedList = []string{"-H", "--host", "--url", "--connection", "-c", "--context", "--log-level", "-l",
	"--config", "--identity", "--root", "--runroot", "--storage-driver", "--tlscacert", "--tlscert", "--tlskey",
	"--cgroup-manager", "--events-backend", "--runtime", "--tmpdir", "--network-cmd-path", "--ssh"}

var containerValued = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, o := range containerValuedList {
		m[o] = true
	}
	return m
})

// privileged flags container options that hand the container the host.
func (a *analyzer) privileged(c *shellparse.Command, args []string) {
	for i := 0; i < len(args); i++ {
		v := args[i]
		if !strings.HasPrefix(v, "-") {
			return // the image: the rest is the container's command
		}
		name, val, hasVal := strings.Cut(v, "=")
		switch name {
		case "--privileged":
			a.hitCmd(RulePrivileged, c)
		case "--pid", "--ipc", "--uts", "--userns", "--cap-add", "--security-opt", "--device", "-v", "--volume", "--mount":
			if !hasVal && i+1 < len(args) {
				val = args[i+1]
				i++
			}
			lv := strings.ToLower(val)
			switch name {
			case "--pid", "--ipc", "--uts", "--userns":
				if lv == "host" {
					a.hitCmd(RulePrivileged, c)
				}
			case "--cap-add":
				if lv == "all" || lv == "sys_admin" || lv == "cap_sys_admin" || lv == "sys_ptrace" || lv == "sys_module" {
					a.hitCmd(RulePrivileged, c)
				}
			case "--security-opt":
				if strings.Contains(lv, "unconfined") {
					a.hitCmd(RulePrivileged, c)
				}
			case "--device":
				a.hitCmd(RulePrivileged, c)
			default:
				src := val
				if name == "--mount" {
					for _, kv := range strings.Split(val, ",") {
						if k, vv, ok := strings.Cut(kv, "="); ok && (k == "source" || k == "src") {
							src = vv
						}
					}
				} else if j := strings.IndexByte(val, ':'); j >= 0 {
					src = val[:j]
				}
				if strings.HasPrefix(src, "/") || strings.HasPrefix(src, "~") || strings.HasPrefix(src, "$HOME") {
					p := a.fold(src)
					if isCatastrophicTarget(p) || strings.HasSuffix(p, "docker.sock") || strings.HasSuffix(p, "podman.sock") || isEtc(p) {
						a.hitCmd(RulePrivileged, c)
					}
				}
			}
		default:
			if (v == "-e" || v == "--env" || v == "--name" || v == "-p" || v == "--publish" || v == "-w" || v == "--workdir" ||
				v == "--network" || v == "--net" || v == "-u" || v == "--user" || v == "--entrypoint" || v == "-l" || v == "--label" ||
				v == "--restart" || v == "-m" || v == "--memory" || v == "--cpus" || v == "--platform" || v == "--env-file" || v == "-h" || v == "--hostname") && !hasVal {
				i++
			}
		}
	}
}

// sshValued are ssh options that take a value.
var sshValued = []string{"-b", "-c", "-D", "-E", "-e", "-F", "-I", "-i", "-J", "-L", "-l", "-m", "-O", "-o", "-p", "-Q", "-R", "-S", "-W", "-w", "-B", "-P"}

func (a *analyzer) ssh(c *shellparse.Command, args []string) {
	if v, ok := optValue(args, "-o"); ok {
		l := strings.ToLower(v)
		if strings.HasPrefix(l, "proxycommand") || strings.HasPrefix(l, "localcommand") || strings.HasPrefix(l, "permitlocalcommand") {
			a.hitCmd(RuleExecOption, c)
		}
	}
	host, rest := firstOperand(args, sshValued...)
	if host == "" {
		return
	}
	if len(rest) > 0 || c.Context.Pipeline > 1 {
		a.hitCmd(RuleRemoteExec, c)
	}
}

// isDestructiveSQL reports whether a query argument drops or wipes data.
func isDestructiveSQL(v string) bool {
	u := strings.ToUpper(v)
	for _, k := range [...]string{"DROP ", "DROP\t", "TRUNCATE ", "DELETE FROM", "DROPDATABASE(", ".DROP(", "FLUSHALL", "DELETEMANY("} {
		if strings.Contains(u, k) {
			return true
		}
	}
	return false
}

func (a *analyzer) jsPackages(c *shellparse.Command, prog string, args []string) {
	global := hasShort(args, "g") || hasLong(args, "--global", "--location")
	ops := operands(args)
	if len(ops) == 0 {
		return
	}
	sub := ops[0]
	if prog == "yarn" && sub == "global" && len(ops) > 1 && ops[1] == "remove" {
		a.hitCmd(RulePkgRemove, c)
		return
	}
	switch sub {
	case "uninstall", "remove", "rm", "un", "r", "unlink":
		if global {
			a.hitCmd(RulePkgRemove, c)
		}
	}
}

// execOption records an option that runs another program; the program text
// is analysed too, and a hardline payload keeps its hardline findings.
func (a *analyzer) execOption(c *shellparse.Command, v string) {
	a.hit(RuleExecOption, c.Text, c.Span)
	if sub := a.sub(v); sub != nil {
		for _, f := range sub.Findings {
			if f.Tier == TierHardline {
				a.hit(f.Rule, c.Text, c.Span)
			}
		}
	}
}

// man's options that take a value; -P/--pager runs its value.
var manValued = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"-C": true, "--config-file": true, "-M": true, "--manpath": true, "-P": true, "--pager": true,
		"-r": true, "--prompt": true, "-L": true, "--locale": true, "-m": true, "--systems": true,
		"-S": true, "-s": true, "--sections": true, "-e": true, "--extension": true, "-p": true,
		"--preprocessor": true, "-R": true, "--recode": true, "-E": true, "--encoding": true,
	}
})

func (a *analyzer) man(c *shellparse.Command, args []string) {
	for i := 0; i < len(args); i++ {
		v := args[i]
		if v == "--" {
			return
		}
		if strings.HasPrefix(v, "--pager=") {
			a.execOption(c, v[len("--pager="):])
			continue
		}
		if strings.HasPrefix(v, "-P") && len(v) > 2 {
			a.execOption(c, v[2:])
			continue
		}
		if strings.HasPrefix(v, "--html") || strings.HasPrefix(v, "-H") {
			a.hitCmd(RuleExecOption, c)
			continue
		}
		if manValued()[v] {
			if (v == "-P" || v == "--pager") && i+1 < len(args) {
				a.execOption(c, args[i+1])
			}
			i++
		}
	}
}

// hermes is the peer agent's control plane; commands that change its
// configuration, schedule, code or gateway need approval.
func (a *analyzer) hermes(c *shellparse.Command, args []string) {
	ops := operands(args)
	if len(ops) == 0 {
		return
	}
	next := ""
	if len(ops) > 1 {
		next = ops[1]
	}
	switch ops[0] {
	case "config", "cron":
		switch next {
		case "", "show", "list", "ls", "get", "status", "path":
		default:
			a.hitCmd(RuleControlPlane, c)
		}
	case "update", "gateway", "setup", "uninstall", "install", "approve", "allowlist", "mandate", "yolo", "reset":
		a.hitCmd(RuleControlPlane, c)
	}
}

// moveSource checks a path that mv takes away: moving a credential
// directory, a shell rc file or /etc content changes it as much as writing.
func (a *analyzer) moveSource(c *shellparse.Command, v string) {
	p := a.fold(v)
	if isCatastrophicTarget(p) {
		a.hitCmd(RuleRmRecursive, c)
	}
	a.checkWrite(c, v, p)
}

// destination checks the target of a copy-like command (the last operand or
// the -t directory).
func (a *analyzer) destination(c *shellparse.Command, args []string, valued ...string) {
	if v, ok := optValue(args, "-t", "--target-directory"); ok {
		a.writeTarget(c, v, false)
		return
	}
	ops := operands(args, valued...)
	if c.Program == "install" && (hasShort(args, "d") || hasLong(args, "--directory")) {
		for _, v := range ops {
			a.writeTarget(c, v, false)
		}
		return
	}
	if len(ops) >= 2 || (c.Program == "ln" && len(ops) == 1) {
		a.writeTarget(c, ops[len(ops)-1], false)
	}
}

// writeOption checks the file named by an output option.
func (a *analyzer) writeOption(c *shellparse.Command, args []string, opts ...string) {
	if v, ok := optValue(args, opts...); ok {
		a.writeTarget(c, v, false)
	}
}

// inPlace handles in-place editors (sed -i, perl -i, ruby -i): the edited
// files are write targets.
func (a *analyzer) inPlace(c *shellparse.Command, args []string, lang string) {
	inplace, script := false, false
	var files []string
	for i := 0; i < len(args); i++ {
		v := args[i]
		if v == "--" {
			files = append(files, args[i+1:]...)
			break
		}
		if strings.HasPrefix(v, "--") {
			switch {
			case v == "--in-place" || strings.HasPrefix(v, "--in-place="):
				inplace = true
			case v == "--expression" || v == "--file":
				script = true
				i++
			case strings.HasPrefix(v, "--expression=") || strings.HasPrefix(v, "--file="):
				script = true
			case v == "--line-length":
				i++
			}
			continue
		}
		if len(v) > 1 && v[0] == '-' {
		cluster:
			for j := 1; j < len(v); j++ {
				switch ch := v[j]; {
				case ch == 'i':
					inplace = true
					break cluster // the rest is a backup suffix
				case ch == 'e' || ch == 'f' || ch == 'E' && lang != "sed":
					script = true
					if j == len(v)-1 {
						i++
					}
					break cluster
				case lang == "sed" && ch == 'l', lang != "sed" && strings.IndexByte("IMmrx0lCd", ch) >= 0:
					if j == len(v)-1 && (lang == "sed" || ch == 'I' || ch == 'M' || ch == 'm' || ch == 'r') {
						i++
					}
					break cluster
				}
			}
			continue
		}
		files = append(files, v)
	}
	if !inplace {
		return
	}
	if !script && len(files) > 0 {
		files = files[1:] // the first operand is the script
	}
	for _, f := range files {
		a.writeTarget(c, f, false)
	}
}

// redirs applies the redirection rules: /dev/tcp, disk devices, and the
// destinations of writes.
func (a *analyzer) redirs(c *shellparse.Command, args []string) {
	for i := range c.Redirs {
		r := &c.Redirs[i]
		v := r.Target.Value
		if strings.HasPrefix(v, "/dev/tcp/") || strings.HasPrefix(v, "/dev/udp/") {
			if isShell(c.Program) || isInterpreter(interpName(c.Program)) {
				a.hit(RuleReverseShell, c.Text, c.Span)
			} else {
				a.hit(RuleDevTCP, c.Text, c.Span)
			}
			continue
		}
		switch r.Mode {
		case shellparse.RedirWrite, shellparse.RedirAppend, shellparse.RedirReadWrite:
		case shellparse.RedirDup:
			if v == "-" || isNumber(v) {
				continue
			}
		default:
			continue
		}
		p := a.fold(v)
		if isBlockDevice(p) {
			a.hit(RuleDiskWrite, c.Text, c.Span)
			continue
		}
		a.writeTarget(c, v, true)
		if (c.Program == "echo" || c.Program == "printf") && isScriptFile(p) {
			a.scriptWrite(c, args)
		}
	}
}

func isNumber(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// isScriptFile reports whether p names a shell script or a crontab-like
// file whose content is run later.
func isScriptFile(p string) bool {
	for _, suf := range [...]string{".sh", ".bash", ".zsh", ".ksh", ".command"} {
		if strings.HasSuffix(p, suf) {
			return true
		}
	}
	return false
}

// scriptWrite analyses the text echoed into a script file.
func (a *analyzer) scriptWrite(c *shellparse.Command, args []string) {
	var b strings.Builder
	for i, v := range args {
		if i == 0 && (v == "-e" || v == "-n" || v == "-en" || v == "-ne") {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(v)
	}
	text := strings.ReplaceAll(b.String(), `\n`, "\n")
	if sub := a.sub(text); sub != nil && sub.Verdict >= TierApproval {
		a.hit(RuleScriptWrite, c.Text, c.Span)
	}
}

// writeTarget checks one write destination given as word value v.
func (a *analyzer) writeTarget(c *shellparse.Command, v string, redirect bool) {
	p := a.fold(v)
	if p == "/proc/sysrq-trigger" {
		a.hit(RulePower, c.Text, c.Span) // "echo b >" reboots, "echo o >" powers off, at once
		return
	}
	if !redirect && isBlockDevice(p) {
		a.hit(RuleDeviceWrite, c.Text, c.Span)
		return
	}
	a.checkWrite(c, v, p)
}

// checkWrite applies the protected-destination rules to canonical path p.
func (a *analyzer) checkWrite(c *shellparse.Command, v, p string) {
	if isEtc(p) {
		a.hit(RuleEtcWrite, c.Text, c.Span)
	}
	if rel, ok := homeRel(p); ok {
		switch {
		case inList(rel, credentialDirs):
			a.hit(RuleCredWrite, c.Text, c.Span)
		case inList(rel, shellRCFiles):
			a.hit(RuleRCWrite, c.Text, c.Span)
		case inList(rel, agentDirs):
			a.hit(RuleAgentConfig, c.Text, c.Span)
		}
	}
	if envPrefixed(v, agentEnvDirs) {
		a.hit(RuleAgentConfig, c.Text, c.Span)
	}
	base := path.Base(p)
	if base == ".env" || strings.HasPrefix(base, ".env.") {
		a.hit(RuleEnvFile, c.Text, c.Span)
	}
	if base == "config.yaml" || base == "config.yml" {
		a.hit(RuleAgentConfig, c.Text, c.Span)
	}
}

// secretRead flags private keys and password databases among the arguments.
func (a *analyzer) secretRead(c *shellparse.Command, args []string) {
	switch c.Program {
	case "chmod", "chown", "chgrp", "ssh-keygen", "ssh-add", "ssh", "ls", "stat", "file", "test", "[", "touch", "rm", "shred":
		return // these use or inspect a key file without copying its content
	case "curl", "wget", "http", "https":
		a.credentialUpload(c, args)
	}
	for _, v := range args {
		if !strings.Contains(v, "id_") && !strings.Contains(v, "shadow") {
			continue
		}
		p := a.fold(v)
		if p == "/etc/shadow" || p == "/etc/gshadow" || p == "/etc/shadow-" {
			a.hitCmd(RuleSecretRead, c)
			return
		}
		if rel, ok := homeRel(p); ok && strings.HasPrefix(rel, ".ssh/id_") && !strings.HasSuffix(rel, ".pub") {
			a.hitCmd(RuleSecretRead, c)
			return
		}
	}
}

// credentialUpload flags an HTTP client sending a credential file
// (curl -d @file, --data-binary @file, -F k=@file, -T file, wget --post-file).
func (a *analyzer) credentialUpload(c *shellparse.Command, args []string) {
	for i, v := range args {
		var file string
		switch {
		case strings.HasPrefix(v, "@"):
			file = v[1:]
		case strings.Contains(v, "=@"):
			file = v[strings.Index(v, "=@")+2:]
		case strings.HasPrefix(v, "--post-file=") || strings.HasPrefix(v, "--body-file="):
			file = v[strings.IndexByte(v, '=')+1:]
		case (v == "-T" || v == "--upload-file" || v == "--post-file" || v == "--body-file") && i+1 < len(args):
			file = args[i+1]
		default:
			continue
		}
		if i := strings.IndexByte(file, ';'); i >= 0 {
			file = file[:i] // -F "k=@file;type=text/plain"
		}
		p := a.fold(file)
		if rel, ok := homeRel(p); ok && inList(rel, credentialDirs) || p == "/etc/shadow" || base(p) == ".env" {
			a.hitCmd(RuleSecretRead, c)
			return
		}
	}
}

func base(p string) string { return path.Base(p) }

// execEnv are environment variables that load or run code in the command.
var execEnv = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"LD_PRELOAD": true, "LD_LIBRARY_PATH": true, "LD_AUDIT": true, "DYLD_INSERT_LIBRARIES": true,
		"DYLD_LIBRARY_PATH": true, "BASH_ENV": true, "ENV": true, "PATH": true, "PROMPT_COMMAND": true,
		"PS4": true, "SHELLOPTS": true, "BASHOPTS": true, "GIT_SSH": true, "GIT_SSH_COMMAND": true,
		"GIT_EXTERNAL_DIFF": true, "GIT_PAGER": true, "GIT_EDITOR": true, "GIT_ASKPASS": true,
		"GIT_PROXY_COMMAND": true, "GIT_CONFIG_GLOBAL": true, "GIT_CONFIG_PARAMETERS": true,
		"SSH_ASKPASS": true, "SUDO_ASKPASS": true, "EDITOR": true, "VISUAL": true, "PAGER": true, "MANPAGER": true,
		"LESSOPEN": true, "LESSCLOSE": true, "PERL5OPT": true, "PERL5LIB": true, "PERLLIB": true,
		"PYTHONSTARTUP": true, "PYTHONPATH": true, "PYTHONHOME": true, "NODE_OPTIONS": true,
		"NODE_PATH": true, "RUBYOPT": true, "RUBYLIB": true, "JAVA_TOOL_OPTIONS": true,
		"_JAVA_OPTIONS": true, "BROWSER": true, "GCONV_PATH": true, "TAR_OPTIONS": true,
	}
})

func isExecEnv(name string) bool {
	return execEnv()[name] || strings.HasPrefix(name, "BASH_FUNC_") || strings.HasPrefix(name, "GIT_CONFIG_")
}

func (a *analyzer) env(c *shellparse.Command) {
	for _, e := range c.Env {
		if isExecEnv(e.Name) {
			a.hit(RuleEnvExec, c.Text, c.Span)
			return
		}
	}
}

// hardlineText flags an argument whose whole text is one complete hardline
// command ("rm -rf /", "cat x > /dev/sda"): such text is staged for later
// execution more often than it is prose. Search patterns and git's own
// arguments (commit messages, grep patterns) are data kept in place and are
// not checked; neither is text with several commands ("a;reboot"), which
// is prose or data rather than a command line.
func (a *analyzer) hardlineText(c *shellparse.Command) {
	switch c.Program {
	case "grep", "egrep", "fgrep", "zgrep", "rg", "ag", "ack", "git", "sed", "awk", "find", "locate":
		return
	}
	for _, w := range c.Args {
		v := w.Value
		if !w.Literal || !strings.ContainsAny(v, " \t") || !mayBeHardline(v) {
			continue
		}
		if a.isHardlineText(v) {
			a.hit(RuleHardlineText, c.Text, c.Span)
			return
		}
	}
}

// isHardlineText reports whether v is one complete hardline command, or
// contains, starting at one of its words, a command that destroys a named
// target (rm -rf /, a disk write or format, kill -1). Hardline rules that
// need no target (reboot, halt) count only when they are the whole text, so
// prose such as "remember to reboot the server" stays allowed.
func (a *analyzer) isHardlineText(v string) bool {
	sub := a.sub(v)
	if sub == nil {
		return false
	}
	if sub.Verdict == TierHardline && sub.Script != nil && len(sub.Script.Commands) == 1 && len(sub.Script.Opaque) == 0 {
		return true
	}
	tries := 0
	for i := 1; i < len(v) && tries < 3; i++ {
		if (v[i-1] != ' ' && v[i-1] != '\t') || v[i] == ' ' {
			continue
		}
		w := v[i:]
		if j := strings.IndexAny(w, " \t"); j >= 0 {
			w = w[:j]
		}
		switch path.Base(w) {
		case "rm", "dd", "wipefs", "shred", "kill", "mkswap", "sgdisk", "mke2fs", "cat":
		default:
			if !strings.HasPrefix(path.Base(w), "mkfs") {
				continue
			}
		}
		tries++
		sub := a.sub(v[i:])
		if sub == nil || sub.Script == nil || len(sub.Script.Commands) != 1 {
			continue
		}
		for _, f := range sub.Findings {
			switch f.Rule {
			case RuleRmRoot, RuleDiskFormat, RuleDiskWrite, RuleKillAll:
				return true
			}
		}
	}
	return false
}

// mayBeHardline is a cheap filter before parsing an argument as a command:
// it reports whether v mentions a word that some hardline rule needs.
func mayBeHardline(v string) bool {
	for _, k := range [...]string{"rm", "/dev/", "mkfs", "mke2fs", "mkswap", "dd", "wipefs", "shred", "kill", "reboot", "shutdown", "halt", "poweroff", "init", "systemctl", "sudo", "(", "fork", "diskutil", "sgdisk", "parted"} {
		if strings.Contains(v, k) {
			return true
		}
	}
	return false
}
