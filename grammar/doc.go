// Package grammar is tether's one command grammar: how each known program
// reads its arguments, as data. Package approval (the rule catalog),
// package mandate (command rules: matching, "-*", compile) and package
// shellparse (wrapper peeling) all read it, so that a program is described
// once and every reader agrees with the others and with the program.
//
// It is pure: no I/O, no processes, no policy. It says what an argument
// list does (Effects); whether that needs approval is package approval's
// business.
//
// # Data
//
// A Spec describes one program (one entry per program, one file per
// family: coreutils.go for the rm family and file writers, disks.go,
// power.go, kills.go, git.go, packages.go, clusters.go for kubectl, helm
// and container engines, interpreters.go, editors.go, network.go,
// builds.go, wrappers.go, system.go, storage.go for LVM, ZFS, btrfs, wipers
// and flash, images.go for imagers, cloners and archivers that write a
// named output, devread.go for the tools that only read devices). Programs
// that dispatch on a name prefix (mkfs.TYPE, fsck.TYPE, partclone.FS) are
// found by it. For each program:
//
//   - Options: spellings (canonical first), whether each takes a value
//     (NoArg, Required, Optional attached-only), what giving it does
//     (Effects: Recursive, Force, Format, DryRun …) and what its value is
//     (Value: Exec for a command line that runs, Code for inline
//     interpreter code, Write for a file written, Config …).
//   - Long: the long-option rule the program really uses: Prefix
//     (getopt_long: any unique prefix, "--recur", "--no-pres"), Exact, or
//     LongOnly (getopt_long_only: psmisc killall's "-us" is --user).
//   - StopAtOperand: POSIX option order (wrappers, ssh, interpreters);
//     otherwise GNU permutation (options may follow operands).
//   - Subs: subcommands, found after global options that may take values
//     ("git -C DIR reset --hard", "kubectl --context X delete pod",
//     "helm --namespace X uninstall", "npm --prefix X uninstall -g").
//     Persistent options stay valid after the subcommand (cobra).
//   - Operands: effects by position or value (the last operand of cp is
//     written, telinit 0 powers off, systemctl start reboot.target).
//   - Env: environment variables (and make-style variables given as
//     operands) that run something; EnvEffects adds the variables that do
//     so for every program (LD_PRELOAD, BASH_ENV, PAGER, GIT_SSH_COMMAND …),
//     the build-tool variables rated as the program they name (Program:
//     CC, RUSTC_WRAPPER) and those that hold a program's options (Options,
//     one table in env.go: TAR_OPTIONS, ZIPOPT, MAKEFLAGS, GOFLAGS, MANOPT
//     …; OptionsProgram names the program that reads one).
//   - ExecKeys: configuration keys whose value runs a program ("git -c
//     core.pager=…", "ssh -o ProxyCommand=…").
//   - ConfigFiles: configuration files read on every run (~/.gitconfig,
//     .git/config, $GIT_CONFIG_GLOBAL, $RIPGREP_CONFIG_PATH) and the
//     commands their text runs.
//   - Wrap: for wrappers, how many operands precede the command and
//     whether NAME=VALUE words are environment.
//   - Refine: a small function for semantics data cannot state (dd's
//     key=value operands, kill's pid -1, find's expression, D-Bus calls).
//   - Stdin: a Script, for programs that read commands given as text, on
//     standard input or from a file option naming it (crontab -, at, gdb
//     and gdb -x -, ed, vim -s /dev/stdin, sqlite3, psql -f -, cmake -P -,
//     python3 -): the language, and how known text is rated: as the same
//     program given it inline (python's -c, gdb's -ex per line) or as the
//     shell commands it runs (a crontab's entries, ed's "!" lines, cmake's
//     execute_process). Invocation.ScriptCommand builds that text.
//
// Adding a program is one entry in its family's file.
//
// # API
//
// Parse(program, args) reads an argument list and returns an Invocation:
// the subcommand path, each option (canonical name, spelling, value,
// effects, value effects, whether known), each operand (value, effects),
// the union of effects, and for wrappers where the wrapped command starts.
// Lookup returns a program's Spec, Spec.Option resolves a spelling
// (abbreviations included), Canonical names an option for a program and
// subcommand, EnvEffects says what an environment variable's value is.
//
// The API is stable: package mandate and package approval rely on it.
//
// # Fail-closed reading
//
// An option the grammar does not know is recorded (Opt.Known false,
// Invocation.Unknown) and never lowers what is found: it does not swallow
// the next word, except that a word which is not a subcommand, right after
// an unknown option of a program with subcommands, is taken as that
// option's value so that the subcommand is still found. An unknown program
// is read generically (every "-x" word an option without value). Callers
// treat effects they cannot rule out as present.
//
// The table is built on first use, not at init: init work runs in every
// tether process, including the container init that tether re-executes.
package grammar
