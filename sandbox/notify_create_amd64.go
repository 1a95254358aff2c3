//go:build linux && amd64

package sandbox

import (
	"golang.org/x/sys/unix"

	"github.com/tether-dev/tether/sandbox/seccompexec"
)

// legacyCreateCalls are the entries of createCalls for the system calls
// x86_64 keeps beside their *at forms (-1 for a directory: the working
// directory).
var legacyCreateCalls = map[int32]createCall{
	unix.SYS_MKDIR:   {name: "mkdir", op: "mkdir", kind: seccompexec.CreateMkdir, names: []int{0}, dirfds: []int{-1}, target: -1, from: -1, fromDir: -1, flags: -1, mode: 1, dev: -1, creating: -1},
	unix.SYS_MKNOD:   {name: "mknod", op: "mknod", kind: seccompexec.CreateMknod, names: []int{0}, dirfds: []int{-1}, target: -1, from: -1, fromDir: -1, flags: -1, mode: 1, dev: 2, creating: -1},
	unix.SYS_SYMLINK: {name: "symlink", op: "symlink", kind: seccompexec.CreateSymlink, names: []int{1}, dirfds: []int{-1}, target: 0, from: -1, fromDir: -1, flags: -1, mode: -1, dev: -1, creating: -1},
	unix.SYS_LINK:    {name: "link", op: "link", kind: seccompexec.CreateLink, names: []int{1}, dirfds: []int{-1}, target: -1, from: 0, fromDir: -1, flags: -1, mode: -1, dev: -1, creating: -1},
	unix.SYS_RENAME:  {name: "rename", op: "rename", kind: seccompexec.CreateRename, names: []int{0, 1}, dirfds: []int{-1, -1}, target: -1, from: -1, fromDir: -1, flags: -1, mode: -1, dev: -1, creating: -1},
	unix.SYS_OPEN:    {name: "open", op: "open", kind: seccompexec.CreateOpen, names: []int{0}, dirfds: []int{-1}, target: -1, from: -1, fromDir: -1, flags: 1, mode: 2, dev: -1, creating: 1},
	// creat(path, mode) is open(path, O_CREAT|O_WRONLY|O_TRUNC, mode).
	unix.SYS_CHMOD: {name: "chmod", op: "chmod", kind: seccompexec.CreateChmod, names: []int{0}, dirfds: []int{-1}, target: -1, from: -1, fromDir: -1, flags: -1, mode: 1, dev: -1, creating: 1},
	unix.SYS_CREAT: {name: "creat", op: "open", kind: seccompexec.CreateOpen, names: []int{0}, dirfds: []int{-1}, target: -1, from: -1, fromDir: -1, flags: -1, fixedFlags: unix.O_CREAT | unix.O_WRONLY | unix.O_TRUNC, mode: 1, dev: -1, creating: -1},
}

// legacySealedCalls are the entries of sealedCalls for the system calls
// x86_64 keeps beside their *at forms.
var legacySealedCalls = map[int32]sealedCall{
	unix.SYS_CHMOD:     {name: "chmod", op: "chmod", path: 0, dirfd: -1, flags: -1, emptyPath: -1},
	unix.SYS_CHOWN:     {name: "chown", op: "chown", path: 0, dirfd: -1, flags: -1, emptyPath: -1},
	unix.SYS_LCHOWN:    {name: "lchown", op: "chown", path: 0, dirfd: -1, flags: -1, emptyPath: -1},
	unix.SYS_UTIMES:    {name: "utimes", op: "utimes", path: 0, dirfd: -1, flags: -1, emptyPath: -1},
	unix.SYS_UTIME:     {name: "utime", op: "utimes", path: 0, dirfd: -1, flags: -1, emptyPath: -1},
	unix.SYS_FUTIMESAT: {name: "futimesat", op: "utimes", path: 1, dirfd: 0, flags: -1, emptyPath: -1},
	unix.SYS_UNLINK:    {name: "unlink", op: "unlink", path: 0, dirfd: -1, flags: -1, emptyPath: -1},
	unix.SYS_RMDIR:     {name: "rmdir", op: "rmdir", path: 0, dirfd: -1, flags: -1, emptyPath: -1},
	unix.SYS_OPEN:      {name: "open", op: "open-write", path: 0, dirfd: -1, flags: 1, emptyPath: -1},
}
