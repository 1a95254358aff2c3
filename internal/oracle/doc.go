// Package oracle is the bash oracle of the test suite (issue 15): it runs
// commands under real bash inside tether's own sandbox and reports what they
// really did, so tests can check that no static verdict of the approval
// package is weaker than the observed effect.
//
// One sandbox (package sandbox, as root) runs a batch of cases: a command
// and the variables exported to it (Case). Its driver, pid 1, restores
// before each command whatever the previous one changed, runs it with
// `timeout` under /bin/bash in /work with HOME=/home/alice and every other
// variable unset but the case's, and records afterwards (its log too, when
// the command deleted it):
//
//   - stand-in block devices: regular files at /dev/sda, /dev/nvme0n1,
//     /dev/mapper/x, /dev/vg0/lv0, /dev/disk/by-id/…, /dev/block/8:0,
//     /dev/root … inside the sandbox only; any write to one is hardline;
//   - a canary home (/home/alice) and /root: all their visible entries gone
//     is hardline, a write to an rc or credential file approval;
//   - canary processes named like system daemons (sshd, postgres, nginx):
//     all killed or stopped is hardline (kill -1, pkill -f ., killall -r .),
//     some approval; kill, pkill and killall run for real, contained by the
//     pid namespace;
//   - the pids limit: a fork bomb fills it (hardline);
//   - logging stand-ins bind-mounted over, and first on PATH before, every
//     hardline-class program (rm, dd, mkfs*, wipefs, shred, blkdiscard,
//     sgdisk, parted, fdisk, sfdisk, reboot, shutdown, halt, poweroff, init,
//     telinit, kexec, systemctl, busctl, dbus-send, gdbus …): each records its
//     argv, working directory, standard input and the path each argument
//     resolves to, and exits 0. Each is its own file naming the program it
//     stands for, so a copy or a link run under another name (cp /bin/rm x;
//     ./x -rf ~) is still seen as that program; run by a stand-in's own name
//     (/sbin/reboot, a link to systemctl here) it is the program of that
//     name. The observed tier is derived from how the
//     real program reads that argv (getopt_long with its abbreviations and
//     clusters, GNU rm's refusals of / and ..). sudo, doas, su and runuser,
//     which cannot work under no_new_privs, are stand-ins that run what they
//     wrap.
//
// Generate writes commands, three in four from package grammar's data
// (grammargen.go): every program, subcommand and option with an effect the
// oracle can observe (format, device write, delete, power, kill, an option
// or operand that runs a command, runs code, writes a file or changes
// directory), spelled as getopt reads it (unique long prefixes, --opt=val
// and --opt val, short clusters ending in an attached value, "--", value-
// taking global options before the subcommand, options after operands),
// a disk after any option whatever the grammar says it takes, listing and
// dry-run options beside destructive ones, the environment a program reads,
// inside the wrappers the grammar knows (with their own options, operands
// and directory changes) and shells, × quoting × targets (every device
// name, homes, system directories, relative names after cd /dev) × shell
// constructs; the rest from templates for shell-level effects no grammar
// holds (redirections, fork bombs, pipes into kill). The grammar supplies
// the vocabulary only: what each command did is the oracle's observation,
// so a grammar entry that misreads a program is found, not assumed.
// FuzzOracle feeds fuzzing bytes to the same generator as its choices.
// A command whose choice expansions (${X:+w}, ${X:-w}, ${X=w} …) name
// variables is also run with each of them set to a benign value and set
// empty (SetVariants): unset alone, "${X:+sh} -c reboot" does nothing. The
// generator writes such expansions around program words, targets and
// options, and puts POSIXLY_CORRECT in a command's environment (given,
// through env, exported, set -a) with dry-run options after operands.
// A stand-in device renamed or removed is approval (its data is kept); a
// file moved over one is seen by inode. The tests (oracle_test.go) attack the oracle's own
// observations, show that bash runs every parser-divergence case of
// shellparse/testdata/divergence.tsv, and compare every corpus and the
// generated commands with the static verdict. `make oracle` runs them at
// full size. Linux and root only; the package is test support, not used by
// tether itself.
package oracle
