package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"

	"github.com/tether-dev/tether/internal/protect"
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
// The binds are made by tether itself, from a thread that joins the
// sandbox's mount namespace after libcontainer has built it and before any
// program of the sandbox runs: each path is opened with openat2(
// RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS) from the workspace mount's root and
// bound from that descriptor (open_tree, move_mount), so nothing is
// followed and nothing can be swapped in between. The clones come from the
// sandbox's own idmapped workspace mount and keep its id mapping.
//
// Reservations live in the workspace, which every tether on the host
// shares whatever its state root, so their records do too: they are kept
// in reservationDir (root's, host-wide), keyed by the workspace's device
// and inode. Each sandbox of the workspace holds <key>.hold shared-locked
// for its life; planning and leaving take <key>.lock. The last one out (it
// gets the hold lock exclusively) or GC of any state root (for holders
// that died, whose locks the kernel dropped) removes the placeholders that
// are still what tether makes; <key>.ws records the workspace's path and
// <key>.res the nested reservations. Records an older tether left under
// <state root>/protect are still collected by GC.

// reservedTarget is where reservation symlinks point: procfs lets nobody
// create anything there, so the link never resolves.
const reservedTarget = "/proc/tether-reserved"

// commondirPlaceholder is the content of a reserved .git/commondir.
const commondirPlaceholder = ".\n"

const protectDir = "protect" // under the state root: the empty file, and older tethers' records

// reservationDir holds the reservation records of every workspace on the
// host (see above). It must be a real directory owned by root that nobody
// else may write, as must its parent (checkedReservationDir). A variable
// only so that a test can point it elsewhere.
var reservationDir = "/run/tether/protect"

// ErrUnsafeReservationDir: reservationDir (or its parent) is not a
// directory only root controls, so its locks and records cannot be
// trusted; tether refuses to reserve protected paths rather than guess.
var ErrUnsafeReservationDir = errors.New("the protected-path reservation directory is not root's own")

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
)

// protectMounts returns nothing: protected paths are mounted by tether
// from descriptors (protection.apply), not by libcontainer from paths. The
// hook keeps Spec's mount list the one place that says what a sandbox
// sees.
func (p Placement) protectMounts() []specs.Mount { return nil }

// protection is the protected-path plan of one sandbox and its hold on
// the workspace's reservations.
type protection struct {
	mounts    []ProtectMount
	wsMount   string // the workspace's path inside the sandbox
	emptyFile string // the empty read-only file mounted onto reservations
	emptyDir  string // the empty read-only directory mounted onto hidden directories
	records   string // reservationDir
	key       string
	ws        string
	// reserved are the reservations this plan made or shares, recorded
	// in <key>.res (reservationDir) for whoever removes them.
	reserved []string
	// gitDirs are the git directories frozen (workspace-relative), and
	// gitDirIDs their identities: the creation gate lets git write a HEAD
	// in them (createGate).
	gitDirs   []string
	gitDirIDs map[fileID]bool
	// nestedTruncated: the walk for nested repositories stopped at its
	// bound (protect_nested_linux.go).
	nestedTruncated bool
	// hold is <key>.hold (reservationDir), flocked shared for the sandbox's life:
	// the kernel drops the lock when its holder dies, so whoever takes it
	// exclusively knows no sandbox holds the reservations any more.
	hold *os.File
}

// protectFor plans the protected paths of a sandbox (nil without a
// workspace). Rootless tether cannot join the sandbox's mount namespace to
// make the binds: it says so in notEnforced ("protected-paths").
func protectFor(stateRoot string, cfg Config, rootless bool, notEnforced *[]string) (*protection, error) {
	for _, b := range cfg.Binds {
		if protect.Overlaps(filepath.Clean(b.Source), filepath.Clean(stateRoot)) {
			return nil, fmt.Errorf("%w: the bind %s overlaps the sandbox state root %s", ErrUnsafeWorkspace, b.Source, stateRoot)
		}
	}
	if cfg.Workspace == "" {
		return nil, nil
	}
	own := append([]string{stateRoot}, cfg.Hide...)
	if !rootless {
		// Whoever could write the records could have a tether remove
		// another's live reservations. Rootless tether does not reserve.
		own = append(own, reservationDir)
	}
	hide, err := hiddenIn(cfg.Workspace, own)
	if err != nil {
		return nil, err
	}
	if rootless {
		if len(hide) > 0 {
			// Without the mounts, a command could write them (or rename
			// their parents away and plant new ones): refuse.
			return nil, fmt.Errorf("%w: tether's own %s lies inside the workspace, and tether without root cannot hide it from the sandbox; move the state directory or configuration out of the workspace (state_dir, $TETHER_STATE_DIR, --config) or use a narrower workspace",
				ErrUnsafeWorkspace, path.Join(cfg.Workspace, hide[0]))
		}
		*notEnforced = append(*notEnforced, "protected-paths")
		return nil, nil
	}
	pr, err := planProtection(stateRoot, cfg.Workspace, cfg.workspaceMount(), isHome(cfg.Workspace), hide...)
	if err == nil && pr.nestedTruncated {
		*notEnforced = append(*notEnforced, "nested-repos")
	}
	return pr, err
}

// isHome reports whether ws is a home directory: tether's own ($HOME) or
// its owner's (the password database). Only there do shell startup files
// and ssh's and git's per-user files run anything (protect.Entry.Home).
func isHome(ws string) bool {
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
	if same(ws, os.Getenv("HOME")) {
		return true
	}
	var st unix.Stat_t
	if unix.Stat(ws, &st) != nil {
		return false
	}
	u, err := user.LookupId(strconv.FormatUint(uint64(st.Uid), 10))
	return err == nil && same(ws, u.HomeDir)
}

// hiddenIn returns the paths of own (tether's config and state, absolute)
// that lie inside the workspace ws, relative to it. A workspace that is
// one of them or lies inside one is refused: it cannot be hidden from
// itself.
func hiddenIn(ws string, own []string) ([]string, error) {
	var rels []string
	for _, h := range own {
		if h == "" {
			continue
		}
		h = filepath.Clean(h)
		switch {
		case h == ws || strings.HasPrefix(ws, strings.TrimSuffix(h, "/")+"/"):
			return nil, fmt.Errorf("%w: the workspace %s lies inside tether's own configuration or state %s", ErrUnsafeWorkspace, ws, h)
		case strings.HasPrefix(h, ws+"/"):
			if rel := h[len(ws)+1:]; !slices.Contains(rels, rel) {
				rels = append(rels, rel)
			}
		}
	}
	return rels, nil
}

// sourceOwners returns the on-disk owners of the workspace and the binds'
// sources (Placement.Owners).
func sourceOwners(cfg Config) (map[string]Owner, error) {
	owners := map[string]Owner{}
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
		owners[src] = Owner{UID: int(st.Uid), GID: int(st.Gid)}
	}
	return owners, nil
}

// openBeneath opens rel under dir without following any symlink, the last
// component included (it is returned as itself, O_PATH).
func openBeneath(dir int, rel string) (int, error) {
	return unix.Openat2(dir, rel, &unix.OpenHow{
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

// isReservation reports whether fd (an O_PATH symlink) is a reservation.
func isReservation(fd int) bool {
	buf := make([]byte, len(reservedTarget)+1)
	n, err := unix.Readlinkat(fd, "", buf)
	return err == nil && string(buf[:n]) == reservedTarget
}

// planProtection works out the protected-path mounts of a sandbox id whose
// workspace ws appears at wsMount, and makes its reservations on the host;
// home says whether ws is a home directory (protect.Entry.Home), hide are
// the workspace-relative paths of tether's own config and state
// (Config.Hide). The caller must call release when the sandbox is gone.
func planProtection(stateRoot, ws, wsMount string, home bool, hide ...string) (_ *protection, err error) {
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
	pr := &protection{wsMount: wsMount, records: records, ws: ws,
		key: strconv.FormatUint(st.Dev, 10) + "-" + strconv.FormatUint(st.Ino, 10)}
	own := filepath.Join(stateRoot, protectDir)
	if err := os.MkdirAll(own, 0o700); err != nil {
		return nil, fmt.Errorf("creating protected-path state: %w", err)
	}
	if pr.emptyFile, err = ensureEmptyFile(own); err != nil {
		return nil, err
	}
	if pr.emptyDir, err = ensureEmptyDir(stateRoot); err != nil {
		return nil, err
	}
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
			if m, _ := fdMode(fd); m == unix.S_IFLNK && isReservation(fd) {
				add(rel, ProtectReserve) // another sandbox's, shared
				pr.reserved = append(pr.reserved, rel)
				return nil
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
		} else if err := unix.Symlinkat(reservedTarget, pfd, name); errors.Is(err, unix.EROFS) {
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
			reserved := m == unix.S_IFLNK && isReservation(fd)
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
				return true, fmt.Errorf("%w: %s", ErrUnsafeWorkspace, anc)
			default:
				// Nothing can be created under it while it stays.
				add(anc, ProtectReadOnly)
				return true, nil
			}
		}
		return false, nil
	}
	// protectEntry freezes rel (of kind k): pins the directories on the
	// way, then binds, reserves or refuses rel itself.
	var protectEntry func(rel string, k protect.Kind, mayReserve bool) error
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
			if isReservation(fd) {
				add(rel, ProtectReserve)
				return nil
			}
			return fmt.Errorf("%w: %s", ErrUnsafeWorkspace, rel)
		}
		if k != protect.Repo {
			add(rel, ProtectReadOnly)
			return nil
		}
		// A git directory: pin it, freeze its control surface.
		gitDir := rel
		if m != unix.S_IFDIR {
			add(rel, ProtectReadOnly)
			if m != unix.S_IFREG {
				return nil
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
		if err := mkdirBeneath(root, rel); err != nil {
			return nil, err
		}
	}
	for _, e := range protect.Workspace() {
		if err := protectEntry(e.Path, e.Kind, home || !e.Home); err != nil {
			return nil, err
		}
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
		reserved := m == unix.S_IFLNK && isReservation(fd)
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
	fd, err := unix.Openat2(dir, rel, &unix.OpenHow{
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

// ensureEmptyFile returns dir/empty, an empty read-only file.
func ensureEmptyFile(dir string) (string, error) {
	p := filepath.Join(dir, "empty")
	if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() && fi.Size() == 0 {
		return p, nil
	}
	// A unique name: set-ups of one process run concurrently (a pool).
	f, err := os.CreateTemp(dir, "empty.tmp-*")
	if err != nil {
		return "", fmt.Errorf("creating reservation file: %w", err)
	}
	tmp := f.Name()
	err = f.Chmod(0o444)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, p)
	}
	if err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("creating reservation file: %w", err)
	}
	return p, nil
}

// mkdirBeneath creates the missing directories of rel under the directory
// root (mode 0700, and as root owned like their parent), each inside its
// opened parent and never through a symlink. What exists is left as it
// is: the plan checks it.
func mkdirBeneath(root int, rel string) error {
	parts := strings.Split(rel, "/")
	for i := range parts {
		prefix := strings.Join(parts[:i+1], "/")
		fd, err := openBeneath(root, prefix)
		if err == nil {
			m, _ := fdMode(fd)
			unix.Close(fd)
			if m != unix.S_IFDIR {
				return nil // a file, a symlink or a reservation: the plan decides
			}
			continue
		}
		if !errors.Is(err, unix.ENOENT) {
			return unsafePath(prefix, err)
		}
		pfd := root
		if i > 0 {
			if pfd, err = openBeneath(root, strings.Join(parts[:i], "/")); err != nil {
				return unsafePath(prefix, err)
			}
		}
		err = unix.Mkdirat(pfd, parts[i], 0o700)
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
			return fmt.Errorf("creating %s: %w", prefix, err)
		}
	}
	return nil
}

// ensureEmptyDir returns dir/hide-empty, an empty directory nobody may
// write (mounted read-only besides). It is not under protectDir, whose
// directories are workspaces' records.
func ensureEmptyDir(dir string) (string, error) {
	p := filepath.Join(dir, "hide-empty")
	if err := os.Mkdir(p, 0o555); err != nil && !errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("creating the hiding directory: %w", err)
	}
	fi, err := os.Lstat(p)
	if err != nil || !fi.IsDir() {
		return "", fmt.Errorf("creating the hiding directory: %s is not a directory", p)
	}
	if entries, err := os.ReadDir(p); err != nil || len(entries) > 0 {
		return "", fmt.Errorf("the hiding directory %s is not empty", p)
	}
	return p, nil
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

// checkedReservationDir creates reservationDir (0700, its parent 0711) if
// they are missing and returns it once it and its parent are real
// directories (not symlinks) owned by root that neither group nor others
// may write: its locks decide who removes reservations from workspaces,
// and anyone who could replace them could make a tether remove another's
// live reservations.
func checkedReservationDir() (string, error) {
	return checkedRootDir(reservationDir, "protected-path reservation directory", ErrUnsafeReservationDir)
}

// checkedRootDir creates dir (0700) and its parent (0711) if they are
// missing and returns dir once both are real directories (not symlinks)
// owned by root that neither group nor others may write: host-wide locks
// and records live there, which only root may replace. what names dir in
// errors; a directory that fails the check is an error wrapping unsafe.
func checkedRootDir(dir, what string, unsafe error) (string, error) {
	dir = filepath.Clean(dir)
	// The parent is /run/tether, root's default state root too: made as
	// setUp makes a state root (0711), whichever tether comes first.
	for _, d := range []struct {
		p    string
		mode os.FileMode
	}{{filepath.Dir(dir), 0o711}, {dir, 0o700}} {
		p := d.p
		if err := os.Mkdir(p, d.mode); err != nil && !errors.Is(err, os.ErrExist) {
			return "", fmt.Errorf("creating the %s %s: %w", what, p, err)
		}
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			return "", fmt.Errorf("checking the %s %s: %w", what, p, err)
		}
		if st.Mode&unix.S_IFMT != unix.S_IFDIR || st.Uid != 0 || st.Mode&0o022 != 0 {
			return "", fmt.Errorf("%w: %s must be a directory (not a symlink) owned by root that only root may write; it has mode %#o and owner %d: remove it or fix it",
				unsafe, p, st.Mode, st.Uid)
		}
	}
	return dir, nil
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

// release drops this sandbox's hold on the workspace's reservations and,
// if no other sandbox holds them, removes them.
func (pr *protection) release() error {
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
	if unix.Flock(int(pr.hold.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil {
		return nil // another sandbox holds them
	}
	if err := removePlaceholders(pr.records, pr.ws, pr.key); err != nil {
		return err
	}
	removeRecords(pr.records, pr.key)
	return nil
}

// removeRecords removes the records of key in dir. The caller holds its
// lock and hold exclusively; the lock goes last, still held, and
// lockFile's waiters see it gone and start over.
func removeRecords(dir, key string) {
	for _, ext := range []string{".ws", ".res", ".hold", ".lock"} {
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
	var dirs, guards []string
	if os.Geteuid() == 0 {
		// Rootless tether does not reserve, and cannot write there.
		host, err := checkedReservationDir()
		if err != nil {
			// Without the host-wide locks nothing says whether a live
			// sandbox holds an older record's reservations: keep them.
			return []error{err}
		}
		dirs, guards = append(dirs, host), []string{host}
	}
	dirs = append(dirs, filepath.Join(stateRoot, protectDir))
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
			if err := gcReservation(dir, key, caches, guards); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errs
}

// gcReservation removes the reservations recorded in dir under key if
// nobody holds them there nor in any of guards (the host-wide records,
// for an older tether's record of the same workspace).
func gcReservation(dir, key string, caches bool, guards []string) error {
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
	if err := removePlaceholders(dir, string(ws), key); err != nil {
		return err
	}
	if caches {
		removeRecords(dir, key)
	}
	return nil
}

// removePlaceholders removes, deepest first, every reservation in the
// workspace ws (if it is still the directory key names): each protected
// path, each directory on the way to one, and each path recorded in
// dir/<key>.res (nested repositories'), that is a link to reservedTarget
// or a commondir holding exactly commondirPlaceholder with mode 0444.
// Anything else there is a person's and is kept.
func removePlaceholders(dir, ws, key string) error {
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
		if isPlaceholder(pfd, name) {
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

// isPlaceholder reports whether name in dir is a reservation.
func isPlaceholder(dir int, name string) bool {
	var st unix.Stat_t
	if err := unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return false
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFLNK:
		buf := make([]byte, len(reservedTarget)+1)
		n, err := unix.Readlinkat(dir, name, buf)
		return err == nil && string(buf[:n]) == reservedTarget
	case unix.S_IFREG:
		if name != "commondir" || st.Mode&0o7777 != 0o444 || st.Size != int64(len(commondirPlaceholder)) {
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
	if len(pr.mounts) == 0 {
		return nil
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
	// Reservation sources are clones of the host's empty file, made
	// before joining (a mount can only be cloned in its own namespace).
	var trees []int
	defer func() {
		for _, t := range trees {
			unix.Close(t)
		}
	}()
	for _, m := range pr.mounts {
		src := pr.emptyFile
		switch m.Mode {
		case ProtectReserve, ProtectHideFile:
		case ProtectHideDir:
			src = pr.emptyDir
		default:
			continue
		}
		t, err := unix.OpenTree(unix.AT_FDCWD, src, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
		if err != nil {
			return fmt.Errorf("protecting paths: cloning %s: %w", src, err)
		}
		trees = append(trees, t)
		if err := unix.MountSetattr(t, "", unix.AT_EMPTY_PATH, &unix.MountAttr{
			Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV | unix.MOUNT_ATTR_NOEXEC}); err != nil {
			return fmt.Errorf("protecting paths: making the reservation read-only: %w", err)
		}
	}
	if err := unix.Setns(ns, unix.CLONE_NEWNS); err != nil {
		return fmt.Errorf("protecting paths: joining the sandbox's mount namespace: %w", err)
	}
	ws, err := unix.Open(pr.wsMount, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("protecting paths: opening the workspace in the sandbox: %w", err)
	}
	defer unix.Close(ws)
	next := 0
	for _, m := range pr.mounts {
		if err := pr.mountOne(ws, m, trees, &next); err != nil {
			return fmt.Errorf("protecting %s: %w", m.Path, err)
		}
	}
	return nil
}

func (pr *protection) mountOne(ws int, m ProtectMount, trees []int, next *int) error {
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
		if mode != unix.S_IFLNK || !isReservation(fd) {
			return errors.New("the reservation changed")
		}
		tree = trees[*next]
		*next++
	case ProtectHideDir, ProtectHideFile:
		if mode == unix.S_IFLNK || (mode == unix.S_IFDIR) != (m.Mode == ProtectHideDir) {
			return errors.New("it changed since the sandbox was planned")
		}
		tree = trees[*next]
		*next++
	case ProtectPin, ProtectReadOnly:
		if mode == unix.S_IFLNK || (m.Mode == ProtectPin && mode != unix.S_IFDIR) {
			return errors.New("it changed since the sandbox was planned")
		}
		t, err := unix.OpenTree(fd, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH)
		if err != nil {
			return fmt.Errorf("cloning: %w", err)
		}
		defer unix.Close(t)
		if m.Mode == ProtectReadOnly {
			if err := unix.MountSetattr(t, "", unix.AT_EMPTY_PATH, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
				return fmt.Errorf("making it read-only: %w", err)
			}
		}
		tree = t
	default:
		return fmt.Errorf("unknown mode %q", m.Mode)
	}
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
