package mandate

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"syscall"
)

// AnchorName is the file, in the state directory beside DBName, recording
// which jobs enforce which approved mandate. It lives outside the
// database so that a database that is deleted, emptied or replaced cannot
// take the record of what it enforced along with it.
const AnchorName = "enforce-anchor.json"

// ErrEnforcementLost is returned (wrapped, with the job, the hash and what
// to do) when the anchor records that a job enforces a mandate and the
// database no longer shows it: every call of that job is refused until an
// operator acts (ResetAnchor, `tether mandate anchor reset JOB`).
var ErrEnforcementLost = errors.New("the job's enforced mandate is missing from the mandate database")

// anchorObserve stands for "observe mode" among a job's accepted states:
// during an undo back to observe mode, both are valid.
const anchorObserve = "observe"

// anchorFile is the on-disk format of the anchor.
type anchorFile struct {
	Version int `json:"version"`
	// Jobs maps a job to the states its database row may be in: approved
	// SHA-256 values (normally one), or anchorObserve. Two entries exist
	// only between a change's database commit and the anchor's update,
	// so that a crash between the two refuses nothing legitimate.
	Jobs map[string][]string `json:"jobs"`
}

// AnchorJob is one job's line of AnchorStatus.
type AnchorJob struct {
	Job      string   `json:"job"`
	Anchored []string `json:"anchored"` // the states the anchor accepts
	Database string   `json:"database"` // the approved SHA-256 the database enforces, or "observe"
	OK       bool     `json:"ok"`
}

func (s *Store) anchorPath() string { return filepath.Join(s.dir, AnchorName) }

// readAnchor reads the anchor; none recorded when it does not exist.
func (s *Store) readAnchor() (anchorFile, error) {
	a := anchorFile{Version: 1, Jobs: map[string][]string{}}
	data, err := os.ReadFile(s.anchorPath())
	if errors.Is(err, fs.ErrNotExist) {
		return a, nil
	}
	if err != nil {
		return a, fmt.Errorf("reading the enforcement anchor: %w", err)
	}
	if err := json.Unmarshal(data, &a); err != nil || a.Version != 1 {
		return a, fmt.Errorf("reading the enforcement anchor %s: it is not a version 1 anchor (%v); "+
			"every job's calls are refused until an operator checks the database and removes or repairs the file", s.anchorPath(), err)
	}
	if a.Jobs == nil {
		a.Jobs = map[string][]string{}
	}
	return a, nil
}

// updateAnchor changes the anchor under an exclusive flock (several
// processes share a state directory) and replaces it atomically: a
// temporary file, fsync, rename, fsync of the directory.
func (s *Store) updateAnchor(fn func(jobs map[string][]string)) error {
	lock, err := os.OpenFile(filepath.Join(s.dir, AnchorName+".lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("locking the enforcement anchor: %w", err)
	}
	defer lock.Close() // releases the flock
	for {
		err = syscall.Flock(int(lock.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("locking the enforcement anchor: %w", err)
	}
	a, err := s.readAnchor()
	if err != nil {
		return err // never overwrite an anchor we cannot read
	}
	fn(a.Jobs)
	data, err := json.MarshalIndent(a, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the enforcement anchor: %w", err)
	}
	return writeFileAtomic(s.anchorPath(), append(data, '\n'))
}

// writeFileAtomic replaces p with data durably.
func writeFileAtomic(p string, data []byte) error {
	dir := filepath.Dir(p)
	tmp, err := os.CreateTemp(dir, filepath.Base(p)+".*.tmp")
	if err != nil {
		return fmt.Errorf("writing %s: %w", p, err)
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", p, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("syncing %s: %w", p, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", p, err)
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		return fmt.Errorf("replacing %s: %w", p, err)
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("syncing %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", dir, err)
	}
	return nil
}

// enforcedState returns what the database says job enforces: the
// approved SHA-256 of its active version, or anchorObserve.
func (s *Store) enforcedState(ctx context.Context, q querier, job string) (string, error) {
	j, err := s.job(ctx, q, job)
	if errors.Is(err, ErrUnknownJob) {
		return anchorObserve, nil
	}
	if err != nil {
		return "", err
	}
	if j.mode != "enforce" || !j.active.Valid {
		return anchorObserve, nil
	}
	var sum string
	err = q.QueryRowContext(ctx, `SELECT a.sha256 FROM approvals a JOIN versions v ON v.job = a.job AND v.version = a.version
		WHERE a.job = ? AND a.version = ? AND a.action = 'approve' AND v.status = 'approved' ORDER BY a.id DESC LIMIT 1`,
		job, j.active.Int64).Scan(&sum)
	if errors.Is(err, sql.ErrNoRows) {
		return "missing", nil
	}
	if err != nil {
		return "", fmt.Errorf("reading the approval of %s v%d: %w", job, j.active.Int64, err)
	}
	return sum, nil
}

// checkAnchor returns ErrEnforcementLost (wrapped, with a message a
// person can act on) when the anchor records that job enforces a mandate
// the database does not show, and any error reading either: the caller
// fails closed on every error.
func (s *Store) checkAnchor(ctx context.Context, job string) error {
	a, err := s.readAnchor()
	if err != nil {
		return err
	}
	accepted, ok := a.Jobs[job]
	if !ok {
		return nil
	}
	state, err := s.enforcedState(ctx, s.db, job)
	if err != nil {
		return fmt.Errorf("checking job %s against the enforcement anchor: %w", job, err)
	}
	if slices.Contains(accepted, state) {
		return nil
	}
	have := "observe mode, with no mandate"
	if state != anchorObserve {
		have = "a mandate with SHA-256 " + short(state)
	}
	return fmt.Errorf("%w: job %s enforces the approved mandate %s (recorded in %s), but %s shows %s: "+
		"the database was deleted, emptied or replaced. Every call of %s is refused until an operator checks "+
		"the database (restore it from a backup) or accepts it as it is with `tether mandate anchor reset %s`",
		ErrEnforcementLost, job, shortList(accepted), s.anchorPath(), filepath.Join(s.dir, DBName), have, job, job)
}

func shortList(states []string) string {
	out := make([]string, len(states))
	for i, x := range states {
		out[i] = short(x)
	}
	if len(out) == 1 {
		return "sha256 " + out[0]
	}
	return fmt.Sprintf("sha256 one of %v", out)
}

// anchorChange records in the anchor, before a database change that moves
// job from one enforced state to another commits, that both are valid; the
// returned function, called with the transaction's outcome, settles the
// anchor on the state that holds. The change must fail when prepare does:
// an enforcement the anchor does not know could later be lost silently.
func (s *Store) anchorChange(job, from, to string) (settle func(committed bool), err error) {
	var before []string
	var had bool
	err = s.updateAnchor(func(jobs map[string][]string) {
		before, had = jobs[job]
		acc := slices.Clone(before)
		if !had {
			acc = []string{from}
		}
		for _, x := range []string{from, to} {
			if !slices.Contains(acc, x) {
				acc = append(acc, x)
			}
		}
		jobs[job] = acc
	})
	if err != nil {
		return nil, fmt.Errorf("recording the change of %s in the enforcement anchor: %w", job, err)
	}
	return func(committed bool) {
		err := s.updateAnchor(func(jobs map[string][]string) {
			final := to
			if !committed {
				if had {
					jobs[job] = before
				} else {
					delete(jobs, job)
				}
				return
			}
			if final == anchorObserve {
				delete(jobs, job) // observe mode: nothing left to lose
			} else {
				jobs[job] = []string{final}
			}
		})
		if err != nil {
			// Safe: the anchor still accepts both states.
			s.log.Error("settling the enforcement anchor", "job", job, "err", err)
		}
	}, nil
}

// AnchorStatus compares the anchor with the database, job by job.
func (s *Store) AnchorStatus(ctx context.Context) ([]AnchorJob, error) {
	a, err := s.readAnchor()
	if err != nil {
		return nil, err
	}
	jobs, err := s.Jobs(ctx)
	if err != nil {
		return nil, err
	}
	names := slices.Collect(maps.Keys(a.Jobs))
	for _, j := range jobs {
		if !slices.Contains(names, j.Name) && j.Mode == "enforce" {
			names = append(names, j.Name)
		}
	}
	slices.Sort(names)
	var out []AnchorJob
	for _, name := range names {
		state, err := s.enforcedState(ctx, s.db, name)
		if err != nil {
			return nil, err
		}
		acc, anchored := a.Jobs[name]
		out = append(out, AnchorJob{Job: name, Anchored: acc, Database: state,
			OK: slices.Contains(acc, state) || (!anchored && state == anchorObserve)})
	}
	return out, nil
}

// ResetAnchor is the operator's acknowledgement that the database is
// right for job as it is: the anchor then records what the database
// enforces (or nothing, in observe mode), and the job's calls run under
// that again. It is recorded in the store's audit table.
func (s *Store) ResetAnchor(ctx context.Context, job, by string) (AnchorJob, error) {
	if by == "" {
		by = "unknown"
	}
	state, err := s.enforcedState(ctx, s.db, job)
	if err != nil {
		return AnchorJob{}, err
	}
	var before []string
	if err := s.updateAnchor(func(jobs map[string][]string) {
		before = jobs[job]
		if state == anchorObserve {
			delete(jobs, job)
		} else {
			jobs[job] = []string{state}
		}
	}); err != nil {
		return AnchorJob{}, err
	}
	res := AnchorJob{Job: job, Database: state, OK: true}
	if state != anchorObserve {
		res.Anchored = []string{state}
	}
	err = s.tx(ctx, func(tx *sql.Tx) error {
		if err := s.ensureJob(ctx, tx, job); err != nil {
			return err
		}
		return s.audit(ctx, tx, job, by, "anchor-reset", fmt.Sprintf("anchor %v -> %s", before, state))
	})
	return res, err
}
