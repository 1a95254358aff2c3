package oracle

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tether-dev/tether/approval"
)

func TestGetoptReadsAsGlibc(t *testing.T) {
	t.Parallel()
	opts, ops, err := rmSpec.parse([]string{"--recur", "x", "-fv", "--", "-r"}, false)
	require.NoError(t, err)
	assert.Equal(t, []opt{{name: "recursive"}, {name: "f"}, {name: "v"}}, opts)
	assert.Equal(t, []string{"x", "-r"}, ops, "options and operands interleave; -- ends options")
	_, _, err = rmSpec.parse([]string{"--ver", "x"}, false)
	assert.ErrorIs(t, err, errUsage, "--ver is ambiguous (verbose, version)")
	_, _, err = rmSpec.parse([]string{"-rq", "x"}, false)
	assert.ErrorIs(t, err, errUsage, "unknown short option")
	opts, ops, err = systemctlSpec.parse([]string{"-H", "host", "--no-bl", "reboot"}, false)
	require.NoError(t, err)
	assert.Equal(t, []string{"reboot"}, ops, "a value-taking option before the verb")
	assert.Equal(t, "host", opts[0].val)
	opts, _, err = wipefsSpec.parse([]string{"-fo0x1fe", "/dev/sda"}, false)
	require.NoError(t, err)
	assert.Equal(t, []opt{{name: "f"}, {name: "o", val: "0x1fe"}}, opts, "an attached value ends the cluster")
	opts, ops, err = wipefsSpec.parse([]string{"-f", "/dev/sda", "--no-act", "-a"}, true)
	require.NoError(t, err)
	assert.Equal(t, []opt{{name: "f"}}, opts, "POSIXLY_CORRECT: the first operand ends the options")
	assert.Equal(t, []string{"/dev/sda", "--no-act", "-a"}, ops)
}

func TestClassifyPosixlyCorrect(t *testing.T) {
	t.Parallel()
	w := world{home: "/home/alice", devices: []string{"/dev/sda"}}
	for _, posix := range []bool{false, true} {
		c := Call{Program: "shred", Cwd: "/work", Stdin: "/dev/null", Posix: posix, Args: []string{"/dev/sda", "--help"}, Paths: []string{"/dev/sda", ""}}
		want := approval.TierAllow // --help prints and exits wherever it is
		if posix {
			want = approval.TierHardline // --help after the device is a file operand
		}
		assert.Equal(t, want, w.classify("x", nil, []Call{c}, "").Tier, "POSIXLY_CORRECT %v", posix)
	}
}

func TestClassifyCalls(t *testing.T) {
	t.Parallel()
	w := world{home: "/home/alice", homeEntries: []string{"notes.txt", "projects"}, devices: []string{"/dev/sda"}, canaries: 3}
	call := func(prog string, args, paths []string) approval.Tier {
		o := w.classify("x", nil, []Call{{Program: prog, Cwd: "/work", Stdin: "/dev/null", Args: args, Paths: paths}}, "")
		return o.Tier
	}
	tests := []struct {
		prog  string
		args  []string
		paths []string
		want  approval.Tier
	}{
		{"rm", []string{"-rf", "/home/alice"}, []string{"", "/home/alice"}, approval.TierHardline},
		{"rm", []string{"-r", "/"}, []string{"", "/"}, approval.TierApproval},
		{"rm", []string{"-r", "--no-preserve-root", "/"}, []string{"", "", "/"}, approval.TierHardline},
		{"rm", []string{"-r", "/home/alice/.."}, []string{"", "/home"}, approval.TierApproval},
		{"rm", []string{"-r", "/home/alice/notes.txt", "/home/alice/projects"}, []string{"", "/home/alice/notes.txt", "/home/alice/projects"}, approval.TierHardline},
		{"rm", []string{"-r", "--help", "/usr"}, []string{"", "", "/usr"}, approval.TierAllow},
		{"rm", []string{"/home/alice"}, []string{"/home/alice"}, approval.TierAllow},
		{"dd", []string{"if=/dev/zero", "of=/dev/disk/by-id/x"}, []string{"/dev/zero", "/dev/sda"}, approval.TierHardline},
		{"dd", []string{"if=/dev/sda", "of=img"}, []string{"/dev/sda", ""}, approval.TierAllow},
		{"wipefs", []string{"--al", "/dev/sda"}, []string{"", "/dev/sda"}, approval.TierHardline},
		{"wipefs", []string{"/dev/sda"}, []string{"/dev/sda"}, approval.TierAllow},
		{"fdisk", []string{"/dev/sda"}, []string{"/dev/sda"}, approval.TierAllow},
		{"mkfs.minix", []string{"-n", "/dev/sda"}, []string{"", "/dev/sda"}, approval.TierAllow}, // -n takes the device as its value
		{"blkdiscard", []string{"-p", "/dev/sda"}, []string{"", "/dev/sda"}, approval.TierAllow},
		// badblocks DEVICE [LAST [FIRST]], exactly one of -w and -n.
		{"badblocks", []string{"-w", "/dev/sda"}, []string{"", "/dev/sda"}, approval.TierHardline},
		{"badblocks", []string{"-nsv", "/dev/sda", "0x100", "8"}, []string{"", "/dev/sda", "", ""}, approval.TierHardline},
		{"badblocks", []string{"/dev/sda"}, []string{"/dev/sda"}, approval.TierAllow},
		{"badblocks", []string{"-wwoext4", "-n", "/root/admin", "/dev/sda"}, []string{"", "", "/root/admin", "/dev/sda"}, approval.TierAllow},
		{"badblocks", []string{"-w", "-n", "/dev/sda"}, []string{"", "", "/dev/sda"}, approval.TierAllow},
		{"badblocks", []string{"-w", "README.md", "/dev/sda"}, []string{"", "/work/README.md", "/dev/sda"}, approval.TierAllow},
		{"badblocks", []string{"-w", "/dev/sda", "/dev/sda"}, []string{"", "/dev/sda", "/dev/sda"}, approval.TierAllow},
		{"badblocks", []string{"-h", "/dev/sda"}, []string{"", "/dev/sda"}, approval.TierAllow},
		// --h abbreviates --help (or is ambiguous): nothing is written.
		{"mkfs.btrfs", []string{"--h", "-f", "/dev/sda"}, []string{"", "", "/dev/sda"}, approval.TierAllow},
		{"vgremove", []string{"--he", "--", "/dev/sda"}, []string{"", "", "/dev/sda"}, approval.TierAllow},
		{"vgremove", []string{"--", "--h", "/dev/sda"}, []string{"", "", "/dev/sda"}, approval.TierHardline},
		{"mkfs.btrfs", []string{"-f", "/dev/sda"}, []string{"", "/dev/sda"}, approval.TierHardline},
		{"mkntfs", []string{"--ve", "/dev/sda"}, []string{"", "/dev/sda"}, approval.TierAllow},
		// parted's device is its first operand; shutdown --show only prints
		{"parted", []string{"--fix", "notes.txt", "-f", "/dev/./sda", "notes.txt"}, []string{"", "/work/notes.txt", "", "/dev/sda", "/work/notes.txt"}, approval.TierAllow},
		{"parted", []string{"-s", "/dev/sda", "mklabel", "gpt"}, []string{"", "/dev/sda", "", ""}, approval.TierHardline},
		{"parted", []string{"/dev/sda", "print"}, []string{"/dev/sda", ""}, approval.TierAllow},
		{"parted", []string{"/dev/sda", "unit", "s", "p"}, []string{"/dev/sda", "", "", ""}, approval.TierAllow},
		{"parted", []string{"/dev/sda", "print", "mkl", "gpt"}, []string{"/dev/sda", "", "", ""}, approval.TierHardline},
		{"parted", []string{"/dev/sda", "unit", "s", "r", "1"}, []string{"/dev/sda", "", "", "", ""}, approval.TierHardline}, // r is ambiguous: fail closed
		{"parted", []string{"/dev/sda"}, []string{"/dev/sda"}, approval.TierAllow},                                           // interactive, empty input
		{"shutdown", []string{"--show", "/home/alice"}, []string{"", "/home/alice"}, approval.TierAllow},
		{"shutdown", []string{"now"}, []string{""}, approval.TierHardline},
		{"mdadm", []string{"-E", "/dev/sda", "--create"}, []string{"", "/dev/sda", ""}, approval.TierAllow}, // two modes: refused
		{"mdadm", []string{"--create", "/dev/md0", "/dev/sda"}, []string{"", "/dev/sda", "/dev/sda"}, approval.TierHardline},
		{"blkdiscard", []string{"-f", "/dev/sda"}, []string{"", "/dev/sda"}, approval.TierHardline},
		{"sgdisk", []string{"--iterations=1", "/dev/sda"}, []string{"", "/dev/sda"}, approval.TierAllow},      // unknown option: refused
		{"sgdisk", []string{"-n", "1:0:+512M", "/dev/sda"}, []string{"", "", "/dev/sda"}, approval.TierAllow}, // adds a partition: destroys nothing
		{"sgdisk", []string{"-p", "-Z", "/dev/sda"}, []string{"", "", "/dev/sda"}, approval.TierHardline},     // a listing beside a zap still zaps
		{"sgdisk", []string{"-p", "/dev/sda"}, []string{"", "/dev/sda"}, approval.TierAllow},
		{"sgdisk", []string{"-af", "/dev/sda"}, []string{"", "/dev/sda"}, approval.TierAllow}, // an alignment alone changes nothing
		{"systemctl", []string{"--no-bl", "reboot"}, []string{"", ""}, approval.TierHardline},
		{"systemctl", []string{"isolate", "poweroff"}, []string{"", ""}, approval.TierHardline},
		{"systemctl", []string{"--dry-run", "reboot"}, []string{"", ""}, approval.TierAllow},
		{"shutdown", []string{"-c"}, []string{""}, approval.TierAllow},
		// systemd's shutdown: the last action wins, -k only warns, --help
		// (any unique prefix) exits first, "--h" is ambiguous (refused).
		{"shutdown", []string{"-c", "-r", "now"}, []string{"", "", ""}, approval.TierHardline},
		{"shutdown", []string{"-cr", "now"}, []string{"", ""}, approval.TierHardline},
		{"shutdown", []string{"--sh", "-P"}, []string{"", ""}, approval.TierHardline},
		{"shutdown", []string{"-r", "-c"}, []string{"", ""}, approval.TierAllow},
		{"shutdown", []string{"-r", "-k", "now"}, []string{"", "", ""}, approval.TierAllow},
		{"shutdown", []string{"--he", "/home/alice/", "-hP"}, []string{"", "/home/alice", ""}, approval.TierAllow},
		{"shutdown", []string{"-hP", "now", "--hel"}, []string{"", "", ""}, approval.TierAllow},
		{"shutdown", []string{"--h", "now"}, []string{"", ""}, approval.TierAllow},
		{"shutdown", []string{"-t", "-c", "now"}, []string{"", "", ""}, approval.TierHardline}, // -t takes -c as its value
		{"reboot", []string{"--he"}, []string{""}, approval.TierAllow},
		{"reboot", []string{"--f"}, []string{""}, approval.TierHardline},
		{"poweroff", []string{"-fw"}, []string{""}, approval.TierAllow},
		{"init", []string{"6"}, []string{""}, approval.TierHardline},
		{"init", []string{"3"}, []string{""}, approval.TierAllow},
		{"busctl", []string{"call", "org.freedesktop.login1", "/org/freedesktop/login1", "org.freedesktop.login1.Manager", "Reboot", "b", "true"},
			make([]string, 7), approval.TierHardline},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want.String(), call(tt.prog, tt.args, tt.paths).String(), "%s %v", tt.prog, tt.args)
	}
}

func TestClassifyState(t *testing.T) {
	t.Parallel()
	w := world{home: "/home/alice", homeEntries: []string{"notes.txt", "projects"}, canaries: 3, sensitive: []string{".bashrc"}}
	tier := func(result ...string) string { return w.classify("x", result, nil, "").Tier.String() }
	assert.Equal(t, "hardline", tier("dev-changed\t/dev/sda"))
	assert.Equal(t, "hardline", tier("home-gone\tnotes.txt", "home-gone\tprojects"))
	assert.Equal(t, "allow", tier("home-gone\tnotes.txt"))
	assert.Equal(t, "approval", tier("home-changed\t.bashrc"))
	assert.Equal(t, "hardline", tier("canary-down\tsshd", "canary-down\tpostgres", "canary-down\tnginx"))
	assert.Equal(t, "approval", tier("canary-down\tnginx"))
	assert.Equal(t, "hardline", tier("pids-limit\t190"))
	assert.Equal(t, "allow", tier("exit\t0", "procs\t4"))
	assert.Equal(t, "hardline", w.classify("x", nil, nil, "bash: fork: retry: Resource temporarily unavailable").Tier.String())
}

func TestGenerateIsSeededAndDistinct(t *testing.T) {
	t.Parallel()
	a, b := Generate(7, 300), Generate(7, 300)
	assert.Equal(t, a, b)
	assert.Len(t, a, 300)
	seen := map[string]bool{}
	for _, c := range a {
		assert.False(t, seen[c], "duplicate %q", c)
		seen[c] = true
	}
	assert.NotEqual(t, a, Generate(8, 300))
}

func TestUnescapeRoundTrip(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"a\nb", `x\y`, "t\tab", `\n literal`} {
		assert.Equal(t, s, Unescape(Escape(s)))
	}
	assert.Equal(t, "é", Unescape(`\u00e9`))
}

func TestSetVariants(t *testing.T) {
	t.Parallel()
	assert.Empty(t, SetVariants("rm -rf ./build"))
	assert.Empty(t, SetVariants(`echo "$X" ${#Y} ${Z%/}`), "no choice operator")
	assert.Empty(t, SetVariants("rm -rf ${HOME:-/} ${IFS:+x}"), "variables the shell owns stay as they are")
	assert.Equal(t, [][]string{{"X=x"}, {"X="}}, SetVariants("${X:+sh} -c reboot"))
	// Two names: every combination but all unset; a nested shell's text too.
	got := SetVariants(`bash -c 'rm -rf ${D-~}' && ${T:?} ${D:=x}`)
	assert.Len(t, got, 8)
	assert.Contains(t, got, []string{"D=x", "T="})
	assert.Contains(t, got, []string{"T=x"})
	// A third name stays unset (the cap).
	for _, env := range SetVariants("${A:-x} ${B:-x} ${C:-x}") {
		for _, e := range env {
			assert.NotContains(t, e, "C=")
		}
	}
}

// TestGenerateWritesSetForms: the generator writes choice expansions and
// POSIXLY_CORRECT forms, so the oracle's set variants and the posix
// reading of options are exercised.
func TestGenerateWritesSetForms(t *testing.T) {
	t.Parallel()
	choices, posix := 0, 0
	for _, c := range Generate(1, 2000) {
		if len(SetVariants(c)) > 0 {
			choices++
		}
		if strings.Contains(c, "LY_CORRECT") {
			posix++
		}
	}
	dirs := 0
	for _, c := range Generate(1, 2000) {
		if strings.HasPrefix(c, "cd ") {
			dirs++
		}
	}
	assert.Greater(t, dirs, 20, "commands after a directory construct (dirConstructs)")
	assert.Greater(t, choices, 50, "commands with a choice expansion")
	assert.Greater(t, posix, 50, "commands with POSIXLY_CORRECT in their environment")
}
