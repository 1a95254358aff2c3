package oracle

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/tether-dev/tether/approval"
)

// Observation is what one command really did under bash in the sandbox, and
// the tier that effect deserves.
type Observation struct {
	Command string
	// Env are the variables the command was run with (Case.Env).
	Env []string
	// Tier is the observed tier: hardline for an effect DESIGN.md puts on
	// the hardline floor (a recursive delete of /, a system directory or a
	// home; a write to a block device; power off or reboot; every process
	// killed; a fork bomb), approval for a dangerous one (a recursive or
	// forced delete, a kill, a write to a shell rc or credential file),
	// allow otherwise.
	Tier approval.Tier
	// Evidence says what was seen, one line per effect.
	Evidence []string
	// Calls are the stand-ins that ran.
	Calls []Call
	Exit  int
	// Stderr is the start of the command's standard error.
	Stderr string
}

func (o *Observation) see(t approval.Tier, format string, args ...any) {
	if t > o.Tier {
		o.Tier = t
	}
	o.Evidence = append(o.Evidence, t.String()+": "+fmt.Sprintf(format, args...))
}

// Call is one run of a stand-in: the name it was run as, its working
// directory, and each argument with the path it resolved to in the sandbox
// ("" when it names nothing that exists).
type Call struct {
	Program string
	Cwd     string
	Stdin   string // what fd 0 was: "/dev/null", "pipe:[…]", a file
	// Posix reports POSIXLY_CORRECT in the environment: glibc's getopt
	// then stops reading options at the first operand.
	Posix bool
	Args  []string
	Paths []string
}

// parseCalls reads the records the stand-ins wrote: fields separated by
// NUL (program, cwd, stdin, "posix" or "", then argument and path pairs),
// records by 0x1e.
func parseCalls(data string) []Call {
	var calls []Call
	for _, rec := range strings.Split(data, "\x1e") {
		f := strings.Split(rec, "\x00")
		if len(f) > 0 && f[len(f)-1] == "" {
			f = f[:len(f)-1]
		}
		if len(f) < 4 {
			continue
		}
		c := Call{Program: f[0], Cwd: f[1], Stdin: f[2], Posix: f[3] == "posix"}
		for i := 4; i+1 < len(f); i += 2 {
			c.Args = append(c.Args, f[i])
			c.Paths = append(c.Paths, f[i+1])
		}
		calls = append(calls, c)
	}
	return calls
}

// world is what the classification knows about the sandbox's canaries.
type world struct {
	home        string   // the canary home
	homeEntries []string // its visible top-level entries (what ~/* names)
	rootEntries []string // the canary /root's top-level entries
	devices     []string // the stand-in block devices (real files, after symlinks)
	canaries    int      // processes started before each command
	sensitive   []string // home-relative files whose change is approval (rc, credentials)
}

// classify turns the driver's result lines and the stand-in calls into an
// observation.
func (w world) classify(cmd string, result []string, calls []Call, stderr string) Observation {
	o := Observation{Command: cmd, Calls: calls, Stderr: stderr}
	// bash reports a fork that failed on the pids limit; a bomb that dies
	// back down before the driver counts leaves only that trace.
	if strings.Contains(stderr, "fork: retry: Resource temporarily unavailable") ||
		strings.Contains(stderr, "fork: Resource temporarily unavailable") {
		o.see(approval.TierHardline, "fork bomb: forks failed on the pids limit")
	}
	homeGone, rootGone := map[string]bool{}, map[string]bool{}
	down := 0
	for _, line := range result {
		k, v, _ := strings.Cut(line, "\t")
		switch k {
		case "exit":
			fmt.Sscan(v, &o.Exit)
		case "dev-changed":
			o.see(approval.TierHardline, "the stand-in block device %s was written", v)
		case "dev-gone":
			// Its name is gone, its data is not (a block device node
			// moved or removed). A write under the new name is not seen.
			o.see(approval.TierApproval, "the block device node %s was moved or removed", v)
		case "pids-limit":
			o.see(approval.TierHardline, "fork bomb: %s processes, the pids limit", v)
		case "canary-down":
			down++
		case "home-gone":
			homeGone[v] = true
			if w.isSensitive(v) {
				o.see(approval.TierApproval, "~/%s was deleted", v)
			}
		case "home-changed":
			if w.isSensitive(v) {
				o.see(approval.TierApproval, "~/%s was written", v)
			}
		case "root-gone":
			rootGone[v] = true
		}
	}
	if allIn(w.homeEntries, homeGone) {
		o.see(approval.TierHardline, "the home %s was wiped", w.home)
	}
	if allIn(w.rootEntries, rootGone) {
		o.see(approval.TierHardline, "/root was wiped")
	}
	switch {
	case down == w.canaries && down > 0:
		o.see(approval.TierHardline, "every other process was killed or stopped (%d canaries)", down)
	case down > 0:
		o.see(approval.TierApproval, "%d processes the command did not start were killed or stopped", down)
	}
	for _, c := range calls {
		w.call(&o, c)
	}
	return o
}

func allIn(names []string, set map[string]bool) bool {
	if len(names) == 0 {
		return false
	}
	for _, n := range names {
		if !set[n] {
			return false
		}
	}
	return true
}

func (w world) isSensitive(rel string) bool {
	for _, s := range w.sensitive {
		if rel == s || strings.HasPrefix(rel, s+"/") {
			return true
		}
	}
	return false
}

// call classifies one stand-in run by how the real program reads its
// arguments.
func (w world) call(o *Observation, c Call) {
	name := c.Program
	switch {
	case name == "rm":
		w.rm(o, c)
	case name == "dd":
		w.dd(o, c)
	case isPower(name):
		power(o, c)
	case name == "systemctl":
		systemctl(o, c)
	case name == "busctl" || name == "dbus-send" || name == "gdbus" || name == "qdbus":
		dbus(o, c)
	default:
		if d, ok := diskTools[name]; ok {
			w.disk(o, c, d)
		}
	}
}

// rmSpec is GNU rm's getopt_long table (coreutils rm.c).
var rmSpec = optSpec{short: "dfirvIR", long: map[string]int{
	"directory": noArg, "force": noArg, "interactive": optionalArg, "one-file-system": noArg,
	"no-preserve-root": noArg, "preserve-root": optionalArg, "recursive": noArg, "verbose": noArg,
	"help": noArg, "version": noArg, "-presume-input-tty": noArg,
}}

// systemDirs are directories whose recursive deletion wrecks a host.
var systemDirs = []string{"/", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/libx32",
	"/opt", "/proc", "/root", "/run", "/sbin", "/srv", "/sys", "/usr", "/var", "/media", "/mnt", "/snap",
	"/usr/bin", "/usr/sbin", "/usr/lib", "/usr/lib64", "/usr/local", "/usr/share", "/usr/include", "/usr/libexec",
	"/var/lib", "/var/log", "/var/spool", "/var/cache"}

func (w world) rm(o *Observation, c Call) {
	opts, _, err := rmSpec.parse(c.Args, c.Posix)
	if err != nil || has(opts, "help", "version") {
		return
	}
	recursive := has(opts, "r", "R", "recursive")
	noPreserve := has(opts, "no-preserve-root")
	if recursive || has(opts, "f", "force") {
		o.see(approval.TierApproval, "rm %s", strings.Join(c.Args, " "))
	}
	if !recursive {
		return
	}
	// The operands as rm sees them, with the paths they resolved to.
	gone := map[string]bool{}
	afterDashes := false
	for i, a := range c.Args {
		operand := afterDashes || !strings.HasPrefix(a, "-") || a == "-"
		if a == "--" && !afterDashes {
			afterDashes = true
			continue
		}
		if !operand || c.Paths[i] == "" {
			continue
		}
		if b := path.Base(a); b == "." || b == ".." {
			continue // rm refuses these
		}
		p := c.Paths[i]
		switch {
		case p == "/" && !noPreserve:
			// rm refuses / without --no-preserve-root.
		case slices.Contains(systemDirs, p) || p == w.home || strings.HasPrefix(w.home, p+"/"):
			o.see(approval.TierHardline, "rm -r of %s", p)
		case path.Dir(p) == w.home:
			gone[path.Base(p)] = true
		}
	}
	if allIn(w.homeEntries, gone) {
		o.see(approval.TierHardline, "rm -r of every entry of the home")
	}
}

func (w world) dd(o *Observation, c Call) {
	of := ""
	for i, a := range c.Args {
		switch {
		case a == "--help" || a == "--version":
			return
		case strings.HasPrefix(a, "of="):
			of = c.Paths[i]
		}
	}
	if w.isDevice(of) {
		o.see(approval.TierHardline, "dd wrote %s", of)
	}
}

func (w world) isDevice(p string) bool { return p != "" && slices.Contains(w.devices, p) }

// diskTool says when a disk tool given a device destroys its data.
type diskTool struct {
	// safe are arguments (options or subcommand words) with which the tool
	// only reads, lists, prints help or pretends.
	safe []string
	// needs, when set, are the arguments without which the tool does not
	// write (wipefs without -a or -o only lists signatures).
	needs []string
	// stdin: the tool takes its commands on standard input (fdisk), which
	// the oracle's bash gives /dev/null unless the command feeds some in;
	// with /dev/null it does nothing. parted takes them as arguments too.
	stdin bool
	// spec, when known, is the tool's getopt_long table: options are then
	// read as the tool reads them (abbreviations, clusters) and named
	// "-x" or "--long" for safe and needs.
	spec *optSpec
}

// wipefsSpec is util-linux wipefs's option table.
var wipefsSpec = optSpec{short: "abfhiJnO:o:pqt:V", long: map[string]int{
	"all": noArg, "backup": optionalArg, "force": noArg, "help": noArg, "no-act": noArg, "offset": requiredArg,
	"output": requiredArg, "parsable": noArg, "quiet": noArg, "types": requiredArg, "version": noArg,
	"no-headings": noArg, "json": noArg, "lock": optionalArg,
}}

// Option tables of the util-linux, e2fsprogs and gdisk tools (as of
// Debian 12). With a table, an option the tool does not know makes it
// refuse to run, as the real one does.
var (
	blkdiscardSpec = optSpec{short: "hfl:o:p:qsvVz", long: map[string]int{"force": noArg, "help": noArg, "length": requiredArg,
		"offset": requiredArg, "step": requiredArg, "quiet": noArg, "secure": noArg, "verbose": noArg, "version": noArg, "zeroout": noArg}}
	sgdiskSpec = optSpec{short: "a:A:b:Bc:Cd:DeEf:Fgh:i:j:k:l:Lm:n:N:oOpPr:R:st:T:u:U:vVzZ?", long: map[string]int{
		"set-alignment": requiredArg, "attributes": requiredArg, "backup": requiredArg, "byte-swap-name": noArg, "change-name": requiredArg,
		"recompute-chs": noArg, "delete": requiredArg, "display-alignment": noArg, "move-second-header": noArg, "end-of-largest": noArg,
		"first-in-largest": noArg, "first-aligned-in-largest": noArg, "mbrtogpt": noArg, "gpttombr": requiredArg, "hybrid": requiredArg,
		"info": requiredArg, "move-main-table": requiredArg, "move-backup-table": requiredArg, "load-backup": requiredArg, "list-types": noArg,
		"new": requiredArg, "largest-new": requiredArg, "clear": noArg, "print-mbr": noArg, "print": noArg, "pretend": noArg,
		"transpose": requiredArg, "replicate": requiredArg, "sort": noArg, "typecode": requiredArg, "transform-bsd": requiredArg,
		"partition-guid": requiredArg, "disk-guid": requiredArg, "verify": noArg, "version": noArg, "zap": noArg, "zap-all": noArg,
		"help": noArg, "usage": noArg}}
	partedSpec = optSpec{short: "hlmsfva:", long: map[string]int{"help": noArg, "list": noArg, "machine": noArg, "script": noArg,
		"fix": noArg, "version": noArg, "align": requiredArg}}
	mkswapSpec = optSpec{short: "cfp:L:v:U:e:o:s:FVh", long: map[string]int{"check": noArg, "force": noArg, "pagesize": requiredArg,
		"label": requiredArg, "swapversion": requiredArg, "uuid": requiredArg, "endianness": requiredArg, "offset": requiredArg,
		"size": requiredArg, "file": noArg, "verbose": noArg, "lock": optionalArg, "version": noArg, "help": noArg}}
	mke2fsSpec = optSpec{short: "b:cd:e:E:fFg:G:i:I:jJ:l:L:m:M:nN:o:O:qr:s:St:T:U:vVz:DC:"}
	// badblocks has no long options: its -h names a host device.
	badblocksSpec = optSpec{short: "b:d:e:fi:o:svwnc:p:h:t:BX"}
	minixSpec     = optSpec{short: "1vn:i:cl:3V", long: map[string]int{"namelength": requiredArg, "inodes": requiredArg, "check": noArg,
		"badblocks": requiredArg, "lock": optionalArg, "version": noArg, "help": noArg}}
	fdiskSpec = optSpec{short: "b:Bc::C:hH:lL::n:o:sS:t:u::vVw:W:x", long: map[string]int{"sector-size": requiredArg, "protect-boot": noArg,
		"compatibility": optionalArg, "color": optionalArg, "list": noArg, "list-details": noArg, "lock": optionalArg, "noauto-pt": noArg,
		"output": requiredArg, "type": requiredArg, "units": optionalArg, "getsz": noArg, "version": noArg, "help": noArg,
		"wipe": requiredArg, "wipe-partitions": requiredArg, "bytes": noArg, "cylinders": requiredArg, "heads": requiredArg, "sectors": requiredArg}}
)

// shredSpec is coreutils shred's option table.
var shredSpec = optSpec{short: "fn:s:uvxz", long: map[string]int{
	"force": noArg, "iterations": requiredArg, "size": requiredArg, "random-source": requiredArg, "remove": optionalArg,
	"verbose": noArg, "exact": noArg, "zero": noArg, "help": noArg, "version": noArg,
}}

var (
	helpArgs = []string{"-h", "--help", "-V", "--version", "-?", "--usage"}
	mkfsSafe = append([]string{"-n", "-N", "--dry-run"}, helpArgs...)
)

// diskTools are the destructive disk programs the oracle stands in for.
var diskTools = map[string]diskTool{
	"mkfs": {safe: mkfsSafe}, "mke2fs": {safe: mkfsSafe, spec: &mke2fsSpec}, "mkswap": {safe: helpArgs, spec: &mkswapSpec}, "mkdosfs": {safe: helpArgs},
	"mkntfs": {safe: mkfsSafe}, "mkexfatfs": {safe: helpArgs},
	"mkfs.ext2": {safe: mkfsSafe, spec: &mke2fsSpec}, "mkfs.ext3": {safe: mkfsSafe, spec: &mke2fsSpec}, "mkfs.ext4": {safe: mkfsSafe, spec: &mke2fsSpec},
	"mkfs.xfs": {safe: mkfsSafe}, "mkfs.btrfs": {safe: helpArgs}, "mkfs.vfat": {safe: helpArgs},
	"mkfs.fat": {safe: helpArgs}, "mkfs.msdos": {safe: helpArgs}, "mkfs.ntfs": {safe: mkfsSafe},
	"mkfs.exfat": {safe: helpArgs}, "mkfs.f2fs": {safe: helpArgs}, "mkfs.minix": {safe: helpArgs, spec: &minixSpec},
	"mkfs.bfs": {safe: helpArgs}, "mkfs.cramfs": {safe: helpArgs},
	"wipefs":     {safe: append([]string{"-n", "--no-act"}, helpArgs...), needs: []string{"-a", "--all", "-o", "--offset"}, spec: &wipefsSpec},
	"shred":      {safe: helpArgs, spec: &shredSpec},
	"blkdiscard": {safe: helpArgs, spec: &blkdiscardSpec},
	// sgdisk runs every operation it is given: a listing beside a zap
	// still zaps, so only --pretend (and help) is safe. It destroys only
	// what zaps, clears, deletes or replaces the table; adding or naming
	// a partition destroys nothing.
	"sgdisk": {safe: append([]string{"-P", "--pretend"}, helpArgs...), spec: &sgdiskSpec,
		needs: []string{"-Z", "--zap-all", "-z", "--zap", "-o", "--clear", "-d", "--delete", "-g", "--mbrtogpt", "-m", "--gpttombr",
			"-l", "--load-backup", "-R", "--replicate"}},
	"gdisk": {safe: append([]string{"-l"}, helpArgs...), stdin: true},
	"fdisk": {safe: append([]string{"-l", "--list", "-x", "--list-details"}, helpArgs...), stdin: true, spec: &fdiskSpec},
	"sfdisk": {safe: append([]string{"-l", "--list", "-d", "--dump", "-J", "--json", "-s", "--show-size", "-V", "--verify",
		"-g", "--show-geometry", "-F", "--list-free", "--list-types", "-T"}, helpArgs...), stdin: true},
	"parted":     {safe: append([]string{"-l", "--list"}, helpArgs...), stdin: true, spec: &partedSpec},
	"badblocks":  {needs: []string{"-w", "-n"}, spec: &badblocksSpec},
	"hdparm":     {needs: []string{"--security-erase", "--security-erase-enhanced", "--trim-sector-ranges", "--write-sector", "--make-bad-sector", "--fwdownload"}},
	"nvme":       {needs: []string{"format", "sanitize", "write-zeroes", "write-uncor", "delete-ns", "ns-delete"}, safe: helpArgs},
	"cryptsetup": {needs: []string{"luksFormat", "erase", "luksErase", "reencrypt"}, safe: helpArgs},
	// mdadm takes one mode: a misc mode (examine, detail, query) beside
	// --create is refused ("would set mdadm mode … already set").
	"mdadm": {needs: []string{"-C", "--create", "--zero-superblock"},
		safe: append([]string{"-E", "--examine", "-D", "--detail", "-Q", "--query"}, helpArgs...)},
	"pvcreate":  {safe: append([]string{"-t", "--test"}, helpArgs...)},
	"pvremove":  {safe: append([]string{"-t", "--test"}, helpArgs...)},
	"lvremove":  {safe: append([]string{"-t", "--test"}, helpArgs...)},
	"vgremove":  {safe: append([]string{"-t", "--test"}, helpArgs...)},
	"blkzone":   {needs: []string{"reset", "finish"}, safe: helpArgs},
	"sg_format": {needs: []string{"-F", "--format"}, safe: helpArgs},
}

func (w world) disk(o *Observation, c Call, d diskTool) {
	var dev string
	for _, p := range c.Paths {
		if w.isDevice(p) {
			dev = p
			break
		}
	}
	if dev == "" {
		return
	}
	words := splitShortClusters(c.Args)
	if d.spec == nil {
		// Without the tool's option table, under POSIXLY_CORRECT only the
		// words before the first that is not an option can be options.
		args := c.Args
		if c.Posix {
			if i := slices.IndexFunc(args, func(a string) bool { return a == "--" || !strings.HasPrefix(a, "-") }); i >= 0 {
				args = args[:i]
			}
			words = splitShortClusters(args)
		}
		words = append(words, helpAbbreviations(args)...)
	}
	safeWords := words
	if d.spec != nil {
		opts, operands, err := d.spec.parse(c.Args, c.Posix)
		if err != nil {
			return // the tool refuses its arguments
		}
		words = operands
		// The device must be an operand: "-n /dev/sda" to a tool whose -n
		// takes a value names no device to write.
		onDevice := false
		for _, op := range operands {
			if i := slices.Index(c.Args, op); i >= 0 && w.isDevice(c.Paths[i]) {
				onDevice = true
			}
		}
		if !onDevice {
			return
		}
		for _, o := range opts {
			if len(o.name) == 1 {
				words = append(words, "-"+o.name)
			} else {
				words = append(words, "--"+o.name)
			}
		}
		// Only options make a run safe: under POSIXLY_CORRECT "--help"
		// after the device is an operand.
		safeWords = words[len(operands):]
	}
	for _, a := range safeWords {
		if slices.Contains(d.safe, a) {
			return
		}
	}
	if len(d.needs) > 0 && !slices.ContainsFunc(words, func(a string) bool { return slices.Contains(d.needs, a) }) {
		return
	}
	if c.Program == "parted" {
		// parted [options] DEVICE [COMMAND…]: the device is the first
		// operand (getopt permutes), whatever the commands name; parted
		// runs the commands in turn, so the disk survives only when each
		// one reads. With no command it reads them from its standard
		// input, empty here.
		_, operands, err := d.spec.parse(c.Args, c.Posix)
		if err != nil || len(operands) < 2 {
			return
		}
		if i := slices.Index(c.Args, operands[0]); i < 0 || !w.isDevice(c.Paths[i]) {
			return
		}
		if partedOnlyReads(operands[1:]) {
			return
		}
	}
	if c.Program == "badblocks" && !badblocksWrites(w, c, d.spec) {
		return
	}
	if d.stdin && c.Program != "parted" && (c.Stdin == "" || c.Stdin == "/dev/null") {
		return // its commands come on standard input, and there were none
	}
	o.see(approval.TierHardline, "%s on the stand-in device %s: %s", c.Program, dev, strings.Join(c.Args, " "))
}

// badblocksWrites reports whether badblocks writes the device it is given
// (e2fsprogs misc/badblocks.c): "badblocks [options] DEVICE [LAST
// [FIRST]]" with exactly one of -w (destructive) and -n (non-destructive,
// which rewrites every block too), each given once (a second one is a
// usage error), the device first, and the block numbers whole unsigned
// numbers (strtoul, any base), which it exits on otherwise before opening
// the device.
func badblocksWrites(w world, c Call, spec *optSpec) bool {
	opts, operands, err := spec.parse(c.Args, c.Posix)
	if err != nil || len(operands) == 0 || len(operands) > 3 {
		return false
	}
	modes := 0
	for _, o := range opts {
		if o.name == "w" || o.name == "n" {
			modes++
		}
	}
	if modes != 1 {
		return false
	}
	if i := slices.Index(c.Args, operands[0]); i < 0 || !w.isDevice(c.Paths[i]) {
		return false
	}
	for _, n := range operands[1:] {
		if _, err := strconv.ParseUint(n, 0, 32); err != nil || strings.Contains(n, "_") {
			return false
		}
	}
	return true
}

// helpAbbreviations returns "--help" (or "--version") for each argument
// that abbreviates it ("--h", "--he", "--vers"): getopt_long reads it as
// --help, or refuses it as ambiguous when another long option starts the
// same way (mdadm's --homehost, LVM's --headings, a --verbose), and either
// way the tool writes nothing. For tools whose whole option table the
// oracle does not hold; it assumes none has another long option that
// such a prefix names alone (a tool without --version but with --verify).
func helpAbbreviations(args []string) []string {
	var out []string
	for _, a := range args {
		if a == "--" {
			break
		}
		if len(a) >= 3 && a != "--help" && strings.HasPrefix("--help", a) {
			out = append(out, "--help")
		}
		// "--v", "--ve": --version, or refused beside --verbose
		// ("--verb" is --verbose, a prefix of neither).
		if len(a) >= 3 && a != "--version" && strings.HasPrefix("--version", a) {
			out = append(out, "--version")
		}
	}
	return out
}

// splitShortClusters spells "-af" as "-a", "-f" (keeping the cluster too)
// and "--opt=v" as "--opt", so flag lists can be checked by name.
func splitShortClusters(args []string) []string {
	var out []string
	for _, a := range args {
		out = append(out, a)
		switch {
		case strings.HasPrefix(a, "--"):
			if n, _, ok := strings.Cut(a, "="); ok {
				out = append(out, n)
			}
		case len(a) > 2 && a[0] == '-':
			for _, r := range a[1:] {
				out = append(out, "-"+string(r))
			}
		}
	}
	return out
}

func isPower(name string) bool {
	switch name {
	case "reboot", "halt", "poweroff", "shutdown", "init", "telinit", "kexec":
		return true
	}
	return false
}

// systemd's shutdown and halt/reboot/poweroff option tables (systemd 252:
// systemctl-compat-shutdown.c, systemctl-compat-halt.c). Read with them,
// "--he" is --help, "--h" is refused as ambiguous (--help, --halt), and
// "-hP" is two options.
var (
	shutdownSpec = optSpec{short: "HPrhkKat:fFc", long: map[string]int{"help": noArg, "halt": noArg, "poweroff": noArg,
		"reboot": noArg, "kexec": noArg, "no-wall": noArg, "show": noArg}}
	haltSpec = optSpec{short: "pfwdnih", long: map[string]int{"help": noArg, "halt": noArg, "poweroff": noArg, "reboot": noArg,
		"force": noArg, "wtmp-only": noArg, "no-wtmp": noArg, "no-sync": noArg, "no-wall": noArg}}
)

func power(o *Observation, c Call) {
	switch c.Program {
	case "reboot", "halt", "poweroff", "shutdown":
		// As systemd parses them: a refused option stops the program, and
		// --help prints and exits wherever it is (permutation included).
		spec := haltSpec
		if c.Program == "shutdown" {
			spec = shutdownSpec
		}
		opts, _, err := spec.parse(c.Args, c.Posix)
		if err != nil || has(opts, "help") {
			return
		}
		if c.Program != "shutdown" {
			if has(opts, "w", "wtmp-only") {
				return // only writes the wtmp record
			}
			break
		}
		// shutdown: -k only warns; otherwise the last of the action
		// options wins, and -c (cancel) or --show as the last does nothing.
		if has(opts, "k") {
			return
		}
		last := ""
		for _, p := range opts {
			switch p.name {
			case "H", "halt", "P", "poweroff", "r", "reboot", "K", "kexec", "h", "c", "show":
				last = p.name
			}
		}
		if last == "c" || last == "show" {
			return
		}
	case "init", "telinit":
		if slices.ContainsFunc(splitShortClusters(c.Args), func(a string) bool { return a == "--help" || a == "--version" }) {
			return
		}
		i := slices.IndexFunc(c.Args, func(a string) bool { return !strings.HasPrefix(a, "-") })
		if i < 0 || (c.Args[i] != "0" && c.Args[i] != "6") {
			return
		}
	case "kexec":
		words := splitShortClusters(c.Args)
		if slices.ContainsFunc(words, func(a string) bool { return a == "--help" || a == "--version" }) {
			return
		}
		if !slices.ContainsFunc(words, func(a string) bool { return a == "-e" || a == "--exec" }) {
			return
		}
	}
	o.see(approval.TierHardline, "%s %s", c.Program, strings.Join(c.Args, " "))
}

// systemctlSpec is systemctl's option table (systemd 252): the options
// that take a value matter, they sit between systemctl and its verb.
var systemctlSpec = optSpec{short: "ht:p:P:alqfs:H:M:n:o:iTr", long: map[string]int{
	"help": noArg, "version": noArg, "type": requiredArg, "property": requiredArg, "value": noArg, "all": noArg,
	"reverse": noArg, "after": noArg, "before": noArg, "show-types": noArg, "failed": noArg, "full": noArg,
	"job-mode": requiredArg, "fail": noArg, "irreversible": noArg, "ignore-dependencies": noArg,
	"ignore-inhibitors": noArg, "kill-whom": requiredArg, "kill-value": requiredArg, "signal": requiredArg,
	"no-block": noArg, "wait": noArg, "no-wall": noArg, "global": noArg, "user": noArg, "system": noArg,
	"no-reload": noArg, "no-legend": noArg, "no-pager": noArg, "no-ask-password": noArg, "quiet": noArg,
	"force": noArg, "message": requiredArg, "root": requiredArg, "image": requiredArg, "runtime": noArg,
	"lines": requiredArg, "output": requiredArg, "plain": noArg, "state": requiredArg, "recursive": noArg,
	"host": requiredArg, "machine": requiredArg, "firmware-setup": noArg, "boot-loader-menu": requiredArg,
	"boot-loader-entry": requiredArg, "now": noArg, "dry-run": noArg, "reboot-argument": requiredArg,
	"check-inhibitors": requiredArg, "what": requiredArg, "timestamp": requiredArg, "mkdir": noArg,
	"marked": noArg, "read-only": noArg, "preset-mode": requiredArg, "show-transaction": noArg, "legend": requiredArg,
	"with-dependencies": noArg, "when": requiredArg, "kill-subgroup": noArg, "drop-in": requiredArg,
}}

var powerVerbs = []string{"reboot", "poweroff", "halt", "kexec", "soft-reboot"}

var powerUnits = []string{"reboot.target", "poweroff.target", "halt.target", "kexec.target", "soft-reboot.target",
	"shutdown.target", "ctrl-alt-del.target", "runlevel0.target", "runlevel6.target", "exit.target", "final.target",
	"systemd-reboot.service", "systemd-poweroff.service", "systemd-halt.service", "systemd-kexec.service",
	"systemd-soft-reboot.service"}

func systemctl(o *Observation, c Call) {
	opts, operands, err := systemctlSpec.parse(c.Args, c.Posix)
	if err != nil || has(opts, "h", "help", "version", "dry-run") || len(operands) == 0 {
		return
	}
	verb := operands[0]
	switch {
	case slices.Contains(powerVerbs, verb):
		o.see(approval.TierHardline, "systemctl %s", strings.Join(c.Args, " "))
	case slices.Contains([]string{"start", "isolate", "restart", "reload-or-restart", "try-restart", "enable"}, verb):
		if verb == "enable" && !has(opts, "now") {
			return
		}
		for _, u := range operands[1:] {
			if !strings.Contains(u, ".") {
				if verb == "isolate" {
					u += ".target"
				} else {
					u += ".service"
				}
			}
			if slices.Contains(powerUnits, u) {
				o.see(approval.TierHardline, "systemctl %s", strings.Join(c.Args, " "))
				return
			}
		}
	}
}

var powerMethods = []string{"Reboot", "PowerOff", "Halt", "KExec", "SoftReboot", "RebootWithFlags",
	"PowerOffWithFlags", "HaltWithFlags", "KExecWithFlags"}

func dbus(o *Observation, c Call) {
	if slices.Contains(c.Args, "--help") || slices.Contains(c.Args, "-h") {
		return
	}
	unitStart := false
	for _, a := range c.Args {
		m := a
		if i := strings.LastIndexAny(a, ".="); i >= 0 {
			m = a[i+1:]
		}
		switch {
		case slices.Contains(powerMethods, m):
			o.see(approval.TierHardline, "%s called %s", c.Program, m)
			return
		case m == "StartUnit" || m == "StartUnitReplace":
			unitStart = true
		case unitStart && slices.Contains(powerUnits, strings.TrimPrefix(strings.Trim(a, `"'`), "string:")):
			o.see(approval.TierHardline, "%s started %s", c.Program, a)
			return
		}
	}
}

// partedOnlyReads reports whether parted, given these command words, runs
// only commands that change nothing: print, help, version, quit, unit UNIT
// and align-check TYPE N. parted takes any unique prefix of a command name
// (case-insensitive); an ambiguous prefix, an unknown word or any other
// command (select included: the next commands act on another disk) counts
// as a write.
func partedOnlyReads(words []string) bool {
	readers := map[string]int{"print": 0, "unit": 1, "help": 0, "version": 0, "quit": 0, "align-check": 2}
	commands := []string{"align-check", "disk_set", "disk_toggle", "help", "mklabel", "mktable", "mkpart", "mkpartfs",
		"move", "name", "print", "quit", "rescue", "resize", "resizepart", "rm", "select", "set", "toggle", "type", "unit", "version", "cp", "mkfs"}
	for i := 0; i < len(words); i++ {
		w := strings.ToLower(words[i])
		var match []string
		for _, name := range commands {
			if name == w {
				match = []string{name}
				break
			}
			if w != "" && strings.HasPrefix(name, w) {
				match = append(match, name)
			}
		}
		if len(match) != 1 {
			return false
		}
		n, ok := readers[match[0]]
		if !ok {
			return false
		}
		i += n
	}
	return true
}
