package sandbox

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/moby/sys/mountinfo"
	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"

	"github.com/tether-dev/tether/internal/dirlist"
	"github.com/tether-dev/tether/internal/fspath"
	"github.com/tether-dev/tether/internal/protect"
	"github.com/tether-dev/tether/sandbox/nsjoin"
)

// Protected paths (docs/workspace.md). Every sandbox with a workspace makes
// the entries of package protect at the workspace's root immutable, whether
// or not they exist when it starts (entries that matter only in a home
// directory, protect.Entry.Home, are reserved only when the workspace is
// one):
//   - an existing entry is bound read-only onto itself;
//   - every directory on the way to an entry (.git, .git/objects, .ssh,
//     .config) is bound onto itself, read-write: a mount point cannot be
//     renamed or removed in its own namespace (EBUSY), so `mv .git x` cannot
//     carry the read-only binds away;
//   - a missing entry, or the first missing directory on the way to one,
//     is reserved: a dangling symlink to reservedTarget is created on the
//     host and an empty read-only file is mounted onto it inside. The host
//     sees a name that opens as ENOENT, exactly as if it were absent (bash
//     falls through to .profile, git finds no hook, no config.worktree),
//     and nothing can ever be created at its target. .git/commondir is the
//     exception: git dies on a commondir it cannot read, so its
//     reservation is a file holding ".", which git reads as "the common
//     directory is this one" — no change.
//   - a protected path (or a directory on the way) that is a symlink is
//     refused (ErrUnsafeWorkspace): freezing it would mean following it.
//     A .git file ("gitdir: PATH") is frozen, and so is the git directory
//     it names when that lies inside the workspace.
//
// The binds are made by tether itself inside the sandbox's mount namespace,
// after libcontainer has built it and before any program of the sandbox
// runs: each path is opened with openat2(RESOLVE_BENEATH|
// RESOLVE_NO_SYMLINKS) from the workspace mount's root and bound from that
// descriptor (open_tree, move_mount), so nothing is followed and nothing
// can be swapped in between. The clones come from the sandbox's own
// (idmapped, as root) workspace mount and keep its id mapping; what is
// mounted onto reservations and hidden paths is an empty file and an
// empty directory of a small read-only tmpfs made there. Root tether
// joins the mount namespace from a thread; rootless tether from a process
// that joins the sandbox's user namespace first (package nsjoin: it owns
// that namespace, so it holds every capability in it). The mounts are the
// same either way.
//
// Reservations live in the workspace, which every tether on the host
// shares whatever its state root, so their records do too: they are kept
// in the directory checkedReservationDir returns (root's, host-wide; a
// rootless tether's, its user's), keyed by the workspace's device and
// inode. Each sandbox of the workspace holds <key>.hold shared-locked
// for its life; planning and leaving take <key>.lock. The last one out (it
// gets the hold lock exclusively) or GC of any state root (for holders
// that died, whose locks the kernel dropped) removes the placeholders that
// are still what tether makes; <key>.ws records the workspace's path and
// <key>.res the nested reservations. The mount plan keeps two more
// (mountplan_linux.go): <key>.plan, held shared by each sandbox under the
// plan, and <key>.made, the directories the plan created, which the last
// sandbox under the plan (or GC) removes when still empty. Records an
// older tether left under <state root>/protect are still collected by GC.

// reservedTarget is where reservation symlinks point: procfs lets nobody
// create anything there, so the link never resolves.
const reservedTarget = "/proc/tether-reserved"

// commondirPlaceholder is the content of a reserved .git/commondir.
const commondirPlaceholder = ".\n"

const protectDir = "protect" // the records' directory; under a state root, older tethers' records

// reservationDir holds the reservation records of every workspace on the
// host (see above). It must be a real directory owned by root that nobody
// else may write, as must its parent (checkedReservationDir). A variable
// only so that a test can point it elsewhere.
var reservationDir = "/run/tether/protect"

// ErrUnsafeReservationDir: the reservation records' directory (or one on
// the way to it, reservationChain) is not one that only tether's user
// controls, so its locks and records cannot be trusted; tether refuses to
// reserve protected paths rather than guess.
var ErrUnsafeReservationDir = errors.New("the protected-path reservation directory is not tether's user's own")

// ProtectMount is one protected-path mount, made inside the sandbox.
type ProtectMount struct {
	// Path is workspace-relative, slash-separated.
	Path string `json:"path"`
	// Mode is what is mounted there.
	Mode ProtectMode `json:"mode"`
}

// ProtectMode says how a protected path is mounted.
type ProtectMode string

const (
	// ProtectReadOnly binds the path read-only onto itself.
	ProtectReadOnly ProtectMode = "ro"
	// ProtectPin binds a directory read-write onto itself, so it cannot be
	// renamed or removed.
	ProtectPin ProtectMode = "pin"
	// ProtectReserve mounts an empty read-only file onto a reservation.
	ProtectReserve ProtectMode = "reserve"
	// ProtectHideDir mounts an empty read-only directory onto a directory
	// of tether's own (Config.Hide): nothing in it can be read, written
	// or created.
	ProtectHideDir ProtectMode = "hide-dir"
	// ProtectHideFile mounts an empty read-only file onto a file of
	// tether's own.
	ProtectHideFile ProtectMode = "hide-file"
	// ProtectWrite binds a write rule of the mount plan (a directory or
	// a regular file) read-write onto itself, in a workspace mounted
	// read-only (Landlock.ReadOnlyWorkspace).
	ProtectWrite ProtectMode = "write"
)

// protectMounts returns nothing: protected paths are mounted by tether
// from descriptors (protection.apply), not by libcontainer from paths. The
// hook keeps Spec's mount list the one place that says what a sandbox
// sees.
func (p Placement) protectMounts() []specs.Mount { return nil }

// protection is the protected-path plan of one sandbox and its hold on
// the workspace's reservations.
type protection struct {
	mounts  []ProtectMount
	wsMount string // the workspace's path inside the sandbox
	// rootless: the mounts are made by a process that joins the
	// sandbox's user namespace first (package nsjoin).
	rootless bool
	records  string // the reservation records (checkedReservationDir)
	target   string // where its reservation links point (reservationTarget)
	key      string
	ws       string
	// reserved are the reservations this plan made or shares, recorded
	// in <key>.res (reservationDir) for whoever removes them.
	reserved []string
	// gitDirs are the git directories frozen (workspace-relative), and
	// gitDirIDs their identities: the creation gate lets git write a HEAD
	// in them (createGate).
	gitDirs   []string
	gitDirIDs map[fileID]bool
	// repos are the repositories frozen: the creation gate reads their
	// configuration again when it changes (protect.ConfigView).
	repos []protect.GitRepo
	// rootID is the tree's root directory's identity, and set its
	// protected list (own: tether's config and state): the creation gate
	// judges every name it creates in the tree by them (createGate).
	rootID fileID
	set    protect.Set
	// nestedTruncated: the walk for nested repositories stopped at its
	// bound (protect_nested_linux.go).
	nestedTruncated bool
	// linksTruncated: the check of frozen directories for links stopped
	// at its bound (protect_links_linux.go).
	linksTruncated bool
	// binds are the plans of the sandbox's writable directory binds, each
	// a tree of its own (protectFor); only the workspace's plan has them.
	binds []*protection
	// readOnly: the tree is mounted read-only once its mounts are made,
	// and so are its pins outside every ProtectWrite mount (the mount
	// plan, mountplan_linux.go).
	readOnly bool
	// planHold is <key>.plan, flocked shared while the sandbox is under
	// the mount plan (leavePlan).
	planHold *os.File
	// hold is <key>.hold (reservationDir), flocked shared for the sandbox's life:
	// the kernel drops the lock when its holder dies, so whoever takes it
	// exclusively knows no sandbox holds the reservations any more.
	hold *os.File
}

// protectFor plans the protected paths of a sandbox: its workspace's and
// those of each writable bind that is a directory (Config.Binds), each
// frozen as a workspace of its own (not a home: protect.Entry.Home). nil
// when there is neither. Root and rootless tether plan them alike; only
// how the mounts get into the sandbox differs (protection.apply).
func protectFor(stateRoot string, cfg Config, rootless bool, notEnforced *[]string) (_ *protection, err error) {
	for _, b := range cfg.Binds {
		if protect.Overlaps(filepath.Clean(b.Source), filepath.Clean(stateRoot)) {
			return nil, fmt.Errorf("%w: the bind %s overlaps the sandbox state root %s", ErrUnsafeWorkspace, b.Source, stateRoot)
		}
	}
	// Whoever could write the records could have a tether remove
	// another's live reservations: they are hidden like tether's state.
	chain := reservationChain()
	own := append([]string{stateRoot, chain[len(chain)-1].path}, cfg.Hide...)
	// The sockets of the daemons of this state root (RecordServed), in
	// every sandbox and not only their own.
	served, err := servedPaths(stateRoot)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnsafeWorkspace, err)
	}
	own = append(own, served...)
	pr := &protection{rootless: rootless}
	defer func() {
		if err != nil {
			_ = pr.release()
		}
	}()
	planned := false
	if cfg.Workspace != "" {
		hide, err := hiddenIn(cfg.Workspace, own)
		if err != nil {
			return nil, err
		}
		home := IsHome(cfg.Workspace)
		ws, err := planProtection(cfg.Workspace, cfg.workspaceMount(), home, hide...)
		if err != nil {
			return nil, err
		}
		ws.rootless, ws.binds = rootless, pr.binds
		ws.set = protect.Set{Root: filepath.Clean(cfg.Workspace), GitDirs: ws.gitDirs, Extra: own, Home: home, NotHome: !home}
		pr, planned = ws, true
		if err := pr.planWritable(cfg); err != nil {
			return nil, err
		}
	}
	for _, b := range cfg.Binds {
		if b.ReadOnly || b.Scratch {
			continue // nothing in it can be written, or nothing trusts it
		}
		if fi, err := os.Lstat(b.Source); err != nil || !fi.IsDir() {
			continue // a file bind holds no repository; a missing one fails at the mount
		}
		hide, err := hiddenIn(b.Source, own)
		if err != nil {
			return nil, fmt.Errorf("bind %s: %w", b.Source, err)
		}
		bp, err := planProtection(b.Source, b.dest(), false, hide...)
		if err != nil {
			return nil, fmt.Errorf("protecting the bind %s: %w", b.Source, err)
		}
		bp.set = protect.Set{Root: filepath.Clean(b.Source), GitDirs: bp.gitDirs, Extra: own, NotHome: true}
		pr.binds = append(pr.binds, bp)
		planned = true
	}
	if !planned {
		return nil, nil
	}
	for _, t := range pr.trees() {
		if t.nestedTruncated {
			*notEnforced = append(*notEnforced, "nested-repos")
			break
		}
	}
	for _, t := range pr.trees() {
		if t.linksTruncated {
			*notEnforced = append(*notEnforced, "protected-links")
			break
		}
	}
	if len(pr.binds) > 0 {
		// The creation gate lets git write a HEAD in any frozen git
		// directory, the binds' too.
		ids := maps.Clone(pr.gitDirIDs)
		if ids == nil {
			ids = map[fileID]bool{}
		}
		for _, bp := range pr.binds {
			maps.Copy(ids, bp.gitDirIDs)
		}
		pr.gitDirIDs = ids
	}
	return pr, nil
}

// trees returns the planned trees of pr: its own (when it has a
// workspace) and its binds'.
func (pr *protection) trees() []*protection {
	var ts []*protection
	if pr.hold != nil {
		ts = append(ts, pr)
	}
	return append(ts, pr.binds...)
}

// IsHome reports whether ws is a home directory: tether's own ($HOME) or
// its owner's (the password database). Only there do shell startup files
// and ssh's and git's per-user files run anything (protect.Entry.Home).
func IsHome(ws string) bool {
	same := func(a, b string) bool {
		if a == "" || b == "" {
			return false
		}
		if filepath.Clean(a) == filepath.Clean(b) {
			return true
		}
		var sa, sb unix.Stat_t
		return unix.Stat(a, &sa) == nil && unix.Stat(b, &sb) == nil && sa.Dev == sb.Dev && sa.Ino == sb.Ino
	}
	for _, h := range trustedHomes(ws) {
		if same(ws, h) {
			return true
		}
	}
	return false
}

// freezeHome freezes, in a home workspace (root, an O_PATH descriptor),
// every existing entry the home rule protects (protect.Set.Home: the
// dot-entries at the root, ~/bin, ~/go/bin), as a whole where it holds
// nothing that must stay writable (protect.HomeTreat), else entry by
// entry below it. hide are tether's hidden paths, handled apart. A name
// that does not exist yet is not reserved here (nobody can list them):
// ~/bin, ~/go/bin and the list's own entries are (the caller), the rest
// only by the creation gate's refusal of protected names.
func freezeHome(root int, hide []string, freeze func(string) error) error {
	queue := []string{"."}
	for len(queue) > 0 {
		dir := queue[0]
		queue = queue[1:]
		entries, _, err := readDirBeneath(root, dir, dirlist.MaxEntries)
		if err != nil {
			if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
				continue // gone meanwhile, or a file where a directory was
			}
			return fmt.Errorf("%w: reading %s of the home workspace: %w", ErrUnsafeWorkspace, dir, err)
		}
		for _, e := range entries {
			rel := path.Join(dir, e.Name())
			switch protect.HomeTreat(rel, hide) {
			case protect.HomeFreeze:
				if err := freeze(rel); err != nil {
					return err
				}
			case protect.HomeDescend:
				if e.IsDir() {
					queue = append(queue, rel)
				}
			}
		}
	}
	return nil
}

// hiddenIn returns the paths of own (tether's config and state, absolute)
// that lie inside the workspace ws, relative to it. A workspace that is
// one of them or lies inside one is refused: it cannot be hidden from
// itself.
//
// A path is inside by its spelling, or by identity when it reaches the
// workspace by another name (aliasIn: a symlink on its way, a bind mount
// of a workspace directory): the daemon's socket at /tmp/alias/t.sock,
// where /tmp/alias is ws/run mounted again, is ws/run/t.sock to a sandbox
// of ws, which could otherwise unlink it and bind an impostor there
// (session-12 red team, S1).
func hiddenIn(ws string, own []string) ([]string, error) {
	var rels []string
	add := func(rel string) {
		if !slices.Contains(rels, rel) {
			rels = append(rels, rel)
		}
	}
	var mounts []*mountinfo.Info
	for _, h := range own {
		if h == "" {
			continue
		}
		h = filepath.Clean(h)
		switch {
		case h == ws || strings.HasPrefix(ws, strings.TrimSuffix(h, "/")+"/"):
			return nil, fmt.Errorf("%w: the workspace %s lies inside tether's own configuration or state %s", ErrUnsafeWorkspace, ws, h)
		case strings.HasPrefix(h, ws+"/"):
			add(h[len(ws)+1:])
		default:
			rel, err := aliasIn(ws, h, &mounts)
			if err != nil {
				return nil, fmt.Errorf("%w: %w", ErrUnsafeWorkspace, err)
			}
			if rel != "" {
				add(rel)
			}
		}
	}
	return rels, nil
}

// aliasIn returns the path relative to ws of the existing object h (an
// own path not spelt inside ws) when it is one of the workspace's by
// identity, or "". Symlinks of h are resolved (fspath.Real); a bind mount
// is seen in the mount table (*mounts, read once when first needed): the
// path of h and of ws inside their file system (the mount's root joined
// with the rest after its mount point) are compared, and the answer is
// confirmed by device and inode. A missing h has no identity: it is
// hidden by its spelling only (the creation gate refuses a bind at it).
func aliasIn(ws, h string, mounts *[]*mountinfo.Info) (string, error) {
	var hst unix.Stat_t
	if unix.Stat(h, &hst) != nil {
		return "", nil
	}
	wsReal, real := fspath.Real(ws), fspath.Real(h)
	confirm := func(rel string) string {
		var st unix.Stat_t
		if unix.Lstat(filepath.Join(ws, rel), &st) == nil && st.Dev == hst.Dev && st.Ino == hst.Ino {
			return rel
		}
		return ""
	}
	if rel, ok := strings.CutPrefix(real, wsReal+"/"); ok {
		return confirm(rel), nil
	}
	var wst unix.Stat_t
	if unix.Stat(wsReal, &wst) != nil || wst.Dev != hst.Dev {
		return "", nil // another file system: no alias of the workspace
	}
	if *mounts == nil {
		m, err := mountinfo.GetMounts(nil)
		if err != nil {
			return "", fmt.Errorf("reading the mount table to find aliases of %s: %w", h, err)
		}
		*mounts = m
	}
	hIn, ok1 := inFileSystem(*mounts, real)
	wsIn, ok2 := inFileSystem(*mounts, wsReal)
	if !ok1 || !ok2 {
		return "", nil
	}
	if rel, ok := strings.CutPrefix(hIn, strings.TrimSuffix(wsIn, "/")+"/"); ok {
		return confirm(rel), nil
	}
	return "", nil
}

// inFileSystem returns the path p (resolved) has inside its file system:
// the root of the mount it is under (the one with the longest mount point
// holding p, the last of those in the table: the one on top) joined with
// the rest of p.
func inFileSystem(mounts []*mountinfo.Info, p string) (string, bool) {
	var best *mountinfo.Info
	for _, m := range mounts {
		if m.Mountpoint == p || m.Mountpoint == "/" || strings.HasPrefix(p, m.Mountpoint+"/") {
			if best == nil || len(m.Mountpoint) >= len(best.Mountpoint) {
				best = m
			}
		}
	}
	if best == nil {
		return "", false
	}
	rest := strings.TrimPrefix(strings.TrimPrefix(p, best.Mountpoint), "/")
	return filepath.Join(best.Root, rest), true
}

// sourceOwners returns the on-disk owners of the workspace and the binds'
// sources (Placement.Owners).
func sourceOwners(cfg Config) (map[string]Owner, error) {
	marks, err := sourceMarks(cfg)
	if err != nil {
		return nil, err
	}
	owners := map[string]Owner{}
	for src, m := range marks {
		owners[src] = m.owner
	}
	return owners, nil
}

// sourceMark is what a sandbox's container is made for of the workspace or
// a bind's source: its identity and its owner.
type sourceMark struct {
	id    fileID
	owner Owner
}

// sourceMarks returns the marks of the workspace and the binds' sources.
func sourceMarks(cfg Config) (map[string]sourceMark, error) {
	marks := map[string]sourceMark{}
	srcs := []string{}
	if cfg.Workspace != "" {
		srcs = append(srcs, cfg.Workspace)
	}
	for _, b := range cfg.Binds {
		srcs = append(srcs, b.Source)
	}
	for _, src := range srcs {
		var st unix.Stat_t
		if err := unix.Stat(src, &st); err != nil {
			return nil, fmt.Errorf("reading the owner of %s: %w", src, err)
		}
		marks[src] = sourceMark{fileID{st.Dev, st.Ino}, Owner{UID: int(st.Uid), GID: int(st.Gid)}}
	}
	return marks, nil
}

// openBeneath opens rel under dir without following any symlink, the last
// component included (it is returned as itself, O_PATH).
func openBeneath(dir int, rel string) (int, error) {
	return protect.OpenBeneath(dir, rel, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
}

func fdMode(fd int) (uint32, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return 0, err
	}
	return st.Mode & unix.S_IFMT, nil
}

// reservationTarget returns where the reservation links of a tether
// whose records are in records point. Root's are reservedTarget (its
// records are host-wide); a rootless tether's name its records too
// (reservedTarget/UID-HASH, still under procfs, still resolving nowhere),
// so tethers that share no records never take each other's reservations
// for their own: a sandbox whose workspace holds another's is refused
// (ErrUnsafeWorkspace) while that one's sandboxes live, rather than remove
// at its end what they rely on.
func reservationTarget(records string) string {
	if os.Geteuid() == 0 {
		return reservedTarget
	}
	sum := sha256.Sum256([]byte(records))
	return fmt.Sprintf("%s/%d-%x", reservedTarget, os.Geteuid(), sum[:6])
}

// linkTarget returns the target of the symlink fd (O_PATH), or "".
func linkTarget(fd int) string {
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlinkat(fd, "", buf)
	if err != nil {
		return ""
	}
	return string(buf[:n])
}

// isReservation reports whether fd (an O_PATH symlink) is a reservation
// pointing to target (reservationTarget).
func isReservation(fd int, target string) bool { return linkTarget(fd) == target }

// symlinkRefused is the error for the protected path rel, a symlink fd:
// a link (ErrUnsafeWorkspace), or another tether's reservation.
func symlinkRefused(rel string, fd int) error {
	if strings.HasPrefix(linkTarget(fd), reservedTarget) {
		return fmt.Errorf("%w: %s is reserved by a live sandbox of another tether (another user, or one keeping its records elsewhere); start this one when that one has ended", ErrUnsafeWorkspace, rel)
	}
	return fmt.Errorf("%w: %s", ErrUnsafeWorkspace, rel)
}

// planProtection works out the protected-path mounts of a sandbox whose
// workspace ws appears at wsMount, and makes its reservations on the host;
// home says whether ws is a home directory (protect.Entry.Home), hide are
// the workspace-relative paths of tether's own config and state
// (Config.Hide). The caller must call release when the sandbox is gone.
func planProtection(ws, wsMount string, home bool, hide ...string) (_ *protection, err error) {
	root, err := unix.Open(ws, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("opening workspace %s: %w", ws, err)
	}
	defer unix.Close(root)
	var st unix.Stat_t
	if err := unix.Fstat(root, &st); err != nil {
		return nil, fmt.Errorf("reading workspace %s: %w", ws, err)
	}
	records, err := checkedReservationDir()
	if err != nil {
		return nil, err
	}
	pr := &protection{wsMount: wsMount, records: records, ws: ws, target: reservationTarget(records),
		key: strconv.FormatUint(st.Dev, 10) + "-" + strconv.FormatUint(st.Ino, 10), rootID: fileID{st.Dev, st.Ino}}
	dir := records
	lock, err := lockFile(filepath.Join(dir, pr.key+".lock"), unix.LOCK_EX)
	if err != nil {
		return nil, err
	}
	defer lock.Close()
	// Shared: only a holder about to leave, with the plan lock (ours now),
	// takes it exclusively, and never waits for it.
	if pr.hold, err = lockFile(filepath.Join(dir, pr.key+".hold"), unix.LOCK_SH); err != nil {
		return nil, err
	}
	if err := recordWorkspace(filepath.Join(dir, pr.key+".ws"), ws); err != nil {
		pr.hold.Close()
		return nil, err
	}
	defer func() {
		if err != nil {
			pr.releaseLocked()
		}
	}()

	seen := map[string]bool{}
	add := func(rel string, mode ProtectMode) {
		if !seen[rel] {
			seen[rel] = true
			pr.mounts = append(pr.mounts, ProtectMount{Path: rel, Mode: mode})
		}
	}
	reserve := func(rel string) error {
		fd, err := openBeneath(root, rel)
		if err == nil {
			defer unix.Close(fd)
			m, _ := fdMode(fd)
			if m == unix.S_IFLNK && isReservation(fd, pr.target) {
				add(rel, ProtectReserve) // another sandbox's, shared
				pr.reserved = append(pr.reserved, rel)
				return nil
			}
			if m == unix.S_IFLNK {
				return symlinkRefused(rel, fd)
			}
			return fmt.Errorf("reserving %s: it exists", rel)
		}
		parent, name := path.Split(rel)
		pfd := root
		if parent != "" {
			if pfd, err = openBeneath(root, strings.TrimSuffix(parent, "/")); err != nil {
				return fmt.Errorf("reserving %s: %w", rel, err)
			}
			defer unix.Close(pfd)
		}
		commondir := path.Base(rel) == "commondir"
		if commondir {
			// See commondirPlaceholder: git dies on an unreadable one.
			fd, err := unix.Openat(pfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o444)
			if errors.Is(err, unix.EROFS) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("reserving %s: %w", rel, err)
			}
			_, werr := unix.Write(fd, []byte(commondirPlaceholder))
			unix.Close(fd)
			if werr != nil {
				return fmt.Errorf("reserving %s: %w", rel, werr)
			}
		} else if err := unix.Symlinkat(pr.target, pfd, name); errors.Is(err, unix.EROFS) {
			return nil // a read-only file system: nobody can create it
		} else if err != nil {
			return fmt.Errorf("reserving %s: %w", rel, err)
		}
		if commondir {
			add(rel, ProtectReadOnly)
		} else {
			add(rel, ProtectReserve)
		}
		pr.reserved = append(pr.reserved, rel)
		return nil
	}
	// pinDirs pins the directories on the way to rel (rel itself too when
	// self). It reports done when rel cannot exist (a directory on the way
	// is missing, and reserved instead, or is not a directory).
	pinDirs := func(rel string, self, mayReserve bool) (done bool, err error) {
		parts := strings.Split(rel, "/")
		n := len(parts) - 1
		if self {
			n++
		}
		for i := 1; i <= n; i++ {
			anc := strings.Join(parts[:i], "/")
			fd, err := openBeneath(root, anc)
			if errors.Is(err, unix.ENOENT) {
				if !mayReserve {
					return true, nil
				}
				return true, reserve(anc)
			}
			if err != nil {
				return true, unsafePath(anc, err)
			}
			m, err := fdMode(fd)
			reserved := m == unix.S_IFLNK && isReservation(fd, pr.target)
			unix.Close(fd)
			if err != nil {
				return true, fmt.Errorf("reading %s: %w", anc, err)
			}
			switch {
			case m == unix.S_IFDIR:
				add(anc, ProtectPin)
			case reserved:
				add(anc, ProtectReserve) // reserved already: nothing under it
				return true, nil
			case m == unix.S_IFLNK:
				fd, err := openBeneath(root, anc)
				if err != nil {
					return true, unsafePath(anc, err)
				}
				defer unix.Close(fd)
				return true, symlinkRefused(anc, fd)
			default:
				// Nothing can be created under it while it stays.
				add(anc, ProtectReadOnly)
				return true, nil
			}
		}
		return false, nil
	}
	var repos []gitRepo // every git directory frozen, for its configuration
	// protectEntry freezes rel (of kind k): pins the directories on the
	// way, then binds, reserves or refuses rel itself.
	var protectEntry func(rel string, k protect.Kind, mayReserve bool) error
	// freezeLinks freezes what the frozen entry rel (fd, of mode m) reaches
	// by a link (protect_links_linux.go).
	links := &linkCheck{root: root, ws: ws, left: maxFrozenEntries}
	walked := map[string]bool{}
	freezeLinks := func(rel string, fd int, m uint32) error {
		switch {
		case m == unix.S_IFREG:
			return singleName(fd, rel)
		case m != unix.S_IFDIR || walked[rel]:
			return nil
		}
		walked[rel] = true
		base := path.Base(rel)
		targets, err := links.linksIn(rel, base == "modules" || base == "worktrees", 0)
		if err != nil {
			return err
		}
		for _, t := range targets {
			if err := protectEntry(t, protect.File, true); err != nil {
				return err
			}
		}
		return nil
	}
	protectEntry = func(rel string, k protect.Kind, mayReserve bool) error {
		if done, err := pinDirs(rel, false, mayReserve); done || err != nil {
			return err
		}
		fd, err := openBeneath(root, rel)
		if errors.Is(err, unix.ENOENT) {
			if !mayReserve {
				return nil
			}
			return reserve(rel)
		}
		if err != nil {
			return unsafePath(rel, err)
		}
		defer unix.Close(fd)
		m, err := fdMode(fd)
		if err != nil {
			return fmt.Errorf("reading %s: %w", rel, err)
		}
		if m == unix.S_IFLNK {
			if isReservation(fd, pr.target) {
				add(rel, ProtectReserve)
				return nil
			}
			return symlinkRefused(rel, fd)
		}
		if k != protect.Repo {
			add(rel, ProtectReadOnly)
			return freezeLinks(rel, fd, m)
		}
		// A git directory: pin it, freeze its control surface.
		gitDir := rel
		if m != unix.S_IFDIR {
			add(rel, ProtectReadOnly)
			if m != unix.S_IFREG {
				return nil
			}
			if err := singleName(fd, rel); err != nil {
				return err
			}
			data, err := readBeneath(root, rel)
			if err != nil {
				return err
			}
			target, err := protect.GitFileTarget(ws, path.Dir(rel), data)
			if err != nil || target == "." {
				return nil // outside the workspace, or not a git file git would use
			}
			if gitDir = target; strings.HasPrefix(gitDir, "../") {
				return nil
			}
			if done, err := pinDirs(gitDir, true, true); done || err != nil {
				return err
			}
		}
		add(gitDir, ProtectPin)
		pr.gitDirs = append(pr.gitDirs, gitDir)
		top := path.Dir(rel) // a .git directory or file: its work tree
		if path.Base(rel) != protect.GitDirName {
			top = rel // a bare repository
		}
		repos = append(repos, gitRepo{dir: gitDir, top: top})
		// logs/ is where git writes logs/HEAD, which the creation gate
		// allows only in a frozen git directory's own logs/ (headAllowed):
		// pinned, it cannot be swapped for a link to elsewhere.
		if fd, err := openBeneath(root, gitDir+"/logs"); err == nil {
			if m, _ := fdMode(fd); m == unix.S_IFDIR {
				add(gitDir+"/logs", ProtectPin)
			}
			unix.Close(fd)
		}
		for _, e := range protect.GitDir() {
			if err := protectEntry(gitDir+"/"+e.Path, e.Kind, true); err != nil {
				return err
			}
		}
		return nil
	}
	// tether's own directories that do not exist yet are made now, not
	// reserved: tether itself may be about to create them (the approval
	// gate runs while the sandbox is built), and a placeholder would stand
	// in its way. First, so that the entries below find their parents.
	for _, rel := range hide {
		if _, err := mkdirBeneath(root, rel, 0o700); err != nil {
			return nil, err
		}
	}
	for _, e := range protect.Workspace() {
		if err := protectEntry(e.Path, e.Kind, home || !e.Home); err != nil {
			return nil, err
		}
	}
	if home {
		// A directory the list's entries pinned (.config for .config/git,
		// .local for .local/bin) is frozen as a whole here: its read-only
		// bind pins it as well, and the entries' own binds stay on top.
		freeze := func(rel string) error {
			for i, m := range pr.mounts {
				if m.Path == rel && m.Mode == ProtectPin {
					pr.mounts[i].Mode = ProtectReadOnly
				}
			}
			return protectEntry(rel, protect.Dir, false)
		}
		if err := freezeHome(root, hide, freeze); err != nil {
			return nil, err
		}
		// The PATH directories are reserved when missing: Debian's
		// .profile adds ~/bin at the next login if it exists. ~/go/bin
		// only where ~/go exists: reserving a missing ~/go would keep go
		// from making its module cache.
		for _, rel := range protect.HomeRoots() {
			if _, err := os.Lstat(filepath.Join(ws, path.Dir(rel))); err == nil {
				if err := protectEntry(rel, protect.Dir, true); err != nil {
					return nil, err
				}
			}
		}
	}
	// A workspace that is itself a git directory (a bare repository):
	// the host's git in it reads its config and hooks as a nested one's.
	if protect.HeadAt(root) == protect.HeadValid {
		for _, e := range protect.GitDir() {
			if err := protectEntry(e.Path, e.Kind, true); err != nil {
				return nil, err
			}
		}
		pr.gitDirs = append(pr.gitDirs, ".")
	}
	// Nested repositories, frozen as the root's .git is.
	skip := append([]string{protect.GitDirName}, hide...)
	nested, err := scanNested(root, skip)
	if err != nil {
		return nil, err
	}
	pr.nestedTruncated = nested.truncated
	for _, rel := range nested.repos {
		if err := protectEntry(rel, protect.Repo, true); err != nil {
			return nil, err
		}
	}
	for _, rel := range nested.heads {
		add(rel, ProtectReadOnly)
	}
	// What the repositories' configuration names (core.hooksPath,
	// include.path, the programs of core.fsmonitor, aliases, filters),
	// frozen as their control surface is (gitconfig_linux.go).
	named, err := gitConfigPaths(root, ws, repos)
	if err != nil {
		return nil, err
	}
	for _, r := range repos {
		pr.repos = append(pr.repos, protect.GitRepo{Dir: r.dir, Top: r.top})
	}
	// What the host trusts outside the workspace and really is, or names,
	// in it: a ~/.bashrc linked into a dotfiles checkout, a global
	// core.hooksPath (hosttrust_linux.go).
	trusted, err := hostTrusted(root, ws, repos, func(string) {})
	if err != nil {
		return nil, err
	}
	for _, n := range trusted {
		named = append(named, configPath{rel: n.Rel, kind: n.Kind, reserve: n.Reserve})
	}
	for _, p := range named {
		if err := protectEntry(p.rel, p.kind, p.reserve); err != nil {
			return nil, err
		}
		// A directory pinned on the way to another entry (.husky, for
		// .husky/_) is named itself: read-only, not only pinned.
		for i := range pr.mounts {
			if pr.mounts[i].Path == p.rel && pr.mounts[i].Mode == ProtectPin && !slices.Contains(pr.gitDirs, p.rel) {
				pr.mounts[i].Mode = ProtectReadOnly
			}
		}
	}
	// tether's own config and state: pinned on the way like any entry (a
	// renamed parent would let a command plant a new state directory where
	// tether looks for it), then hidden (made above when missing; reserved
	// only if that was impossible).
	for _, rel := range hide {
		if done, err := pinDirs(rel, false, true); done || err != nil {
			if err != nil {
				return nil, err
			}
			continue
		}
		fd, err := openBeneath(root, rel)
		if errors.Is(err, unix.ENOENT) {
			if err := reserve(rel); err != nil {
				return nil, err
			}
			continue
		}
		if err != nil {
			return nil, unsafePath(rel, err)
		}
		m, err := fdMode(fd)
		reserved := m == unix.S_IFLNK && isReservation(fd, pr.target)
		unix.Close(fd)
		switch {
		case err != nil:
			return nil, fmt.Errorf("reading %s: %w", rel, err)
		case reserved:
			add(rel, ProtectReserve)
			continue
		case m == unix.S_IFLNK:
			return nil, fmt.Errorf("%w: %s", ErrUnsafeWorkspace, rel)
		}
		mode := ProtectHideFile
		if m == unix.S_IFDIR {
			mode = ProtectHideDir
		}
		// Hiding wins over a read-only bind planned for the same path,
		// and nothing is mounted inside what is hidden.
		pr.mounts = slices.DeleteFunc(pr.mounts, func(pm ProtectMount) bool {
			return pm.Path == rel || strings.HasPrefix(pm.Path, rel+"/")
		})
		seen[rel] = false
		add(rel, mode)
	}
	// Parents before children: a pin must exist before the binds in it.
	slices.SortStableFunc(pr.mounts, func(a, b ProtectMount) int {
		return strings.Count(a.Path, "/") - strings.Count(b.Path, "/")
	})
	pr.linksTruncated = links.truncated
	if err := recordReservations(filepath.Join(dir, pr.key+".res"), pr.reserved); err != nil {
		return nil, err
	}
	pr.gitDirIDs = map[fileID]bool{}
	for _, g := range pr.gitDirs {
		fd, err := openBeneath(root, g)
		if err != nil {
			return nil, unsafePath(g, err)
		}
		var st unix.Stat_t
		err = unix.Fstat(fd, &st)
		unix.Close(fd)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", g, err)
		}
		pr.gitDirIDs[fileID{st.Dev, st.Ino}] = true
	}
	return pr, nil
}

func unsafePath(rel string, err error) error {
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EXDEV) {
		return fmt.Errorf("%w: %s (%v)", ErrUnsafeWorkspace, rel, err)
	}
	return fmt.Errorf("opening %s: %w", rel, err)
}

// readBeneath reads a small file rel under dir without following symlinks.
func readBeneath(dir int, rel string) ([]byte, error) {
	fd, err := protect.OpenBeneath(dir, rel, &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", rel, err)
	}
	f := os.NewFile(uintptr(fd), rel)
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, 1<<20+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", rel, err)
	}
	return data, nil
}

// mkdirBeneath creates the missing directories of rel under the directory
// root (with mode, and as root owned like their parent), each inside its
// opened parent and never through a symlink. What exists is left as it
// is: the plan checks it.
func mkdirBeneath(root int, rel string, mode uint32) (made []string, err error) {
	parts := strings.Split(rel, "/")
	for i := range parts {
		prefix := strings.Join(parts[:i+1], "/")
		fd, err := openBeneath(root, prefix)
		if err == nil {
			m, _ := fdMode(fd)
			unix.Close(fd)
			if m != unix.S_IFDIR {
				return made, nil // a file, a symlink or a reservation: the plan decides
			}
			continue
		}
		if !errors.Is(err, unix.ENOENT) {
			return made, unsafePath(prefix, err)
		}
		pfd := root
		if i > 0 {
			if pfd, err = openBeneath(root, strings.Join(parts[:i], "/")); err != nil {
				return made, unsafePath(prefix, err)
			}
		}
		err = unix.Mkdirat(pfd, parts[i], mode)
		if err == nil {
			made = append(made, prefix)
		}
		if err == nil && os.Geteuid() == 0 {
			var st unix.Stat_t
			if err = unix.Fstat(pfd, &st); err == nil {
				err = unix.Fchownat(pfd, parts[i], int(st.Uid), int(st.Gid), unix.AT_SYMLINK_NOFOLLOW)
			}
		}
		if pfd != root {
			unix.Close(pfd)
		}
		if err != nil && err != unix.EEXIST {
			return made, fmt.Errorf("creating %s: %w", prefix, err)
		}
	}
	return made, nil
}

// lockFile opens (creating) p and flocks it with how. GC with Caches
// removes lock files (holding them): a waiter that then gets the lock of
// a removed file would hold a lock nobody else sees, so lockFile checks
// that p is still the file it locked and starts over if not.
func lockFile(p string, how int) (*os.File, error) {
	for {
		f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err != nil {
			return nil, fmt.Errorf("opening lock %s: %w", p, err)
		}
		if err := unix.Flock(int(f.Fd()), how); err != nil {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", p, err)
		}
		var locked, now unix.Stat_t
		if err := unix.Fstat(int(f.Fd()), &locked); err != nil {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", p, err)
		}
		err = unix.Lstat(p, &now)
		if err == nil && now.Dev == locked.Dev && now.Ino == locked.Ino {
			return f, nil
		}
		f.Close()
		if err != nil && !errors.Is(err, unix.ENOENT) {
			return nil, fmt.Errorf("locking %s: %w", p, err)
		}
	}
}

// reservationSpec is one directory of the chain that leads to the
// reservation records, and the mode it is made with.
type reservationSpec struct {
	path string
	mode os.FileMode
}

// reservationChain returns the directories that lead to this tether's
// reservation records, the records' own last. As root they are
// reservationDir, host-wide, under /run/tether, root's default state
// root too (0711, as setUp makes a state root). Without root they are
// the user's own and shared by all the user's tethers, whatever their
// state roots: $XDG_RUNTIME_DIR/tether/protect when XDG_RUNTIME_DIR is an
// absolute path, else /tmp/tether-UID/protect.
func reservationChain() []reservationSpec {
	uid := os.Geteuid()
	if uid == 0 {
		dir := filepath.Clean(reservationDir)
		return []reservationSpec{{filepath.Dir(dir), 0o711}, {dir, 0o700}}
	}
	if x := os.Getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(x) {
		x = filepath.Clean(x)
		return []reservationSpec{{x, 0o700}, {filepath.Join(x, "tether"), 0o700}, {filepath.Join(x, "tether", protectDir), 0o700}}
	}
	base := fmt.Sprintf("/tmp/tether-%d", uid)
	return []reservationSpec{{base, 0o700}, {filepath.Join(base, protectDir), 0o700}}
}

// checkedReservationDir creates the directories of reservationChain that
// are missing and returns the last once every one of them is a real
// directory (not a symlink) owned by this tether's user that neither
// group nor others may write: its locks decide who removes reservations
// from workspaces, and anyone who could replace them could make a tether
// remove another's live reservations.
func checkedReservationDir() (string, error) {
	return checkedDirChain(reservationChain(), "protected-path reservation directory", ErrUnsafeReservationDir)
}

// checkedRootDir creates dir (0700) and its parent (0711) if they are
// missing and returns dir once both are real directories (not symlinks)
// owned by root that neither group nor others may write: host-wide locks
// live there, which only root may replace. The parent is /run/tether,
// root's default state root too (0711, as setUp makes a state root). what
// names dir in errors; a directory that fails the check is an error
// wrapping unsafe. Only root calls it.
func checkedRootDir(dir, what string, unsafe error) (string, error) {
	dir = filepath.Clean(dir)
	return checkedDirChain([]reservationSpec{{filepath.Dir(dir), 0o711}, {dir, 0o700}}, what, unsafe)
}

// checkedDirChain creates the directories of chain that are missing and
// returns the last once every one of them is a real directory (not a
// symlink) owned by this tether's user that neither group nor others may
// write. what names the last in errors; a directory that fails the check
// is an error wrapping unsafe.
func checkedDirChain(chain []reservationSpec, what string, unsafe error) (string, error) {
	uid := os.Geteuid()
	for _, d := range chain {
		if err := os.Mkdir(d.path, d.mode); err != nil && !errors.Is(err, os.ErrExist) {
			return "", fmt.Errorf("creating the %s %s: %w", what, d.path, err)
		}
		var st unix.Stat_t
		if err := unix.Lstat(d.path, &st); err != nil {
			return "", fmt.Errorf("checking the %s %s: %w", what, d.path, err)
		}
		if st.Mode&unix.S_IFMT != unix.S_IFDIR || int(st.Uid) != uid || st.Mode&0o022 != 0 {
			return "", fmt.Errorf("%w: %s must be a directory (not a symlink) owned by uid %d that only its owner may write; it has mode %#o and owner %d: remove it or fix it",
				unsafe, d.path, uid, st.Mode, st.Uid)
		}
	}
	return chain[len(chain)-1].path, nil
}

// recordWorkspace writes ws to p unless p holds it already (GC needs the
// path of a workspace whose holders are gone).
func recordWorkspace(p, ws string) error {
	if b, err := os.ReadFile(p); err == nil && string(b) == ws {
		return nil
	}
	tmp := fmt.Sprintf("%s.tmp-%d", p, os.Getpid())
	if err := os.WriteFile(tmp, []byte(ws), 0o600); err != nil {
		return fmt.Errorf("recording protected-path workspace: %w", err)
	}
	if err := os.Rename(tmp, p); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("recording protected-path workspace: %w", err)
	}
	return nil
}

// release drops this sandbox's hold on the reservations of the workspace
// and of the binds and, where no other sandbox holds them, removes them.
func (pr *protection) release() error {
	var errs []error
	for _, t := range pr.trees() {
		errs = append(errs, t.releaseTree())
	}
	return errors.Join(errs...)
}

// releaseTree is release for one tree.
func (pr *protection) releaseTree() error {
	lock, err := lockFile(filepath.Join(pr.records, pr.key+".lock"), unix.LOCK_EX)
	if err != nil {
		pr.hold.Close()
		return err
	}
	defer lock.Close()
	return pr.releaseLocked()
}

// releaseLocked is release with the plan lock held. The last one out
// removes the placeholders and then the records (the host-wide directory
// would otherwise keep three files for every workspace ever used).
func (pr *protection) releaseLocked() error {
	defer pr.hold.Close()
	pr.leavePlan()
	if unix.Flock(int(pr.hold.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil {
		return nil // another sandbox holds them
	}
	if err := removePlaceholders(pr.records, pr.ws, pr.key, pr.target); err != nil {
		return err
	}
	removeRecords(pr.records, pr.key)
	return nil
}

// removeRecords removes the records of key in dir. The caller holds its
// lock and hold exclusively; the lock goes last, still held, and
// lockFile's waiters see it gone and start over.
func removeRecords(dir, key string) {
	for _, ext := range []string{".ws", ".res", ".hold", ".plan", ".made", ".lock"} {
		os.Remove(filepath.Join(dir, key+ext))
	}
}

// gcReservations removes the reservations of workspaces no live sandbox
// holds (their holders died: the kernel dropped their locks), whichever
// state root those sandboxes had: the records are host-wide
// (reservationDir), and the hold locks of every tether on the host are
// there. Records of older tethers under stateRoot are collected too. With
// caches, the records of reservations nobody holds go as well.
func gcReservations(stateRoot string, caches bool) []error {
	var errs []error
	host, err := checkedReservationDir()
	if err != nil {
		// Without the shared locks nothing says whether a live sandbox
		// holds an older record's reservations: keep them.
		return []error{err}
	}
	dirs, guards := []string{host, filepath.Join(stateRoot, protectDir)}, []string{host}
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, fmt.Errorf("reading reservation records: %w", err))
			}
			continue
		}
		seen := map[string]bool{}
		for _, e := range entries {
			// By .lock too: a lock left without its record is reaped.
			key, ok := strings.CutSuffix(e.Name(), ".ws")
			if !ok {
				key, ok = strings.CutSuffix(e.Name(), ".lock")
			}
			if !ok || seen[key] {
				continue
			}
			seen[key] = true
			if err := gcReservation(dir, key, reservationTarget(host), caches, guards); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errs
}

// gcReservation removes the reservations recorded in dir under key if
// nobody holds them there nor in any of guards (the host-wide records,
// for an older tether's record of the same workspace).
func gcReservation(dir, key, target string, caches bool, guards []string) error {
	locked := slices.Compact(append(slices.Clone(guards), dir))
	for _, d := range locked {
		lock, err := lockFile(filepath.Join(d, key+".lock"), unix.LOCK_EX|unix.LOCK_NB)
		if err != nil {
			return nil // being planned or released right now
		}
		defer lock.Close()
		hold, err := lockFile(filepath.Join(d, key+".hold"), unix.LOCK_EX|unix.LOCK_NB)
		if err != nil {
			return nil // held by a live sandbox
		}
		defer hold.Close()
	}
	// A record without its .ws is one the last holder removed since the
	// directory was read, or a guard's that only these locks created:
	// nobody holds it (we hold it exclusively), so it goes.
	for _, d := range locked {
		if _, err := os.Lstat(filepath.Join(d, key+".ws")); errors.Is(err, os.ErrNotExist) {
			removeRecords(d, key)
		}
	}
	ws, err := os.ReadFile(filepath.Join(dir, key+".ws"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading reservation record: %w", err)
	}
	if err := removePlaceholders(dir, string(ws), key, target); err != nil {
		return err
	}
	// Sandboxes under the plan that died left its directories.
	removeMade(dir, key, string(ws))
	if caches {
		removeRecords(dir, key)
	}
	return nil
}

// removePlaceholders removes, deepest first, every reservation in the
// workspace ws (if it is still the directory key names): each protected
// path, each directory on the way to one, and each path recorded in
// dir/<key>.res (nested repositories'), that is a link to target or a
// commondir of this tether's user holding exactly commondirPlaceholder
// with mode 0444. Anything else there is a person's, or another tether's,
// and is kept.
func removePlaceholders(dir, ws, key, target string) error {
	root, err := unix.Open(ws, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("opening workspace %s: %w", ws, err)
	}
	defer unix.Close(root)
	var st unix.Stat_t
	if err := unix.Fstat(root, &st); err != nil || strconv.FormatUint(st.Dev, 10)+"-"+strconv.FormatUint(st.Ino, 10) != key {
		return nil
	}
	var candidates []string
	addAll := func(rel string) {
		parts := strings.Split(rel, "/")
		for i := len(parts); i > 0; i-- {
			candidates = append(candidates, strings.Join(parts[:i], "/"))
		}
	}
	gitDirs := []string{protect.GitDirName}
	if data, err := readBeneath(root, protect.GitDirName); err == nil {
		if t, err := protect.GitFileTarget(ws, ".", data); err == nil && t != "." {
			gitDirs = append(gitDirs, t)
		}
	}
	for _, e := range protect.Workspace() {
		addAll(e.Path)
	}
	// A home's PATH directories are reserved apart from the list
	// (planProtection): a plan that fails after reserving them has
	// recorded nothing yet.
	for _, rel := range protect.HomeRoots() {
		addAll(rel)
	}
	for _, g := range gitDirs {
		for _, e := range protect.GitDir() {
			addAll(g + "/" + e.Path)
		}
	}
	recorded := readReservations(filepath.Join(dir, key+".res"))
	for _, rel := range recorded {
		addAll(rel)
	}
	slices.Sort(candidates)
	candidates = slices.Compact(candidates)
	slices.SortStableFunc(candidates, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
	var errs []error
	for _, rel := range candidates {
		parent, name := path.Split(rel)
		pfd := root
		if parent != "" {
			if pfd, err = openBeneath(root, strings.TrimSuffix(parent, "/")); err != nil {
				continue
			}
		}
		if isPlaceholder(pfd, name, target) {
			if err := unix.Unlinkat(pfd, name, 0); err != nil && !errors.Is(err, unix.ENOENT) {
				errs = append(errs, fmt.Errorf("removing reservation %s: %w", rel, err))
			}
		}
		if pfd != root {
			unix.Close(pfd)
		}
	}
	if len(errs) == 0 && len(recorded) > 0 {
		os.Remove(filepath.Join(dir, key+".res"))
	}
	return errors.Join(errs...)
}

// isPlaceholder reports whether name in dir is one of this tether's
// reservations: a link to target, or a commondir placeholder it owns (a
// commondir of another tether's, root's or a rootless user's, is not).
func isPlaceholder(dir int, name, target string) bool {
	var st unix.Stat_t
	if err := unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return false
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFLNK:
		buf := make([]byte, len(target)+1)
		n, err := unix.Readlinkat(dir, name, buf)
		return err == nil && string(buf[:n]) == target
	case unix.S_IFREG:
		if name != "commondir" || st.Mode&0o7777 != 0o444 || st.Size != int64(len(commondirPlaceholder)) || int(st.Uid) != os.Geteuid() {
			return false
		}
		fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err != nil {
			return false
		}
		defer unix.Close(fd)
		buf := make([]byte, len(commondirPlaceholder)+1)
		n, _ := unix.Read(fd, buf)
		return string(buf[:max(n, 0)]) == commondirPlaceholder
	}
	return false
}

// apply makes the protected-path mounts inside the mount namespace of the
// sandbox whose init is pid. It must run before any program of the
// sandbox does. A failure leaves the sandbox unusable: the caller destroys
// it.
func (pr *protection) apply(pid int) error {
	n := 0
	for _, t := range pr.trees() {
		n += len(t.mounts)
		if t.readOnly {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	if pr.rootless {
		return pr.applyJoined(pid)
	}
	errc := make(chan error, 1)
	go func() {
		// The thread joins the sandbox's mount namespace and is never
		// unlocked: the runtime ends it when this goroutine returns.
		runtime.LockOSThread()
		errc <- pr.mountIn(pid)
	}()
	return <-errc
}

func (pr *protection) mountIn(pid int) error {
	if err := unix.Unshare(unix.CLONE_FS); err != nil {
		return fmt.Errorf("protecting paths: unshare: %w", err)
	}
	ns, err := unix.Open(fmt.Sprintf("/proc/%d/ns/mnt", pid), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("protecting paths: opening the sandbox's mount namespace: %w", err)
	}
	defer unix.Close(ns)
	if err := unix.Setns(ns, unix.CLONE_NEWNS); err != nil {
		return fmt.Errorf("protecting paths: joining the sandbox's mount namespace: %w", err)
	}
	return mountJoined(pr.plan())
}

// joinTree is the mounts of one tree (a workspace or a bind) at its
// place in the sandbox: what mountJoined makes, and what a joining
// process (applyJoined) is told on stdin.
type joinTree struct {
	WsMount string         `json:"ws_mount"`
	Mounts  []ProtectMount `json:"mounts"`
	// Target is where the tree's reservation links point.
	Target string `json:"target"`
	// ReadOnly: protection.readOnly.
	ReadOnly bool `json:"read_only,omitempty"`
	// Dev and Ino are the identity of the directory the mounts were
	// planned on (protection.rootID): they are made only if WsMount is
	// it (a pooled sandbox's container bound the workspace long before
	// its plan was made).
	Dev uint64 `json:"dev"`
	Ino uint64 `json:"ino"`
}

// plan returns the mounts of every tree of pr.
func (pr *protection) plan() []joinTree {
	var plan []joinTree
	for _, t := range pr.trees() {
		if len(t.mounts) > 0 || t.readOnly {
			plan = append(plan, joinTree{WsMount: t.wsMount, Mounts: t.mounts, Target: t.target, ReadOnly: t.readOnly, Dev: t.rootID.dev, Ino: t.rootID.ino})
		}
	}
	return plan
}

// applyJoined makes the mounts from a process that joins the user and
// mount namespaces of the sandbox whose init is pid (package nsjoin),
// started from this binary.
func (pr *protection) applyJoined(pid int) error {
	var files []*os.File
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	for _, ns := range []string{"user", "mnt"} {
		f, err := os.Open(fmt.Sprintf("/proc/%d/ns/%s", pid, ns))
		if err != nil {
			return fmt.Errorf("protecting paths: opening the sandbox's %s namespace: %w", ns, err)
		}
		files = append(files, f)
	}
	plan, err := json.Marshal(pr.plan())
	if err != nil {
		return fmt.Errorf("protecting paths: %w", err)
	}
	cmd := exec.Command("/proc/self/exe", nsjoin.Arg)
	cmd.Env = []string{}
	cmd.Stdin = bytes.NewReader(plan)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.ExtraFiles = files // descriptors 3 and 4
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("protecting paths in the sandbox: %w: %s", err, bytes.TrimSpace(out.Bytes()))
	}
	return nil
}

// isProtectJoin reports whether this process is a joining process
// (applyJoined).
func isProtectJoin() bool { return len(os.Args) > 1 && os.Args[1] == nsjoin.Arg }

// protectJoinMain is the joining process, inside the sandbox's
// namespaces already (nsjoin's constructor): it makes the mounts of the
// plan on stdin and exits 0, or 1 with the reason on stderr.
func protectJoinMain() {
	var plan []joinTree
	err := json.NewDecoder(os.Stdin).Decode(&plan)
	if err == nil {
		err = mountJoined(plan)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// mountJoined makes the mounts of plan from inside the sandbox's mount
// namespace (joined by the caller).
func mountJoined(plan []joinTree) error {
	for _, t := range plan {
		if err := t.mount(); err != nil {
			return err
		}
	}
	return nil
}

func (t joinTree) mount() error {
	ws, err := unix.Open(t.WsMount, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("protecting paths: opening %s in the sandbox: %w", t.WsMount, err)
	}
	defer unix.Close(ws)
	var st unix.Stat_t
	if err := unix.Fstat(ws, &st); err != nil {
		return fmt.Errorf("protecting paths: reading %s in the sandbox: %w", t.WsMount, err)
	}
	if st.Dev != t.Dev || st.Ino != t.Ino {
		return fmt.Errorf("protecting paths: %s in the sandbox is not the directory they were planned on (it was replaced)", t.WsMount)
	}
	var empty *emptyTree
	for _, m := range t.Mounts {
		if m.Mode == ProtectReserve || m.Mode == ProtectHideFile || m.Mode == ProtectHideDir {
			if empty, err = newEmptyTree(t.WsMount); err != nil {
				return fmt.Errorf("protecting paths: %w", err)
			}
			defer empty.close()
			break
		}
	}
	for _, m := range t.Mounts {
		if err := mountOne(ws, m, empty, t.Target); err != nil {
			return fmt.Errorf("protecting %s: %w", path.Join(t.WsMount, m.Path), err)
		}
	}
	if t.ReadOnly {
		if err := t.seal(ws); err != nil {
			return fmt.Errorf("mounting %s read-only: %w", t.WsMount, err)
		}
	}
	return nil
}

// emptyTree is a small tmpfs, made in the sandbox's mount namespace,
// holding the empty file and the empty directory that are mounted,
// read-only, onto reservations and hidden paths.
type emptyTree struct {
	mnt int
	// at is where the tree is attached while clones are taken from it,
	// on kernels that clone nothing from a detached mount ("" when it is
	// not attached).
	wsMount, at string
}

// emptyFileName and emptyDirName are the entries of an emptyTree.
const (
	emptyFileName = "file"
	emptyDirName  = "dir"
)

// detachedClones says whether open_tree may clone from a mount that is
// not attached (Linux 6.15). A variable so that a test can take the other
// way on any kernel.
var detachedClones = true

func newEmptyTree(wsMount string) (_ *emptyTree, err error) {
	fs, err := unix.Fsopen("tmpfs", unix.FSOPEN_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("making the empty tree: %w", err)
	}
	defer unix.Close(fs)
	for _, kv := range [][2]string{{"size", "4k"}, {"nr_inodes", "4"}, {"mode", "0555"}} {
		if err := unix.FsconfigSetString(fs, kv[0], kv[1]); err != nil {
			return nil, fmt.Errorf("making the empty tree (%s): %w", kv[0], err)
		}
	}
	if err := unix.FsconfigCreate(fs); err != nil {
		return nil, fmt.Errorf("making the empty tree: %w", err)
	}
	mnt, err := unix.Fsmount(fs, unix.FSMOUNT_CLOEXEC, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV|unix.MOUNT_ATTR_NOEXEC)
	if err != nil {
		return nil, fmt.Errorf("making the empty tree: %w", err)
	}
	t := &emptyTree{mnt: mnt, wsMount: wsMount}
	defer func() {
		if err != nil {
			t.close()
		}
	}()
	f, err := unix.Openat(mnt, emptyFileName, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o444)
	if err != nil {
		return nil, fmt.Errorf("making the empty tree's file: %w", err)
	}
	unix.Close(f)
	if err := unix.Mkdirat(mnt, emptyDirName, 0o555); err != nil {
		return nil, fmt.Errorf("making the empty tree's directory: %w", err)
	}
	return t, nil
}

// clone returns a read-only bind of the tree's entry name, detached.
func (t *emptyTree) clone(name string) (int, error) {
	if !detachedClones {
		if err := t.attach(); err != nil {
			return -1, err
		}
	}
	c, err := unix.OpenTree(t.mnt, name, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
	if errors.Is(err, unix.EINVAL) && t.at == "" {
		if err := t.attach(); err != nil {
			return -1, err
		}
		c, err = unix.OpenTree(t.mnt, name, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
	}
	if err != nil {
		return -1, fmt.Errorf("cloning the empty %s: %w", name, err)
	}
	if err := unix.MountSetattr(c, "", unix.AT_EMPTY_PATH, &unix.MountAttr{
		Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV | unix.MOUNT_ATTR_NOEXEC}); err != nil {
		unix.Close(c)
		return -1, fmt.Errorf("making the empty %s read-only: %w", name, err)
	}
	return c, nil
}

// attach attaches the tree over the workspace, for kernels that clone
// only from an attached mount, until close. No program of the sandbox
// runs yet, and the workspace's own descriptor, which the mounts go
// through, is not affected.
func (t *emptyTree) attach() error {
	if t.at != "" {
		return nil
	}
	if err := unix.MoveMount(t.mnt, "", unix.AT_FDCWD, t.wsMount, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return fmt.Errorf("attaching the empty tree: %w", err)
	}
	t.at = t.wsMount
	return nil
}

func (t *emptyTree) close() {
	if t.at != "" {
		// The top mount at t.at is the tree: nothing else is mounted
		// there once it is.
		_ = unix.Unmount(t.at, unix.MNT_DETACH)
		t.at = ""
	}
	unix.Close(t.mnt)
}

// mountOne makes the mount m in the tree whose root is ws; target is
// where its reservation links point.
func mountOne(ws int, m ProtectMount, empty *emptyTree, target string) error {
	fd, err := openBeneath(ws, m.Path)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	mode, err := fdMode(fd)
	if err != nil {
		return err
	}
	var tree int
	switch m.Mode {
	case ProtectReserve:
		if mode != unix.S_IFLNK || !isReservation(fd, target) {
			return errors.New("the reservation changed")
		}
		if tree, err = empty.clone(emptyFileName); err != nil {
			return err
		}
	case ProtectHideDir, ProtectHideFile:
		if mode == unix.S_IFLNK || (mode == unix.S_IFDIR) != (m.Mode == ProtectHideDir) {
			return errors.New("it changed since the sandbox was planned")
		}
		name := emptyFileName
		if m.Mode == ProtectHideDir {
			name = emptyDirName
		}
		if tree, err = empty.clone(name); err != nil {
			return err
		}
	case ProtectPin, ProtectReadOnly, ProtectWrite:
		if mode == unix.S_IFLNK || (m.Mode == ProtectPin && mode != unix.S_IFDIR) ||
			(m.Mode == ProtectWrite && mode != unix.S_IFDIR && mode != unix.S_IFREG) {
			return errors.New("it changed since the sandbox was planned")
		}
		if tree, err = unix.OpenTree(fd, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH); err != nil {
			return fmt.Errorf("cloning: %w", err)
		}
		if m.Mode == ProtectReadOnly {
			if err := unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
				unix.Close(tree)
				return fmt.Errorf("making it read-only: %w", err)
			}
		}
	default:
		return fmt.Errorf("unknown mode %q", m.Mode)
	}
	defer unix.Close(tree)
	if err := unix.MoveMount(tree, "", fd, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH); err != nil {
		return fmt.Errorf("mounting: %w", err)
	}
	return nil
}

// recordReservations adds rels to the record p of a workspace's
// reservations (under the plan lock).
func recordReservations(p string, rels []string) error {
	if len(rels) == 0 {
		return nil
	}
	all := readReservations(p)
	n := len(all)
	for _, r := range rels {
		if !slices.Contains(all, r) {
			all = append(all, r)
		}
	}
	if len(all) == n {
		return nil
	}
	tmp := fmt.Sprintf("%s.tmp-%d", p, os.Getpid())
	if err := os.WriteFile(tmp, []byte(strings.Join(all, "\x00")), 0o600); err != nil {
		return fmt.Errorf("recording reservations: %w", err)
	}
	if err := os.Rename(tmp, p); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("recording reservations: %w", err)
	}
	return nil
}

// readReservations returns the record p (NUL-separated paths: a name may
// hold a newline), empty when there is none.
func readReservations(p string) []string {
	b, err := os.ReadFile(p)
	if err != nil || len(b) == 0 {
		return nil
	}
	return strings.Split(string(b), "\x00")
}
