// Package oracle is the bash oracle of the test suite (issue 15): it runs
// commands under real bash inside tether's own sandbox and reports what they
// really did, so tests can check that no static verdict of the approval
// package is weaker than the observed effect.
//
// One sandbox (package sandbox, as root) runs a batch of commands. Its
// driver, pid 1, restores before each command whatever the previous one
// changed, runs it with `timeout` under /bin/bash in /work with
// HOME=/home/alice, and records afterwards:
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
//     resolves to, and exits 0. The observed tier is derived from how the
//     real program reads that argv (getopt_long with its abbreviations and
//     clusters, GNU rm's refusals of / and ..). sudo, doas, su and runuser,
//     which cannot work under no_new_privs, are stand-ins that run what they
//     wrap.
//
// Generate writes commands from a grammar (wrappers × option spellings ×
// targets × quoting × shell constructs) that knows nothing of the
// analyzer's rules. The tests (oracle_test.go) attack the oracle's own
// observations, show that bash runs every parser-divergence case of
// shellparse/testdata/divergence.tsv, and compare every corpus and the
// generated commands with the static verdict. `make oracle` runs them at
// full size. Linux and root only; the package is test support, not used by
// tether itself.
package oracle
