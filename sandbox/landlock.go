package sandbox

import (
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
)

// Landlock is a kernel-enforced path policy for every process of a
// sandbox (docs/landlock.md). Beneath its Trees everything is allowed
// (read, write, execute, create, remove, rename and link within them);
// its Files may be read, written, executed and truncated, and, when one
// is a directory, listed (the names beneath it, not their contents).
// ReadTrees and ReadFiles are the same read-only: read, list and execute,
// never write. The workspace's directories may be listed. Everything else the sandbox
// shows keeps only what execution needs: the system tree
// (read and execute), /tmp and /dev/shm (everything), /dev (read, write,
// device ioctls), /proc and /sys (read; /proc also write). A nil
// *Landlock confines nothing.
//
// The policy is applied before the sandbox's first program runs (by the
// trampoline for a one-shot sandbox, by the supervisor for a session), so
// every process of the sandbox, background ones included, inherits it; no
// process can leave it. An open outside it fails with EACCES, and the
// path the kernel refused is reported in Result.PathsRefused where the
// kernel's audit records can be read (root).
//
// Paths are absolute paths inside the sandbox. One that does not exist
// when the sandbox starts is left out (the kernel attaches rules to
// existing files): creating it is refused, but for a tree inside the
// workspace under the mount plan (ReadOnlyWorkspace), which is created.
type Landlock struct {
	// Trees are directories under which everything is allowed.
	Trees []string `json:"trees,omitempty"`
	// Files are paths allowed themselves.
	Files []string `json:"files,omitempty"`
	// ReadTrees are directories under which reading is allowed: opening
	// files to read, listing directories, executing; not writing,
	// truncating, creating, removing, renaming or linking.
	ReadTrees []string `json:"read_trees,omitempty"`
	// ReadFiles are paths that may be read (and executed; listed, for a
	// directory) themselves.
	ReadFiles []string `json:"read_files,omitempty"`
	// ReadOnlyWorkspace is the mount plan (docs/landlock.md): the
	// workspace is mounted read-only and each of Trees and Files inside
	// it (a directory, or a regular file) is bound writable on top, so
	// that what Landlock does not govern (chmod, chown, utimensat, the
	// xattr calls) is refused outside them with EROFS. A Trees entry
	// inside the workspace that does not exist yet is created first
	// (0755, owned like its parent). An entry with a symbolic link on its
	// path inside the workspace is not bound (it stays read-only).
	ReadOnlyWorkspace bool `json:"read_only_workspace,omitempty"`
	// RestrictTCPConnect confines TCP connects to TCPConnectPorts (any
	// address: Landlock knows ports, not hosts); none allowed when that
	// is empty. It needs Landlock ABI 4; below it the connects are not
	// confined and Result.NotEnforced lists "landlock_net". A refused
	// connect fails with EACCES and is reported in Result.PathsRefused
	// with its address (PathRefused.Addr). Binding is not confined.
	// The other stream protocols of AF_INET and AF_INET6 (MPTCP, SCTP),
	// which Landlock does not check, fail with EPROTONOSUPPORT; UDP and
	// ICMP datagrams are not confined (Result.NotEnforced: "udp_ports").
	RestrictTCPConnect bool     `json:"restrict_tcp_connect,omitempty"`
	TCPConnectPorts    []uint16 `json:"tcp_connect_ports,omitempty"`
}

// ErrLandlockLayout: the sandbox's layout cannot be expressed as a
// Landlock ruleset without granting more than its policy (a workspace or
// bind inside the system tree or /tmp, whose rule would cover it). Run
// and sessions then list "landlock" in Result.NotEnforced.
var ErrLandlockLayout = errors.New("the sandbox's layout cannot be confined by Landlock")

// Landlock access rights (include/uapi/linux/landlock.h).
const (
	llExecute    = 1 << 0
	llWriteFile  = 1 << 1
	llReadFile   = 1 << 2
	llReadDir    = 1 << 3
	llRemoveDir  = 1 << 4
	llRemoveFile = 1 << 5
	llMakeChar   = 1 << 6
	llMakeDir    = 1 << 7
	llMakeReg    = 1 << 8
	llMakeSock   = 1 << 9
	llMakeFifo   = 1 << 10
	llMakeBlock  = 1 << 11
	llMakeSym    = 1 << 12
	llRefer      = 1 << 13 // ABI 2
	llTruncate   = 1 << 14 // ABI 3
	llIoctlDev   = 1 << 15 // ABI 5

	llScopeAbstractUnix = 1 << 0 // ABI 6
	llScopeSignal       = 1 << 1 // ABI 6

	// landlock_restrict_self's flags (ABI 7): log denials of the programs
	// executed after the restriction too (the trampoline's own are
	// logged by default; the command's are what matter).
	llLogNewExecOn = 1 << 1

	llNetConnectTCP = 1 << 1 // ABI 4 (1 << 0 is binding, not handled)
)

// llFileRights are the rights a rule on a file (not a directory) may hold.
const llFileRights = llExecute | llWriteFile | llReadFile | llTruncate | llIoctlDev

// Rights of the parts of a sandbox, before masking with what the kernel
// handles.
const (
	llAll      = 1<<16 - 1
	llSystem   = llReadFile | llReadDir | llExecute
	llKernelFS = llReadFile | llReadDir
	llProc     = llKernelFS | llWriteFile
	llDev      = llReadFile | llWriteFile | llReadDir | llTruncate | llIoctlDev
	// The mandate's paths and the scratch space: everything but making
	// device nodes (no sandbox can, and none may appear there).
	llMandate = llAll &^ (llMakeChar | llMakeBlock)
	llScratch = llMandate
	// A read-only rule of the mandate's ("read:"): what the system tree
	// gets.
	llRead = llSystem
)

// llRule is one rule: a path inside the sandbox and its rights, dir when
// the path is a directory when the sandbox starts, file otherwise (the
// trampoline looks: the rules are applied inside the sandbox).
//
// mount, when set, is the part of path the trampoline resolves as usual:
// a mount point tether made (the workspace, a bind) or "/". Beneath it no
// component may be a symlink: the sandbox, or an earlier command, can
// plant one in a tree it may write, and a rule must grant what the person
// approved, not what a link points to. A rule whose path holds a symlink
// there is refused (left out and said), never followed. Unset (the
// system tree, the scratch space, the workspace's own listing rule),
// symlinks are followed: those paths are tether's layout, and /lib is a
// link to usr/lib on a merged-/usr system.
type llRule struct {
	path      string
	dir, file uint64
	mount     string
}

// tree is a rule granting access beneath p (or to p, a file).
func tree(p string, access uint64) llRule {
	return llRule{path: p, dir: access, file: access & llFileRights}
}

// llABI describes what a kernel's Landlock offers: the rights it can
// handle, the scopes, the flags of landlock_restrict_self, and the size of
// struct landlock_ruleset_attr it takes.
type llABI struct {
	version  int
	fs       uint64
	net      uint64
	scoped   uint64
	flags    uint32
	attrSize uint32
}

// landlockABI returns what ABI version v offers; zero for v < 1.
func landlockABI(v int) llABI {
	if v < 1 {
		return llABI{}
	}
	a := llABI{version: v, fs: llMakeSym<<1 - 1, attrSize: 8}
	if v >= 2 {
		a.fs |= llRefer
	}
	if v >= 3 {
		a.fs |= llTruncate
	}
	if v >= 4 {
		a.net, a.attrSize = llNetConnectTCP, 16
	}
	if v >= 5 {
		a.fs |= llIoctlDev
	}
	if v >= 6 {
		a.scoped, a.attrSize = llScopeAbstractUnix|llScopeSignal, 24
	}
	if v >= 7 {
		a.flags = llLogNewExecOn
	}
	return a
}

// landlockRules returns the rules of cfg's Landlock policy, paths inside
// the sandbox: system are the read-only system tree's top-level paths
// (the layout's binds, /etc, or a prepared root's entries), each of which
// must not hold the workspace or a bind.
func landlockRules(cfg Config, system []string) ([]llRule, error) {
	var own []string // what the system and scratch rules must not cover
	if cfg.Workspace != "" {
		own = append(own, cfg.workspaceMount())
	}
	for _, b := range cfg.Binds {
		own = append(own, b.dest())
	}
	var rules []llRule
	add := func(r llRule, mustNotHoldOwn bool) error {
		if !filepath.IsAbs(r.path) || strings.ContainsRune(r.path, 0) {
			return fmt.Errorf("%w: Landlock path %q must be absolute", ErrInvalidConfig, r.path)
		}
		r.path = filepath.Clean(r.path)
		if mustNotHoldOwn {
			for _, o := range own {
				if within(o, r.path) {
					return fmt.Errorf("%w: %s is inside %s, which every sandbox may read", ErrLandlockLayout, o, r.path)
				}
			}
		}
		rules = append(rules, r)
		return nil
	}
	base := []llRule{tree("/tmp", llScratch), tree("/dev/shm", llScratch), tree("/dev", llDev),
		tree("/proc", llProc), tree("/sys", llKernelFS)}
	for _, s := range system {
		base = append(base, tree(s, llSystem))
	}
	for _, r := range base {
		if err := add(r, true); err != nil {
			return nil, err
		}
	}
	if cfg.Workspace != "" {
		// Listing the workspace's directories (names, not contents) is
		// always allowed: make, git status, ls and find list the tree,
		// and the names are there for stat(2) anyway, which Landlock
		// does not govern.
		rules = append(rules, tree(filepath.Clean(cfg.workspaceMount()), llReadDir))
	}
	// The mandate's rules are resolved without symlinks beneath the
	// deepest of tether's mounts that holds them (llRule.mount).
	mandate := func(r llRule) error {
		r.mount = "/"
		for _, o := range own {
			if o = filepath.Clean(o); within(filepath.Clean(r.path), o) && len(o) > len(r.mount) {
				r.mount = o
			}
		}
		return add(r, false)
	}
	for _, p := range cfg.Landlock.Trees {
		if err := mandate(tree(p, llMandate)); err != nil {
			return nil, err
		}
	}
	for _, p := range cfg.Landlock.Files {
		if err := mandate(llRule{path: p, dir: llReadDir, file: llFileRights}); err != nil {
			return nil, err
		}
	}
	for _, p := range cfg.Landlock.ReadTrees {
		if err := mandate(tree(p, llRead)); err != nil {
			return nil, err
		}
	}
	for _, p := range cfg.Landlock.ReadFiles {
		if err := mandate(llRule{path: p, dir: llReadDir, file: llRead & llFileRights}); err != nil {
			return nil, err
		}
	}
	sort.SliceStable(rules, func(i, j int) bool { return rules[i].path < rules[j].path })
	return rules, nil
}

// within reports whether p is dir or lies under it.
func within(p, dir string) bool {
	p, dir = filepath.Clean(p), filepath.Clean(dir)
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

// encodeLandlock is the trampoline's and the supervisor's description of
// a ruleset (seccompexec.h, "The Landlock section"): native-endian
// handled fs rights, handled net rights, scopes, padding, the attr size,
// restrict_self's flags, the rule count, the port count, then each
// rule's rights on a directory and on a file, path length, the length of
// the prefix resolved following symlinks (llRule.mount; the whole path
// when unset) and path, then each port a TCP connect may go to. net is
// the handled net rights: the ABI's when the policy confines connects
// (Landlock.RestrictTCPConnect), else none.
func encodeLandlock(abi llABI, net uint64, rules []llRule, ports []uint16) []byte {
	net &= abi.net
	if net == 0 {
		ports = nil
	}
	b := make([]byte, 0, 48+len(rules)*64+len(ports)*8)
	b = binary.NativeEndian.AppendUint64(b, abi.fs)
	b = binary.NativeEndian.AppendUint64(b, net)
	b = binary.NativeEndian.AppendUint64(b, abi.scoped)
	b = binary.NativeEndian.AppendUint64(b, 0)
	b = binary.NativeEndian.AppendUint32(b, abi.attrSize)
	b = binary.NativeEndian.AppendUint32(b, abi.flags)
	b = binary.NativeEndian.AppendUint32(b, uint32(len(rules)))
	b = binary.NativeEndian.AppendUint32(b, uint32(len(ports)))
	for _, r := range rules {
		b = binary.NativeEndian.AppendUint64(b, r.dir&abi.fs)
		b = binary.NativeEndian.AppendUint64(b, r.file&abi.fs&llFileRights)
		b = binary.NativeEndian.AppendUint32(b, uint32(len(r.path)))
		follow := len(r.path)
		if r.mount != "" {
			follow = len(r.mount)
		}
		b = binary.NativeEndian.AppendUint32(b, uint32(follow))
		b = append(b, r.path...)
	}
	for _, p := range ports {
		b = binary.NativeEndian.AppendUint64(b, uint64(p))
	}
	return b
}
