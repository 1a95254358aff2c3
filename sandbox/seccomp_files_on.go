//go:build seccomp && linux

package sandbox

import (
	"slices"

	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// The file-privilege rules: what keeps a sandbox from leaving behind a file
// that raises anyone's privileges on the host (docs/workspace.md). The user
// namespace and the idmapped workspace already make every file the sandbox
// creates belong to the workspace's owner; these rules make sure none of
// them is setuid, setgid or a device node, and that nothing that exists
// is opened to other users' writes:
//   - chmod, fchmod, fchmodat and fchmodat2 are allowed only with a mode
//     without S_ISUID, S_ISGID and S_IWOTH. The filter cannot tell which
//     file a chmod names, and a world-writable workspace root or .git
//     (the pinned parents of the frozen control surface) lets any local
//     account replace .git/config, which host root then runs; so no
//     chmod may add write for others anywhere. One with group write has
//     a rule of its own, which the creation gate notifies and performs
//     without the bit (notify_chmod_linux.go);
//   - setxattr, lsetxattr, fsetxattr and setxattrat fail with EOPNOTSUPP
//     (as on a file system without xattrs, so that cp -a, cp -p and mv
//     across file systems fall back to the mode instead of failing): the
//     attribute's name is a string the filter cannot read, and the names
//     that matter are exactly the ones to refuse: system.posix_acl_access
//     (write for others through an ACL entry) and system.posix_acl_default
//     (every file later made in the directory, by the host too, gets the
//     ACL's bits whatever the umask), security.* (an SELinux label chosen
//     by the sandbox). An allow-list of user.* checked by a notification
//     would read the caller's memory before the kernel does, a race the
//     caller wins. Removing an attribute stays allowed: it grants nothing;
//   - open, openat and creat are allowed only when they cannot create (no
//     O_CREAT, no O_TMPFILE) or when the mode has neither bit (three
//     rules that never overlap: no create, O_CREAT, O_TMPFILE, so that
//     the gate can turn the O_CREAT one alone into a notification,
//     withNotify);
//   - mkdir and mkdirat likewise (the kernel ignores the bits there, but a
//     request for them is refused rather than silently dropped);
//   - mknod and mknodat only make regular files, FIFOs and sockets, without
//     the bits (no device nodes, not even overlayfs's 0:0 whiteout);
//   - openat2 fails with ENOSYS: its flags and mode are in a struct the
//     filter cannot read, and libc and Go fall back to openat;
//   - renameat2 is allowed without RENAME_WHITEOUT, which leaves a 0:0
//     character device (overlayfs's whiteout) at the old name, the one
//     device node a user namespace may make without mknod.
//
// File capabilities need CAP_SETFCAP, which no sandbox has (dockerCaps),
// and a write to an existing setgid file keeps the bit only with
// CAP_FSETID, which no sandbox has either.
//
// The rules replace these syscalls' unconditional entries in Docker's
// profile; anything they do not allow falls to its default action
// (EPERM). They are kept apart from the rest of the profile so that other
// rule sets (the exec gate's notify rule) stay separate.

// fileRuleSyscalls are the syscalls fileRules governs.
var fileRuleSyscalls = []string{"chmod", "fchmod", "fchmodat", "fchmodat2", "open", "openat", "openat2", "creat", "mkdir", "mkdirat", "mknod", "mknodat", "renameat2", "setxattr", "lsetxattr", "fsetxattr", "setxattrat"}

// fileRules removes fileRuleSyscalls from prof's other entries and adds
// their conditional rules.
func fileRules(prof *specs.LinuxSeccomp) {
	kept := prof.Syscalls[:0]
	for _, sc := range prof.Syscalls {
		sc.Names = slices.DeleteFunc(slices.Clone(sc.Names), func(n string) bool { return slices.Contains(fileRuleSyscalls, n) })
		if len(sc.Names) > 0 {
			kept = append(kept, sc)
		}
	}
	prof.Syscalls = kept

	allow := func(name string, args ...specs.LinuxSeccompArg) specs.LinuxSyscall {
		return specs.LinuxSyscall{Names: []string{name}, Action: specs.ActAllow, Args: args}
	}
	// masked is the condition arg & mask == want.
	masked := func(index uint, mask, want uint64) specs.LinuxSeccompArg {
		return specs.LinuxSeccompArg{Index: index, Value: mask, ValueTwo: want, Op: specs.OpMaskedEqual}
	}
	noPriv := func(modeArg uint) specs.LinuxSeccompArg { return masked(modeArg, privBits, 0) }
	// The flags' creating bits (createFlags): none, O_CREAT, O_TMPFILE.
	// O_CREAT|O_TMPFILE together, which the kernel refuses (EINVAL),
	// matches no rule (EPERM).
	noCreate := func(flagsArg uint) specs.LinuxSeccompArg { return masked(flagsArg, createFlags, 0) }
	creating := func(flagsArg uint) specs.LinuxSeccompArg { return masked(flagsArg, createFlags, unix.O_CREAT) }
	tmpfile := func(flagsArg uint) specs.LinuxSeccompArg {
		return masked(flagsArg, createFlags, unix.O_TMPFILE&^unix.O_DIRECTORY)
	}
	enosys, enotsup := uint(unix.ENOSYS), uint(unix.EOPNOTSUPP)
	// A chmod that gives the group write has a rule of its own, which the
	// creation gate turns into a notification (createNotifies): it takes
	// the bit off (notify_chmod_linux.go).
	groupWrite := func(modeArg uint) specs.LinuxSeccompArg { return masked(modeArg, chmodBits|unix.S_IWGRP, unix.S_IWGRP) }
	noGroupWrite := func(modeArg uint) specs.LinuxSeccompArg { return masked(modeArg, chmodBits|unix.S_IWGRP, 0) }
	prof.Syscalls = append(prof.Syscalls,
		allow("chmod", noGroupWrite(1)), allow("chmod", groupWrite(1)),
		allow("fchmod", noGroupWrite(1)), allow("fchmod", groupWrite(1)),
		allow("fchmodat", noGroupWrite(2)), allow("fchmodat", groupWrite(2)),
		allow("fchmodat2", noGroupWrite(2)), allow("fchmodat2", groupWrite(2)),
		allow("creat", noPriv(1)),
		allow("open", noCreate(1)), allow("open", creating(1), noPriv(2)), allow("open", tmpfile(1), noPriv(2)),
		allow("openat", noCreate(2)), allow("openat", creating(2), noPriv(3)), allow("openat", tmpfile(2), noPriv(3)),
		allow("mkdir", noPriv(1)),
		allow("mkdirat", noPriv(2)),
		allow("renameat2", masked(4, unix.RENAME_WHITEOUT, 0)),
		specs.LinuxSyscall{Names: []string{"openat2"}, Action: specs.ActErrno, ErrnoRet: &enosys},
		specs.LinuxSyscall{Names: []string{"setxattr", "lsetxattr", "fsetxattr", "setxattrat"}, Action: specs.ActErrno, ErrnoRet: &enotsup},
	)
	for _, kind := range []uint64{0, unix.S_IFREG, unix.S_IFIFO, unix.S_IFSOCK} {
		prof.Syscalls = append(prof.Syscalls,
			allow("mknod", masked(1, unix.S_IFMT|privBits, kind)),
			allow("mknodat", masked(2, unix.S_IFMT|privBits, kind)))
	}
}
