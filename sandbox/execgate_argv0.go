package sandbox

import (
	"slices"
	"strings"
)

// Multi-call programs choose what to do from argv[0], and not all of them
// by its last element, the name the gate checks: systemd's systemctl acts
// as reboot when that element merely contains "reboot" ("xreboot",
// "reboot.sh"); busybox acts as its applet after a leading "-", and as
// busybox itself, running argv[1], for any name that starts with
// "busybox" ("busybox-x reboot"). A symlink swapped between the gate's
// check and the kernel's exec, a copy, or a loader's --argv0 puts such a
// program behind any name. So each vector a program really receives is
// also checked as what every multi-call program of the table would make
// of it, whatever the file the exec names: the kernel may run another
// file than the gate resolved, but the vector is the one checked (E1 in
// docs/exec-gate.md). Programs that choose by argv[0]'s exact last
// element (lvm as lvremove, kmod as rmmod) need no entry.
var multiCall = []multiCallProgram{
	{"systemctl", systemctlAs, true},
	{"busybox", busyboxAs, false},
}

// multiCallProgram is one multi-call program of the table.
type multiCallProgram struct {
	name string // the program's file name
	// as returns the vectors the program acts as when it receives argv
	// (len(argv) > 0), or nil when it acts as itself.
	as func(argv []string) [][]string
	// floor: where a program the hardline floor refuses is a link to this
	// one, its file is mounted noexec too (noExecFiles), which closes an
	// argv[0] rewritten after the gate's read. Not busybox: a prepared
	// busybox root (--rootfs) is made of it.
	floor bool
}

// systemctlTokens are the names systemd's systemctl looks for in its
// argv[0]'s last element, in its order (invoked_as: strstr; the first
// found wins).
var systemctlTokens = []string{"halt", "poweroff", "reboot", "shutdown", "init", "runlevel"}

// systemctlAs is systemctl_dispatch_parse_argv's choice, on argv[0]'s
// last element as last_path_component takes it (a trailing slash kept:
// "xreboot/" is found too).
func systemctlAs(argv []string) [][]string {
	s := strings.TrimRight(argv[0], "/")
	last := s[strings.LastIndexByte(s, '/')+1:]
	for _, t := range systemctlTokens {
		if strings.Contains(last, t) {
			return [][]string{append([]string{t}, argv[1:]...)}
		}
	}
	return nil
}

// busyboxAs is busybox's choice (libbb/appletlib.c): one leading "-" of
// argv[0] dropped (a login shell's), then what follows its last slash
// (bb_basename); a name that starts with "busybox" runs argv[1] the same
// way (without the "-"), again and again. The applet is found by that
// exact name.
func busyboxAs(argv []string) [][]string {
	base := func(s string) string { return s[strings.LastIndexByte(s, '/')+1:] }
	name := base(strings.TrimPrefix(argv[0], "-"))
	if name == base(argv[0]) && !strings.HasPrefix(name, "busybox") {
		return nil // the name the gate checks (most execs: no copy)
	}
	for strings.HasPrefix(name, "busybox") {
		if len(argv) == 1 {
			return nil // busybox's usage
		}
		argv = argv[1:]
		name = base(argv[0])
	}
	return [][]string{append([]string{name}, argv[1:]...)}
}

// argv0Runs returns the vectors the multi-call programs of multiCall act
// as when they receive argv, each once, none equal to argv.
func argv0Runs(argv []string) [][]string {
	if len(argv) == 0 {
		return nil
	}
	var out [][]string
	for _, m := range multiCall {
		for _, v := range m.as(argv) {
			if !slices.Equal(v, argv) && !slices.ContainsFunc(out, func(w []string) bool { return slices.Equal(w, v) }) {
				out = append(out, v)
			}
		}
	}
	return out
}
