package runner

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"syscall"
)

// maxFingerprintEntries bounds the workspace scan of the guardrails: past
// it, changes are not seen (the counts then only reset on landed file
// mutations).
const maxFingerprintEntries = 20000

// workspaceFingerprint is a cheap summary of the workspace root: the
// number of entries, their total size and the latest status change time
// (ctime, which no one can set back: writing, creating, removing,
// renaming or chmod-ing anything moves it) over at most
// maxFingerprintEntries entries, walked in lexical order without following
// symlinks; .git/objects is skipped (a commit shows in refs and the
// index). "" when the root cannot be read.
func workspaceFingerprint(root string) string {
	var n, size int64
	var latest syscall.Timespec
	seen := 0
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if seen++; seen > maxFingerprintEntries {
			return filepath.SkipAll
		}
		if d.IsDir() && d.Name() == "objects" && filepath.Base(filepath.Dir(p)) == ".git" {
			return filepath.SkipDir
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		st, ok := info.Sys().(*syscall.Stat_t)
		if !ok {
			return nil
		}
		n++
		size += st.Size
		if st.Ctim.Sec > latest.Sec || (st.Ctim.Sec == latest.Sec && st.Ctim.Nsec > latest.Nsec) {
			latest = st.Ctim
		}
		return nil
	})
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d/%d.%09d", n, size, latest.Sec, latest.Nsec)
}
