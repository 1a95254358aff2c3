package grammar

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Effect is a set of things an invocation, an option, an option's value or an
// operand does. Effects describe programs, not policy: package approval maps
// them to rules and tiers.
type Effect uint64

// Effects. The first group describes a value (an option's argument, an
// operand, an environment variable's value); the second an invocation.
const (
	// Exec: the value is a command line or program that is run (a pager,
	// a preprocessor, an ssh ProxyCommand, rsync -e, make SHELL=…).
	Exec Effect = 1 << iota
	// Code: the value is inline code for an interpreter or editor that is
	// not shell (perl -e, awk programs, vim +cmd, gdb -ex, sqlite3 .shell).
	Code
	// Write: the value names a file or device that is written.
	Write
	// Read: the value names a file that is read.
	Read
	// Target: the operand is what the invocation's effects act on (the
	// paths rm deletes, the device mkfs formats, the units systemctl stops).
	Target
	// Env: the value is a NAME=VALUE environment or variable assignment
	// (make's operands, docker -e); see EnvEffects for the names that run code.
	Env
	// Config: the value names configuration read by the program, which may
	// itself run programs (ssh -F, git -c, --config FILE).
	Config
	// Program: the value names a program or command line that is run the
	// way it would be run on its own (CC, RUSTC_WRAPPER): it is as
	// dangerous as that command, and no more.
	Program
	// Options: the value holds options for the program, read as if given
	// on its command line (GOFLAGS for go, TAR_OPTIONS for tar: see
	// OptionsProgram).
	Options

	// Delete: the invocation removes its targets.
	Delete
	// Recursive: the invocation applies to whole trees.
	Recursive
	// Force: the invocation skips confirmations or safety checks.
	Force
	// Format: the invocation destroys the content of its device targets
	// (mkfs, wipefs -a, blkdiscard, sgdisk --zap-all, nvme format).
	Format
	// DeviceWrite: the invocation writes raw data to its targets (shred, dd).
	DeviceWrite
	// Truncate: the invocation sets its targets' size (truncate, fallocate).
	Truncate
	// Perms: the invocation changes permissions or ownership of its targets.
	Perms
	// ConfigWrite: the invocation changes persistent configuration of the
	// program or the system (git config --global).
	ConfigWrite
	// Network: the invocation contacts other hosts.
	Network
	// Remote: the invocation runs a command on another host.
	Remote
	// Listen: the invocation serves or exposes a command on the network
	// (nc -e, socat EXEC:).
	Listen
	// Power: the invocation halts, reboots, powers off or isolates the machine.
	Power
	// KillAll: the invocation signals every process.
	KillAll
	// Kill: the invocation signals processes chosen by name or pattern, or
	// with SIGKILL.
	Kill
	// ServiceStop: the invocation stops, restarts or disables services.
	ServiceStop
	// PkgRemove: the invocation removes installed packages.
	PkgRemove
	// ContainerStop: the invocation stops or removes containers, images,
	// volumes or deployed infrastructure.
	ContainerStop
	// Privileged: the invocation hands a container the host.
	Privileged
	// DBDrop: the invocation drops or wipes a database.
	DBDrop
	// Discard: the invocation throws away uncommitted work (git reset --hard).
	Discard
	// ForcePush: the invocation overwrites remote history.
	ForcePush
	// BranchDelete: the invocation force-deletes branches.
	BranchDelete
	// HistoryRewrite: the invocation rewrites history or prunes objects.
	HistoryRewrite
	// Firewall: the invocation flushes, disables or deletes firewall rules.
	Firewall
	// Accounts: the invocation changes users, passwords or sudoers.
	Accounts
	// Mount: the invocation mounts or unmounts filesystems or swap.
	Mount
	// Schedule: the invocation stores a command to run later (crontab, at).
	Schedule
	// Interactive: the invocation starts an interactive shell or REPL that
	// reads commands from its input.
	Interactive
	// DryRun: the invocation only prints help, a version, or what it would
	// do; none of its other effects happen.
	DryRun
	// NoCommand: a wrapper option meaning the wrapper runs no command
	// (sudo -l, command -v, taskset -p).
	NoCommand
	// Device: the invocation's targets are disks whatever they are called
	// (diskutil's disk2, nvme's controller names).
	Device
	// Chdir: the value is the directory the command runs in (env -C,
	// sudo -D, unshare -w): relative names resolve there.
	Chdir
	// Signal: the invocation signals the processes its targets name (kill
	// PID…): which ones, and whether that is every process, depends on the
	// targets' values.
	Signal
	// DiskChange: the invocation rewrites a disk's metadata, encryption
	// header or device mapping, or the firmware flash, in a way that can
	// lose data (debugfs -w, xfs_repair -L, fsck repairs, cryptsetup
	// luksHeaderRestore, dmsetup remove_all, flashrom -w): routine repair
	// or maintenance, not a wipe, so approval rather than hardline.
	DiskChange
	// Kernel: the invocation loads or removes kernel modules or makes the
	// kernel drop devices (insmod, rmmod, modprobe -r, udevadm trigger
	// --action=remove): code in the kernel, or a disk's driver gone.
	Kernel
	// EnvRef: a "key=NAME" value whose setting is the value of environment
	// variable NAME (git --config-env core.pager=P).
	EnvRef
	// Pipe: a Write value that starts with "|" or "!" is instead a command
	// line run with the output on its input (strace -o '|cmd').
	Pipe
)

// Has reports whether e holds every effect in f.
func (e Effect) Has(f Effect) bool { return e&f == f }

// Any reports whether e holds any effect in f.
func (e Effect) Any(f Effect) bool { return e&f != 0 }

// ArgKind says whether an option takes a value.
type ArgKind uint8

// Option value kinds, as getopt knows them.
const (
	NoArg    ArgKind = iota // a flag
	Required                // a value, attached ("-n5", "--n=5") or the next word
	Optional                // a value only when attached ("-i.bak", "--color=auto")
)

// LongRule is how a program resolves long option names.
type LongRule uint8

// Long option rules.
const (
	// Prefix is getopt_long's rule (GNU tools): an exact name, or else any
	// prefix that is the start of exactly one long option ("--recur").
	Prefix LongRule = iota
	// Exact accepts only whole names (Go flag, cobra, most non-GNU tools).
	Exact
	// LongOnly is getopt_long_only's rule (psmisc killall): Prefix, and a
	// single-dash word is a long option too ("-us" is "--user") unless it
	// is one short letter or names no long option, when it is a short
	// cluster ("-ualice" is -u alice).
	LongOnly
)

// Option is one option of a program. Names lists its spellings with their
// dashes, canonical name first ("--recursive", "-r", "-R"). A name with one
// dash and one letter is a short option that clusters ("-rf"); a name with
// one dash and more letters is a whole-word option ("find -delete", "java
// -jar"); a name with two dashes is a long option.
type Option struct {
	Names []string
	Arg   ArgKind
	// Effects are what giving the option does to the invocation.
	Effects Effect
	// Value is what the option's value is (Exec: a command that runs;
	// Write: a file written; Config: configuration read …).
	Value Effect
	// ValueChars, when set, limits an Optional value to the run of these
	// characters that follows the option in its cluster: perl's "-l" takes
	// octal digits, so "-lne" is -l, -n and -e.
	ValueChars string
}

// OperandRule gives effects to operands by position or value.
type OperandRule struct {
	// Index selects one operand: 0 is the first, -1 the last. Ignored when
	// All is set.
	Index int
	// All selects every operand from From on.
	All  bool
	From int
	// Min applies the rule only when there are at least Min operands (the
	// last operand of cp is its destination only when there are two).
	Min int
	// Prefix selects operands starting with it (dd's "of="); the operand's
	// Value is what follows the prefix. Index/All are ignored.
	Prefix string
	// Values, when set, gives effects to an operand equal to one of its
	// keys (telinit 0, systemctl start reboot.target) instead of Effects.
	Values map[string]Effect
	// Effects are the operand's effects (Target, Write, Exec …).
	Effects Effect
	// Invocation are effects the operand adds to the whole invocation.
	Invocation Effect
}

// Wrap describes a program that runs another command named on its command
// line (env, sudo, nice, timeout …).
type Wrap struct {
	// Operands is how many operands precede the command (timeout's
	// DURATION, chroot's DIR, setarch's ARCH).
	Operands int
	// Assigns reports whether NAME=VALUE words before the command are
	// environment assignments (env, sudo).
	Assigns bool
	// ExtraArgs reports whether the command receives run-time arguments
	// (xargs).
	ExtraArgs bool
	// Shell reports whether the command words are joined and run by a
	// shell (watch, ssh) rather than executed directly.
	Shell bool
}

// Spec is everything the grammar knows about one program or subcommand.
type Spec struct {
	// Name is the program name or the subcommand word.
	Name string
	// Aliases are other names for the same program or subcommand.
	Aliases []string
	// Long is the long option rule.
	Long LongRule
	// StopAtOperand reports that options end at the first operand
	// (POSIX getopt, "+" in GNU getopt: wrappers, ssh); otherwise GNU
	// permutation applies and options may follow operands.
	StopAtOperand bool
	// Traditional reports that a first word without a dash is a cluster
	// of short options whose values follow it in order ("tar cf A .").
	Traditional bool
	// Options are the options of the program (or subcommand).
	Options []Option
	// Persistent reports that the options of this spec stay valid after a
	// subcommand (cobra's persistent flags: kubectl, helm, npm); git's
	// global options do not.
	Persistent bool
	// Subs are the subcommands, found as the first operand after global
	// options. A sub inherits nothing but the parent's Persistent options.
	Subs []*Spec
	// Effects are what running the program (or subcommand) does at all.
	Effects Effect
	// Operands gives operands their effects.
	Operands []OperandRule
	// Env maps environment variables (and make-style variables given as
	// operands) the program reads to what their value is (PAGER: Exec).
	Env map[string]Effect
	// ExecKeys are configuration keys (lower case, matched as substrings
	// of "-c key=value" style values) whose value runs a program.
	ExecKeys []string
	// Wrap is set for programs that run another command.
	Wrap *Wrap
	// Stdin, when set, says how the program reads commands given as text
	// (on standard input, or from a file option naming it): see Script.
	Stdin *Script
	// ConfigFiles, when set, are configuration files the program reads on
	// every run whose settings can run commands (git's ~/.gitconfig).
	ConfigFiles *ConfigFiles
	// Refine, if set, adjusts a parsed invocation for semantics the data
	// cannot express (dd's key=value operands, kill's pid -1, find's
	// expression). It must not allocate more than it needs: it runs for
	// every command analysed.
	Refine func(inv *Invocation)

	parent *Spec
	wraps  bool // s or one of its subcommands has Wrap
	subs   map[string]*Spec
	// short maps a short option letter to 1 + its index in Options. It
	// holds no pointers, and long names are found by scanning Options, so
	// the table costs the garbage collector little: it is live in every
	// process that analyses commands.
	short [128]uint16
}

// Opt is one option found in an argument list.
type Opt struct {
	// Name is the canonical name ("--recursive"); for an option the
	// grammar does not know, the spelling as written ("-Z", "--frob").
	Name string
	// Spelled is how it was written ("--recur", "-r" for the r of "-rf").
	Spelled string
	// Value is the option's value; HasValue reports whether it had one.
	Value    string
	HasValue bool
	// Arg is the index in the argument list of the word holding the
	// option; ValueArg the index of the word holding its value (-1 when
	// none; equal to Arg when attached).
	Arg, ValueArg int
	// Known reports whether the grammar knows the option.
	Known bool
	// Missing reports that the option takes a value and the argument list
	// ended before one.
	Missing bool
	// Effects are the option's effects on the invocation; ValueEffects
	// what its value is.
	Effects, ValueEffects Effect
}

// Operand is one operand found in an argument list.
type Operand struct {
	// Value is the operand, or for a Prefix rule ("of=") what follows the
	// prefix.
	Value string
	// Arg is its index in the argument list.
	Arg int
	// Effects are the operand's effects (Target, Write, Exec …).
	Effects Effect
}

// Invocation is an argument list read with a program's grammar.
type Invocation struct {
	// Program is the program name given to Parse.
	Program string
	// Spec is the program's grammar; nil when the program is unknown (the
	// arguments are then read generically: every word starting with "-"
	// is an option without a value).
	Spec *Spec
	// Sub is the subcommand path ("stash", "drop"), and SubSpec the spec
	// of the innermost subcommand (Spec when there is none).
	Sub     []string
	SubSpec *Spec
	// Args are the arguments given to Parse.
	Args []string
	// Options and Operands are the arguments, classified. Subcommand
	// words are in neither.
	Options  []Opt
	Operands []Operand
	// Effects is the union of the program's, subcommands', options' and
	// operands' invocation effects.
	Effects Effect
	// Unknown reports whether some option was not in the grammar.
	Unknown bool
	// Command is the index in Args where a wrapper's command starts, -1
	// when none (a wrapper given nothing to run, or a NoCommand option).
	Command int
	// Assigns are NAME=VALUE words a wrapper read as environment.
	Assigns []string
	// DashDash is the index of the "--" that ended options, -1 if none.
	DashDash int
}

// Lookup returns the grammar of program (a base name such as "rm"), or nil.
// Programs that dispatch on a name prefix are found by it: mkfs(8) runs
// mkfs.TYPE for any TYPE, fsck(8) fsck.TYPE, and partclone ships one
// partclone.FS per filesystem, so "mkfs.bcachefs" is read as mkfs.
func Lookup(program string) *Spec {
	e := index()[program]
	if e == nil {
		if p, _, ok := strings.Cut(program, "."); ok && prefixFamilies[p] {
			return Lookup(p)
		}
		return nil
	}
	if s := e.spec.Load(); s != nil {
		return s
	}
	s := families[e.family].specs()[program]
	e.spec.Store(s)
	return s
}

// prefixFamilies are the programs whose "NAME.SUFFIX" variants share their
// grammar (see Lookup).
var prefixFamilies = map[string]bool{"mkfs": true, "fsck": true, "partclone": true}

// Wraps reports whether the program, or one of its subcommands, runs
// another command named on its command line (it has a Wrap).
func (s *Spec) Wraps() bool { return s != nil && s.wraps }

// Sub returns the subcommand spec named word, or nil.
func (s *Spec) Sub(word string) *Spec {
	if s == nil || s.subs == nil {
		return nil
	}
	return s.subs[word]
}

// Option returns the option a spelling names in s (or in an ancestor with
// Persistent options), resolving abbreviations by s's long rule, or nil.
// A short spelling is one letter with its dash ("-r").
func (s *Spec) Option(spelling string) *Option {
	for sp := s; sp != nil; sp = sp.parent {
		if sp != s && !sp.Persistent {
			continue
		}
		if o := sp.option(spelling); o != nil {
			return o
		}
	}
	return nil
}

func (s *Spec) option(spelling string) *Option {
	if len(spelling) == 2 && spelling[0] == '-' && spelling[1] < 128 {
		if i := s.short[spelling[1]]; i > 0 {
			return &s.Options[i-1]
		}
		return nil
	}
	if o := s.longOption(spelling); o != nil {
		return o
	}
	if s.Long == Exact || !strings.HasPrefix(spelling, "--") || len(spelling) < 3 {
		return nil
	}
	var found *Option
	for i := range s.Options {
		o := &s.Options[i]
		for _, n := range o.Names {
			if strings.HasPrefix(n, "--") && strings.HasPrefix(n, spelling) {
				if found != nil && found != o {
					return nil // ambiguous: getopt_long refuses it
				}
				found = o
			}
		}
	}
	return found
}

// longOption returns the option with the long or whole-word name exactly.
func (s *Spec) longOption(name string) *Option {
	for i := range s.Options {
		for _, n := range s.Options[i].Names {
			if n == name {
				return &s.Options[i]
			}
		}
	}
	return nil
}

// Canonical returns the canonical name of the option spelled spelling for
// program (with its subcommand path), or spelling itself when the grammar
// does not know it. A short cluster is not split; see Parse for that.
func Canonical(program string, sub []string, spelling string) string {
	s := Lookup(program)
	for _, w := range sub {
		if s == nil {
			break
		}
		s = s.Sub(w)
	}
	if s == nil {
		return spelling
	}
	name := spelling
	if i := strings.IndexByte(name, '='); i > 0 && strings.HasPrefix(name, "--") {
		name = name[:i]
	}
	if o := s.Option(name); o != nil {
		return o.Names[0]
	}
	return spelling
}

// A family's table is built when one of its programs is first looked up,
// not at init (init work runs in every tether process, including the
// container init that tether re-executes) and not all at once: the tables
// stay live for the life of the process and the garbage collector scans
// them on every cycle, so a process pays only for the families it uses.

// family is one file's table.
type family struct {
	decl  func() []*Spec
	specs func() map[string]*Spec
}

func newFamily(decl func() []*Spec) family {
	return family{decl: decl, specs: sync.OnceValue(func() map[string]*Spec { return buildFamily(decl) })}
}

// buildFamily indexes the specs of one family by every name they have.
// A name programNames does not give this family is a stale table, which
// would leave the program unknown: it panics.
func buildFamily(decl func() []*Spec) map[string]*Spec {
	m := map[string]*Spec{}
	for _, s := range decl() {
		s.build(nil)
		for _, n := range append([]string{s.Name}, s.Aliases...) {
			if index()[n] == nil {
				panic("grammar: program " + n + " is missing from programNames (go test ./grammar -run TestProgramNames -update)")
			}
			m[n] = s
		}
	}
	return m
}

// families lists the per-family tables, one file each.
var families = []family{
	newFamily(coreutils), newFamily(disks), newFamily(power), newFamily(kills), newFamily(gitFamily),
	newFamily(packages), newFamily(clusters), newFamily(interpreters), newFamily(editors), newFamily(network),
	newFamily(builds), newFamily(wrappers), newFamily(system), newFamily(storage), newFamily(images),
	newFamily(deviceReaders),
}

// entry is one program name in the index: its family, and its spec once
// the family is built (so that a lookup is one map access).
type entry struct {
	family int
	spec   atomic.Pointer[Spec]
}

// index maps each program name to its entry, from programNames (a
// static table: declaring every family to learn its names cost each
// process that analyses a command more than the rest of its first
// analysis).
var index = sync.OnceValue(func() map[string]*entry {
	m := make(map[string]*entry, len(programNames))
	for _, p := range programNames {
		m[p.name] = &entry{family: int(p.family)}
	}
	return m
})

// Programs returns the spec of every program the grammar knows, each once
// (aliases are in its Aliases), sorted by name. It builds every family:
// for tools that walk the whole grammar (the bash oracle's generator,
// tests), not for the analysis path.
func Programs() []*Spec {
	var out []*Spec
	for n, s := range table() {
		if n == s.Name {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b *Spec) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// table returns the whole grammar, every family built (for tests).
func table() map[string]*Spec {
	m := map[string]*Spec{}
	for n, e := range index() {
		m[n] = families[e.family].specs()[n]
	}
	return m
}

// build indexes s and its subcommands.
func (s *Spec) build(parent *Spec) {
	s.parent = parent
	if len(s.Options) >= 1<<16-1 {
		panic("grammar: too many options for " + s.Name)
	}
	for i := range s.Options {
		for _, n := range s.Options[i].Names {
			switch {
			case len(n) == 2 && n[0] == '-' && n[1] < 128:
				s.short[n[1]] = uint16(i + 1)
			case strings.HasPrefix(n, "-"):
			default:
				panic("grammar: option name without dash: " + n)
			}
		}
	}
	s.wraps = s.Wrap != nil
	if len(s.Subs) > 0 {
		s.subs = map[string]*Spec{}
		for _, c := range s.Subs {
			c.build(s)
			s.wraps = s.wraps || c.wraps
			for _, n := range append([]string{c.Name}, c.Aliases...) {
				s.subs[n] = c
			}
		}
	}
}
