//go:build linux && amd64

package sandbox

import "golang.org/x/sys/unix"

// legacyCreateCall is createCallFor for the system calls x86_64 keeps
// beside their *at forms.
func legacyCreateCall(nr int32) (createCall, bool) {
	switch nr {
	case unix.SYS_MKDIR:
		return createCall{"mkdir", []int{0}, []int{-1}, -1}, true
	case unix.SYS_MKNOD:
		return createCall{"mknod", []int{0}, []int{-1}, -1}, true
	case unix.SYS_SYMLINK:
		return createCall{"symlink", []int{1}, []int{-1}, 0}, true
	case unix.SYS_LINK:
		return createCall{"link", []int{1}, []int{-1}, -1}, true
	case unix.SYS_RENAME:
		return createCall{"rename", []int{0, 1}, []int{-1, -1}, -1}, true
	case unix.SYS_OPEN, unix.SYS_CREAT:
		return createCall{"open", []int{0}, []int{-1}, -1}, true
	}
	return createCall{}, false
}

// legacyCreateSyscalls are their names, for libcontainer's filter.
var legacyCreateSyscalls = []string{"mkdir", "mknod", "symlink", "link", "rename", "open", "creat"}

// legacyCreating is creating for open, which x86_64 keeps beside openat.
func legacyCreating(n *seccompNotif) bool {
	return n.nr != unix.SYS_OPEN || n.args[1]&unix.O_CREAT != 0
}
