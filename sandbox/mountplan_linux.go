package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// The mount plan of an enforced mandate (Landlock.ReadOnlyWorkspace,
// docs/landlock.md "The mount plan"). Landlock has no right for chmod,
// chown, utimensat or the xattr calls, and a seccomp filter cannot check
// the path they name without a race; a read-only mount refuses them
// (EROFS) whatever the path and however it was computed. So the workspace
// is mounted read-only and each write rule inside it is bound read-write
// onto itself, from a descriptor opened without following symlinks, like
// a protected path (mountOne, ProtectWrite). The protected paths are
// mounted after the write rules above them, so they stay read-only inside
// a write tree.

// planWritable adds the mount plan to pr, the workspace's protection,
// when cfg asks for it: a ProtectWrite mount for each of the Landlock
// policy's Trees (created first when missing) and regular Files inside
// the workspace, and readOnly. A rule with a symbolic link on its path,
// one that is not a directory or regular file, and one inside a hidden
// path is not bound: it stays read-only (the Landlock rule is refused by
// the trampoline too). A tree that is the workspace itself leaves the
// workspace writable: there is nothing to seal.
func (pr *protection) planWritable(cfg Config) error {
	if cfg.Landlock == nil || !cfg.Landlock.ReadOnlyWorkspace {
		return nil
	}
	wsMount := filepath.Clean(pr.wsMount)
	inside := func(p string) (string, bool) {
		p = filepath.Clean(p)
		if p == wsMount {
			return ".", true
		}
		rel, ok := strings.CutPrefix(p, wsMount+"/")
		return rel, ok
	}
	hidden := func(rel string) bool {
		for _, m := range pr.mounts {
			if (m.Mode == ProtectHideDir || m.Mode == ProtectHideFile) && within(rel, m.Path) {
				return true
			}
		}
		return false
	}
	type rule struct {
		rel  string
		tree bool
	}
	var rules []rule
	for _, p := range cfg.Landlock.Trees {
		if rel, ok := inside(p); ok {
			if rel == "." {
				return nil
			}
			rules = append(rules, rule{rel, true})
		}
	}
	for _, p := range cfg.Landlock.Files {
		if rel, ok := inside(p); ok && rel != "." {
			rules = append(rules, rule{rel, false})
		}
	}
	// Under the workspace's lock, as the maker's removal is: a write tree
	// this sandbox binds (made now, or by another sandbox under the plan)
	// is never removed while it lives.
	lock, err := lockFile(filepath.Join(pr.records, pr.key+".lock"), unix.LOCK_EX)
	if err != nil {
		return err
	}
	defer lock.Close()
	if pr.planHold, err = lockFile(filepath.Join(pr.records, pr.key+".plan"), unix.LOCK_SH); err != nil {
		return err
	}
	root, err := unix.Open(pr.ws, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("opening workspace %s: %w", pr.ws, err)
	}
	defer unix.Close(root)
	var writes []ProtectMount
	for _, r := range rules {
		if hidden(r.rel) || slices.ContainsFunc(writes, func(m ProtectMount) bool { return m.Path == r.rel }) {
			continue
		}
		if r.tree {
			// The bind needs a target; Landlock a file to attach the
			// rule to. A symlink on the way stops it (the check below).
			made, err := mkdirBeneath(root, r.rel, 0o755)
			var dirs []madeDir
			for _, rel := range made {
				if fd, err := openBeneath(root, rel); err == nil {
					var st unix.Stat_t
					if unix.Fstat(fd, &st) == nil {
						dirs = append(dirs, madeDir{Rel: rel, Dev: st.Dev, Ino: st.Ino})
					}
					unix.Close(fd)
				}
			}
			if rerr := pr.recordMade(dirs); rerr != nil {
				return rerr
			}
			if err != nil {
				return fmt.Errorf("creating the mandate's write tree %s: %w", r.rel, err)
			}
		}
		fd, err := openBeneath(root, r.rel)
		if err != nil {
			continue // missing, or a symlink on the way (ELOOP): not bound
		}
		m, err := fdMode(fd)
		unix.Close(fd)
		if err == nil && (m == unix.S_IFREG || (r.tree && m == unix.S_IFDIR)) {
			writes = append(writes, ProtectMount{Path: r.rel, Mode: ProtectWrite})
		}
	}
	// Shallower first, and a write rule before a protected path at the
	// same depth: each mount is cloned from what is beneath it, so a
	// protected path inside a write tree is mounted onto the tree's bind,
	// and a write tree inside a read-only protected path is cloned from
	// it read-only.
	pr.mounts = append(writes, pr.mounts...)
	slices.SortStableFunc(pr.mounts, func(a, b ProtectMount) int {
		return strings.Count(a.Path, "/") - strings.Count(b.Path, "/")
	})
	pr.readOnly = true
	return nil
}

// madeDir is a directory the mount plan created: where
// (workspace-relative), and which (its device and inode).
type madeDir struct {
	Rel      string `json:"rel"`
	Dev, Ino uint64
}

// recordMade adds dirs to the workspace's record of the directories its
// mount plan created (<key>.made beside its reservations, hidden from
// every sandbox as they are), which the last sandbox under the plan
// removes (leavePlan): the one that made a directory may end while
// another that binds it lives. Preconditions: the workspace's lock is
// held.
func (pr *protection) recordMade(dirs []madeDir) error {
	if len(dirs) == 0 {
		return nil
	}
	p := filepath.Join(pr.records, pr.key+".made")
	all := append(readMade(p), dirs...)
	b, err := json.Marshal(all)
	if err != nil {
		return err
	}
	tmp := fmt.Sprintf("%s.tmp-%d", p, os.Getpid())
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("recording the mount plan's directories: %w", err)
	}
	if err := os.Rename(tmp, p); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("recording the mount plan's directories: %w", err)
	}
	return nil
}

// readMade reads a record of recordMade; a missing or unreadable one is
// empty (its directories stay, as they always did).
func readMade(p string) []madeDir {
	var dirs []madeDir
	if b, err := os.ReadFile(p); err == nil {
		_ = json.Unmarshal(b, &dirs)
	}
	return dirs
}

// leavePlan drops this sandbox's hold on the workspace's mount plan
// (<key>.plan, held shared by every sandbox under the plan) and, when no
// other sandbox holds it, removes the directories the plan created
// (removeMade). Sandboxes of the workspace without the plan (a pooled or
// plain one) do not keep them: they bind no write tree.
// Preconditions: the workspace's lock (<key>.lock) is held.
func (pr *protection) leavePlan() {
	if pr.planHold == nil {
		return
	}
	defer pr.planHold.Close()
	if unix.Flock(int(pr.planHold.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil {
		removeMade(pr.records, pr.key, pr.ws)
	}
	pr.planHold = nil
}

// removeMade removes, deepest first, the directories recorded in
// dir/<key>.made (recordMade) that are still empty in the workspace ws,
// then the record: a write tree a command filled stays, and so do its
// parents. Each is removed from its parent opened without following
// symlinks (openBeneath), and only when the entry there is still the
// directory the plan made (its identity), never anything else. A
// sandbox of the workspace without the plan may still run and swap the
// entry between the check and the removal: rmdir removes only an empty
// directory, so the most it loses is an empty directory of its own.
// Best-effort: a directory that cannot be removed stays, as it always
// did. Preconditions: the workspace's lock is held and no sandbox is
// under its plan.
func removeMade(dir, key, ws string) {
	p := filepath.Join(dir, key+".made")
	made := readMade(p)
	defer os.Remove(p)
	if len(made) == 0 {
		return
	}
	root, err := unix.Open(ws, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	defer unix.Close(root)
	// Recorded shallowest first per tree: deepest first is the reverse.
	for i := len(made) - 1; i >= 0; i-- {
		d := made[i]
		parent, name := root, d.Rel
		if k := strings.LastIndexByte(d.Rel, '/'); k >= 0 {
			fd, err := openBeneath(root, d.Rel[:k])
			if err != nil {
				continue
			}
			parent, name = fd, d.Rel[k+1:]
		}
		var st unix.Stat_t
		// Gone or replaced: not the plan's. Not empty (ENOTEMPTY): it
		// stays, and so do its parents (their rmdir fails likewise).
		if name != "" && name != "." && name != ".." &&
			unix.Fstatat(parent, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR &&
			st.Dev == d.Dev && st.Ino == d.Ino {
			_ = unix.Unlinkat(parent, name, unix.AT_REMOVEDIR)
		}
		if parent != root {
			unix.Close(parent)
		}
	}
}

// seal makes the tree whose root is ws read-only, after its mounts: the
// tree's own mount and each pin outside every write rule (a pin is a bind
// of its own, read-write, which the tree's flag does not reach). The
// write rules' binds and what is mounted in them keep their own flags.
func (t joinTree) seal(ws int) error {
	var writes []string
	for _, m := range t.Mounts {
		if m.Mode == ProtectWrite {
			writes = append(writes, m.Path)
		}
	}
	ro := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	for _, m := range t.Mounts {
		if m.Mode != ProtectPin || slices.ContainsFunc(writes, func(w string) bool { return within(m.Path, w) }) {
			continue
		}
		fd, err := openBeneath(ws, m.Path)
		if err != nil {
			return fmt.Errorf("%s: %w", m.Path, err)
		}
		err = unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH, ro)
		unix.Close(fd)
		if err != nil {
			return fmt.Errorf("%s: %w", m.Path, err)
		}
	}
	return unix.MountSetattr(ws, "", unix.AT_EMPTY_PATH, ro)
}

// mountPlanned reports whether c's sandbox gets the mount plan's sealed
// workspace, whose refusals its gate reports.
func (c Config) mountPlanned() bool {
	return c.Landlock != nil && c.Landlock.ReadOnlyWorkspace && c.Workspace != ""
}

// sealedAt reports whether p (absolute, inside the sandbox) lies where
// cfg's mount plan keeps the workspace read-only: inside the workspace
// and outside each write rule (beneath a tree, or the file itself). A
// write rule the plan left unbound (a symbolic link on its path) counts
// as a write rule here: refusals beneath it are not reported.
func (c Config) sealedAt(p string) bool {
	p = filepath.Clean(p)
	if c.Landlock == nil || !within(p, c.workspaceMount()) {
		return false
	}
	for _, w := range c.Landlock.Trees {
		if within(p, w) {
			return false
		}
	}
	for _, f := range c.Landlock.Files { // the file itself only
		if p == filepath.Clean(f) {
			return false
		}
	}
	return true
}

// refuseSealed records that the creating call n (the creation gate's:
// open with O_CREAT, mkdir, mknod, symlink, link, rename), whose names
// were read as names, failed with EROFS (or, a rename or link out of or
// into a write tree, EXDEV) where the mount plan keeps the workspace
// read-only: each name that lies there is reported in
// Result.PathsRefused with the blocker "mount.read_only", as a Landlock
// refusal is. The names are resolved as observation resolves them (the
// caller's working directory or directory descriptor, through /proc):
// the report names what the caller asked for, which the caller controls;
// the refusal itself is the kernel's. A link out of the sealed part into
// a write tree (EXDEV: it would give a sealed file a writable name)
// reports its existing file, from (linkFrom).
func (g *execGateRun) refuseSealed(fd int, n *seccompNotif, call createCall, names []string, from string, errno unix.Errno) {
	var refused []PathRefused
	add := func(raw string, err error) {
		if err != nil {
			return
		}
		if p := filepath.Clean(raw); g.sealed(p) {
			refused = append(refused, PathRefused{Path: p, Op: call.op, Blockers: []string{"mount.read_only"}})
		}
	}
	for i, s := range names {
		dirfd := int32(unix.AT_FDCWD)
		if d := call.dirfds[i]; d >= 0 {
			dirfd = int32(n.args[d])
		}
		add(resolveName(int(n.pid), dirfd, s))
	}
	if call.from >= 0 && errno == unix.EXDEV {
		if dirfd, name, ok := linkFrom(n, call, from); ok {
			add(resolveName(int(n.pid), dirfd, name))
		}
	}
	g.keepSealed(fd, n, refused)
}

// linkFrom returns where the existing file of the link n (call's, from
// its name from) is to be resolved: a directory descriptor and a name,
// "." for the descriptor's own file (AT_EMPTY_PATH with an empty name, or
// /proc/self/fd/N followed with AT_SYMLINK_FOLLOW, which names the file
// of the caller's descriptor N). false when it names nothing.
func linkFrom(n *seccompNotif, call createCall, from string) (int32, string, bool) {
	dirfd := int32(unix.AT_FDCWD)
	if call.fromDir >= 0 {
		dirfd = int32(n.args[call.fromDir])
	}
	var flags uint64
	if call.flags >= 0 {
		flags = n.args[call.flags]
	}
	switch {
	case from == "":
		return dirfd, ".", flags&unix.AT_EMPTY_PATH != 0 && dirfd >= 0
	case flags&unix.AT_SYMLINK_FOLLOW != 0:
		for _, self := range []string{"/proc/self/fd/", "/proc/thread-self/fd/"} {
			if rest, ok := strings.CutPrefix(from, self); ok {
				fdn, err := strconv.ParseInt(rest, 10, 32)
				return int32(fdn), ".", err == nil && fdn >= 0
			}
		}
	}
	return dirfd, from, true
}

// keepSealed records refused, the mount plan's refusals of the call n,
// unless n is no longer waiting (the names read were then perhaps another
// process's).
func (g *execGateRun) keepSealed(fd int, n *seccompNotif, refused []PathRefused) {
	if len(refused) == 0 || !idValid(fd, n.id) {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, r := range refused {
		if k := len(g.sealedRefused); k > 0 && g.sealedRefused[k-1].Path == r.Path && g.sealedRefused[k-1].Op == r.Op {
			continue // the same call retried
		}
		g.sealedRefused = appendBounded(g.sealedRefused, &g.sealedBase, maxPathsRefused, r)
	}
}

// sealedSince returns the refusals keepSealed recorded after m, one per
// path and operation, at most maxPathsRefused.
func (g *execGateRun) sealedSince(m gateMark) []PathRefused {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []PathRefused
	type key struct{ path, op string }
	seen := map[key]bool{}
	for _, r := range g.sealedRefused[min(max(m.sealed-g.sealedBase, 0), len(g.sealedRefused)):] {
		if k := (key{r.Path, r.Op}); !seen[k] && len(out) < maxPathsRefused {
			seen[k] = true
			out = append(out, PathRefused{Path: r.Path, Op: r.Op, Blockers: slices.Clone(r.Blockers)})
		}
	}
	return out
}
