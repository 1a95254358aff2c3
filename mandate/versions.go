package mandate

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Version statuses.
const (
	StatusPending    = "pending"
	StatusApproved   = "approved"
	StatusSuperseded = "superseded"
)

// Version is one stored mandate version.
type Version struct {
	Job        string    `json:"job"`
	Number     int       `json:"version"`
	Text       string    `json:"text"`
	SHA256     string    `json:"sha256"`
	Status     string    `json:"status"`
	Active     bool      `json:"active"`
	Source     string    `json:"source"` // "compile" or "widen d-N"
	Created    time.Time `json:"created"`
	ApprovedAt time.Time `json:"approved_at,omitzero"`
	ApprovedBy string    `json:"approved_by,omitempty"`
	// LostObservations, set by Compile, counts the job's calls that ran
	// but could not be stored as observations, and what the kernel saw
	// calls do that could not be recorded (ObserveRuntime): the version's
	// evidence is incomplete when it is not zero.
	LostObservations int `json:"lost_observations,omitempty"`
}

// Job is a job's summary.
type Job struct {
	Name           string `json:"name"`
	Mode           string `json:"mode"` // observe or enforce
	ActiveVersion  int    `json:"active_version,omitempty"`
	PendingVersion int    `json:"pending_version,omitempty"`
	// InteractiveViolation is the job's own setting (block or approve),
	// "" when it has none and the profile's applies: see ResolveViolation.
	InteractiveViolation string `json:"interactive_violation,omitempty"`
	Calls                int    `json:"calls"`
	Runs                 int    `json:"runs"`
	OpenDrift            int    `json:"open_drift"`
}

func sha(text []byte) string {
	sum := sha256.Sum256(text)
	return hex.EncodeToString(sum[:])
}

// Compile writes a new pending version from every call of job recorded in
// observe mode or allowed in enforce mode. Older pending versions become
// superseded.
func (s *Store) Compile(ctx context.Context, job string) (Version, error) {
	var v Version
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := s.job(ctx, tx, job); err != nil {
			return err
		}
		obs, err := s.observations(ctx, tx, job)
		if err != nil {
			return err
		}
		if len(obs) == 0 {
			return fmt.Errorf("compiling %s: %w", job, ErrNoObservations)
		}
		v, err = s.insertVersion(ctx, tx, job, Compile(job, obs).Marshal(), "compile")
		if err != nil {
			return err
		}
		if v.LostObservations, err = s.LostObservations(ctx, tx, job); err != nil {
			return err
		}
		return s.audit(ctx, tx, job, "cli", "compile", fmt.Sprintf("v%d pending from %d calls", v.Number, len(obs)))
	})
	return v, err
}

// Preconditions: q is the caller's transaction or the database.
func (s *Store) observations(ctx context.Context, q querier, job string) ([]Observation, error) {
	rows, err := q.QueryContext(ctx, `SELECT run, facts FROM calls WHERE job = ? AND outcome IN ('observed','allowed') ORDER BY id`, job)
	if err != nil {
		return nil, fmt.Errorf("reading observations of %s: %w", job, err)
	}
	defer rows.Close()
	var obs []Observation
	for rows.Next() {
		var o Observation
		var fj string
		if err := rows.Scan(&o.Run, &fj); err != nil {
			return nil, fmt.Errorf("reading observation: %w", err)
		}
		if err := json.Unmarshal([]byte(fj), &o.Facts); err != nil {
			return nil, fmt.Errorf("decoding observation: %w", err)
		}
		obs = append(obs, o)
	}
	return obs, rows.Err()
}

// insertVersion stores text as the job's next version, pending, and
// supersedes older pending versions.
//
// Preconditions: tx is the caller's transaction.
func (s *Store) insertVersion(ctx context.Context, tx *sql.Tx, job string, text []byte, source string) (Version, error) {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) + 1 FROM versions WHERE job = ?`, job).Scan(&n); err != nil {
		return Version{}, fmt.Errorf("numbering version: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE versions SET status = 'superseded' WHERE job = ? AND status = 'pending'`, job); err != nil {
		return Version{}, fmt.Errorf("superseding pending versions: %w", err)
	}
	now := s.stamp()
	if _, err := tx.ExecContext(ctx, `INSERT INTO versions(job, version, text, sha256, status, source, created) VALUES (?,?,?,?,?,?,?)`,
		job, n, string(text), sha(text), StatusPending, source, now); err != nil {
		return Version{}, fmt.Errorf("storing version %d: %w", n, err)
	}
	t, _ := time.Parse(time.RFC3339Nano, now)
	return Version{Job: job, Number: n, Text: string(text), SHA256: sha(text), Status: StatusPending, Source: source, Created: t}, nil
}

// Versions lists a job's versions, oldest first.
func (s *Store) Versions(ctx context.Context, job string) ([]Version, error) {
	if _, err := s.job(ctx, s.db, job); err != nil {
		return nil, err
	}
	return s.versions(ctx, s.db, job)
}

func (s *Store) versions(ctx context.Context, q querier, job string) ([]Version, error) {
	j, err := s.job(ctx, q, job)
	if err != nil {
		return nil, err
	}
	rows, err := q.QueryContext(ctx, `SELECT version, text, sha256, status, source, created, COALESCE(approved_at, ''), COALESCE(approved_by, '')
		FROM versions WHERE job = ? ORDER BY version`, job)
	if err != nil {
		return nil, fmt.Errorf("listing versions of %s: %w", job, err)
	}
	defer rows.Close()
	var out []Version
	for rows.Next() {
		v := Version{Job: job}
		var created, approvedAt string
		if err := rows.Scan(&v.Number, &v.Text, &v.SHA256, &v.Status, &v.Source, &created, &approvedAt, &v.ApprovedBy); err != nil {
			return nil, fmt.Errorf("reading version: %w", err)
		}
		v.Created, _ = time.Parse(time.RFC3339Nano, created)
		v.ApprovedAt, _ = time.Parse(time.RFC3339Nano, approvedAt)
		v.Active = j.active.Valid && int(j.active.Int64) == v.Number
		out = append(out, v)
	}
	return out, rows.Err()
}

// Version returns version n of job, or with n == 0 the newest version.
func (s *Store) Version(ctx context.Context, job string, n int) (Version, error) {
	vs, err := s.Versions(ctx, job)
	if err != nil {
		return Version{}, err
	}
	if len(vs) == 0 {
		return Version{}, fmt.Errorf("job %s has no mandate versions yet (run `tether mandate compile %s`): %w", job, job, ErrUnknownVersion)
	}
	if n == 0 {
		return vs[len(vs)-1], nil
	}
	for _, v := range vs {
		if v.Number == n {
			return v, nil
		}
	}
	return Version{}, fmt.Errorf("job %s version %d: %w", job, n, ErrUnknownVersion)
}

// Active returns the job's active (enforced) version, or ok false in
// observe mode.
func (s *Store) Active(ctx context.Context, job string) (v Version, ok bool, err error) {
	vs, err := s.Versions(ctx, job)
	if err != nil {
		return v, false, err
	}
	for _, v := range vs {
		if v.Active {
			return v, true, nil
		}
	}
	return v, false, nil
}

// Approve approves version n of job (n == 0: the newest pending one) with
// no check of what the approver reviewed; see ApproveReviewed.
func (s *Store) Approve(ctx context.Context, job string, n int, by string) (Version, error) {
	return s.ApproveReviewed(ctx, job, n, "", by)
}

// MinSHAPrefix is the shortest SHA-256 prefix ApproveReviewed accepts.
const MinSHAPrefix = 8

// ApproveReviewed approves version n of job (n == 0: the newest pending
// one) only if its SHA-256 starts with shaPrefix (hex, at least
// MinSHAPrefix characters; "" skips the check), so a version that changed
// since the reviewer saw its diff is refused (ErrSHAMismatch). It stores
// the SHA-256 of the exact text with who approved it and when, makes the
// version active and switches the job to enforce. Drift records widened
// into this version become "widened". The version must be pending, or an
// earlier approved version (superseded by undo or a later approval): undo
// keeps those re-approvable. Its text must load and name the job.
func (s *Store) ApproveReviewed(ctx context.Context, job string, n int, shaPrefix, by string) (Version, error) {
	by = actorOrUnknown(by)
	shaPrefix = strings.ToLower(strings.TrimSpace(shaPrefix))
	if shaPrefix != "" && (len(shaPrefix) < MinSHAPrefix || len(shaPrefix) > 64 || strings.Trim(shaPrefix, "0123456789abcdef") != "") {
		return Version{}, fmt.Errorf("approving %s: --sha %q: give at least %d hex characters of the SHA-256 that `tether mandate diff %s` printed",
			job, shaPrefix, MinSHAPrefix, job)
	}
	var out Version
	var settle func(bool)
	err := s.tx(ctx, func(tx *sql.Tx) error {
		from, err := s.enforcedState(ctx, tx, job)
		if err != nil {
			return err
		}
		vs, err := s.versions(ctx, tx, job)
		if err != nil {
			return err
		}
		var v *Version
		for i := len(vs) - 1; i >= 0; i-- {
			if (n == 0 && vs[i].Status == StatusPending) || (n != 0 && vs[i].Number == n) {
				v = &vs[i]
				break
			}
		}
		if v == nil && n == 0 {
			return fmt.Errorf("approving %s: %w (run `tether mandate compile %s` or `widen`)", job, ErrNoPending, job)
		}
		if v == nil {
			return fmt.Errorf("approving %s v%d: %w", job, n, ErrUnknownVersion)
		}
		if v.Active {
			return fmt.Errorf("approving %s v%d: it is already the active version: %w", job, v.Number, ErrNoPending)
		}
		if v.Status != StatusPending {
			var before int
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM approvals WHERE job = ? AND version = ? AND action = 'approve' AND sha256 = ?`,
				job, v.Number, v.SHA256).Scan(&before); err != nil {
				return fmt.Errorf("reading approvals of %s v%d: %w", job, v.Number, err)
			}
			if before == 0 {
				return fmt.Errorf("approving %s v%d: it is %s and was never approved: %w", job, v.Number, v.Status, ErrNotReapprovable)
			}
		}
		if shaPrefix != "" && !strings.HasPrefix(v.SHA256, shaPrefix) {
			return fmt.Errorf("approving %s v%d: its sha256 is %s, not %s…; review it again with `tether mandate diff %s`: %w",
				job, v.Number, v.SHA256[:12], shaPrefix, job, ErrSHAMismatch)
		}
		if sha([]byte(v.Text)) != v.SHA256 {
			return fmt.Errorf("approving %s v%d: %w", job, v.Number, ErrTampered)
		}
		m, err := Load([]byte(v.Text))
		if err != nil {
			return fmt.Errorf("approving %s v%d: %w", job, v.Number, err)
		}
		if m.Job != job {
			return fmt.Errorf("approving %s v%d: the text names job %q: %w", job, v.Number, m.Job, ErrInvalidMandate)
		}
		now := s.stamp()
		if _, err := tx.ExecContext(ctx, `UPDATE versions SET status = 'approved', approved_at = ?, approved_by = ? WHERE job = ? AND version = ?`,
			now, by, job, v.Number); err != nil {
			return fmt.Errorf("approving %s v%d: %w", job, v.Number, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO approvals(job, version, action, sha256, by, at) VALUES (?,?,'approve',?,?,?)`,
			job, v.Number, v.SHA256, by, now); err != nil {
			return fmt.Errorf("recording approval: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE jobs SET mode = 'enforce', active_version = ? WHERE name = ?`, v.Number, job); err != nil {
			return fmt.Errorf("activating %s v%d: %w", job, v.Number, err)
		}
		if err := s.markWidened(ctx, tx, job, v.Number, NewMatcher(m)); err != nil {
			return err
		}
		if err := s.audit(ctx, tx, job, by, "approve", fmt.Sprintf("v%d sha256 %s", v.Number, v.SHA256)); err != nil {
			return err
		}
		// Last before the commit: the anchor learns of the new enforcement.
		if settle, err = s.anchorChange(job, from, v.SHA256); err != nil {
			return err
		}
		out = *v
		out.Status, out.Active, out.ApprovedBy = StatusApproved, true, by
		out.ApprovedAt, _ = time.Parse(time.RFC3339Nano, now)
		return nil
	})
	if settle != nil {
		settle(err == nil)
	}
	return out, err
}

// Discard drops the job's newest pending version (it becomes superseded and
// can never be approved) and reopens the drift records it was widened
// from. It returns the version dropped.
func (s *Store) Discard(ctx context.Context, job, by string) (Version, error) {
	by = actorOrUnknown(by)
	var out Version
	err := s.tx(ctx, func(tx *sql.Tx) error {
		vs, err := s.versions(ctx, tx, job)
		if err != nil {
			return err
		}
		for i := len(vs) - 1; i >= 0; i-- {
			if vs[i].Status == StatusPending {
				out = vs[i]
				break
			}
		}
		if out.Number == 0 {
			return fmt.Errorf("discarding %s: %w", job, ErrNoPending)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE versions SET status = 'superseded' WHERE job = ? AND version = ?`, job, out.Number); err != nil {
			return fmt.Errorf("discarding %s v%d: %w", job, out.Number, err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE drift SET widened_version = NULL WHERE job = ? AND widened_version = ? AND status IN ('open','escalated')`,
			job, out.Number); err != nil {
			return fmt.Errorf("reopening drift widened into v%d: %w", out.Number, err)
		}
		out.Status = StatusSuperseded
		return s.audit(ctx, tx, job, by, "discard", fmt.Sprintf("v%d sha256 %s", out.Number, out.SHA256))
	})
	return out, err
}

// UndoResult says what Undo changed. To is 0 when the job went back to
// observe mode with no mandate.
type UndoResult struct {
	From int `json:"from"`
	To   int `json:"to"`
}

// Undo supersedes the active version and reactivates the newest approved
// version before it, or returns the job to observe mode with no mandate
// when there is none. A later Undo walks further back.
func (s *Store) Undo(ctx context.Context, job, by string) (UndoResult, error) {
	by = actorOrUnknown(by)
	var res UndoResult
	var settle func(bool)
	err := s.tx(ctx, func(tx *sql.Tx) error {
		from, err := s.enforcedState(ctx, tx, job)
		if err != nil {
			return err
		}
		j, err := s.job(ctx, tx, job)
		if err != nil {
			return err
		}
		if !j.active.Valid {
			return fmt.Errorf("undoing %s: %w", job, ErrNothingToUndo)
		}
		res.From = int(j.active.Int64)
		var prev sql.NullInt64
		if err := tx.QueryRowContext(ctx, `SELECT MAX(version) FROM versions WHERE job = ? AND status = 'approved' AND version < ?`,
			job, res.From).Scan(&prev); err != nil {
			return fmt.Errorf("finding the previous version: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE versions SET status = 'superseded' WHERE job = ? AND version = ?`, job, res.From); err != nil {
			return fmt.Errorf("superseding v%d: %w", res.From, err)
		}
		var shaPrev string
		if prev.Valid {
			res.To = int(prev.Int64)
			if err := tx.QueryRowContext(ctx, `SELECT sha256 FROM versions WHERE job = ? AND version = ?`, job, res.To).Scan(&shaPrev); err != nil {
				return fmt.Errorf("reading v%d: %w", res.To, err)
			}
			_, err = tx.ExecContext(ctx, `UPDATE jobs SET active_version = ? WHERE name = ?`, res.To, job)
		} else {
			_, err = tx.ExecContext(ctx, `UPDATE jobs SET mode = 'observe', active_version = NULL WHERE name = ?`, job)
		}
		if err != nil {
			return fmt.Errorf("switching %s back: %w", job, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO approvals(job, version, action, sha256, by, at) VALUES (?,?,'undo',?,?,?)`,
			job, res.From, shaPrev, by, s.stamp()); err != nil {
			return fmt.Errorf("recording undo: %w", err)
		}
		if err := s.audit(ctx, tx, job, by, "undo", fmt.Sprintf("v%d -> v%d", res.From, res.To)); err != nil {
			return err
		}
		to, err := s.enforcedState(ctx, tx, job)
		if err != nil {
			return err
		}
		settle, err = s.anchorChange(job, from, to)
		return err
	})
	if settle != nil {
		settle(err == nil)
	}
	return res, err
}

// SetInteractiveViolation sets what happens to an interactive run's call
// outside the job's mandate: "block" or "approve" (escalate to the approval
// prompt); "profile" removes the job's setting so the profile's
// mandate.interactive_violation applies again (see ResolveViolation). Cron
// runs are always blocked.
func (s *Store) SetInteractiveViolation(ctx context.Context, job, v string) error {
	set := 1
	switch v {
	case ViolationBlock, ViolationApprove:
	case ViolationFromProfile:
		v, set = ViolationBlock, 0
	default:
		return fmt.Errorf("interactive_violation %q: want block, approve or profile", v)
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := s.job(ctx, tx, job); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE jobs SET interactive_violation = ?, violation_set = ? WHERE name = ?`, v, set, job); err != nil {
			return fmt.Errorf("updating job %s: %w", job, err)
		}
		detail := "interactive_violation=" + v
		if set == 0 {
			detail = "interactive_violation=profile"
		}
		return s.audit(ctx, tx, job, "cli", "set", detail)
	})
}

// Jobs lists every job, by name.
func (s *Store) Jobs(ctx context.Context) ([]Job, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT j.name, j.mode, COALESCE(j.active_version, 0),
		CASE WHEN j.violation_set THEN j.interactive_violation ELSE '' END,
		(SELECT COALESCE(MAX(version), 0) FROM versions v WHERE v.job = j.name AND v.status = 'pending'),
		(SELECT COUNT(*) FROM calls c WHERE c.job = j.name),
		(SELECT COUNT(*) FROM runs r WHERE r.job = j.name),
		(SELECT COUNT(*) FROM drift d WHERE d.job = j.name AND d.status IN ('open','escalated'))
		FROM jobs j ORDER BY j.name`)
	if err != nil {
		return nil, fmt.Errorf("listing jobs: %w", err)
	}
	defer rows.Close()
	var out []Job
	for rows.Next() {
		var j Job
		if err := rows.Scan(&j.Name, &j.Mode, &j.ActiveVersion, &j.InteractiveViolation, &j.PendingVersion, &j.Calls, &j.Runs, &j.OpenDrift); err != nil {
			return nil, fmt.Errorf("reading job: %w", err)
		}
		out = append(out, j)
	}
	return out, rows.Err()
}

// Export is a job's active mandate as data.
type Export struct {
	Job             string            `json:"job"`
	Version         int               `json:"version"`
	SHA256          string            `json:"sha256"`
	Families        map[string][]Rule `json:"families"` // value/evidence pairs
	MaxWritesPerRun int               `json:"max_writes_per_run"`
}

// Export returns the job's active mandate, verified against its approved
// hash.
func (s *Store) Export(ctx context.Context, job string) (Export, error) {
	v, ok, err := s.Active(ctx, job)
	if err != nil {
		return Export{}, err
	}
	if !ok {
		return Export{}, fmt.Errorf("job %s is in observe mode with no approved mandate: %w", job, ErrUnknownVersion)
	}
	var approved string
	if err := s.db.QueryRowContext(ctx, `SELECT sha256 FROM approvals WHERE job = ? AND version = ? AND action = 'approve' ORDER BY id DESC LIMIT 1`,
		job, v.Number).Scan(&approved); err != nil {
		return Export{}, fmt.Errorf("reading approval of %s v%d: %w", job, v.Number, err)
	}
	if sha([]byte(v.Text)) != approved {
		return Export{}, fmt.Errorf("exporting %s v%d: %w", job, v.Number, ErrTampered)
	}
	m, err := Load([]byte(v.Text))
	if err != nil {
		return Export{}, fmt.Errorf("exporting %s v%d: %w", job, v.Number, err)
	}
	e := Export{Job: job, Version: v.Number, SHA256: approved, Families: map[string][]Rule{}, MaxWritesPerRun: m.MaxWritesPerRun}
	for _, f := range Families {
		rules := *m.family(f)
		if rules == nil {
			rules = []Rule{}
		}
		e.Families[f] = rules
	}
	return e, nil
}

// markWidened marks as widened the drift records linked to version n by
// Widen and every other open or escalated record whose call x now allows
// (judged on its recorded facts, without the per-run write count). Records
// of run-mode or evaluation failures are never covered by rules.
//
// Preconditions: tx is the caller's transaction.
func (s *Store) markWidened(ctx context.Context, tx *sql.Tx, job string, n int, x *Matcher) error {
	if _, err := tx.ExecContext(ctx, `UPDATE drift SET status = 'widened' WHERE job = ? AND widened_version = ? AND status IN ('open','escalated')`, job, n); err != nil {
		return fmt.Errorf("marking widened drift: %w", err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT d.n, d.failures, c.facts FROM drift d JOIN calls c ON c.id = d.call_id
		WHERE d.job = ? AND d.status IN ('open','escalated')`, job)
	if err != nil {
		return fmt.Errorf("reading open drift: %w", err)
	}
	var covered []int
	for rows.Next() {
		var dn int
		var fj, factsj string
		if err := rows.Scan(&dn, &fj, &factsj); err != nil {
			rows.Close()
			return fmt.Errorf("reading drift record: %w", err)
		}
		var fails []Failure
		var f Facts
		if json.Unmarshal([]byte(fj), &fails) != nil || json.Unmarshal([]byte(factsj), &f) != nil {
			continue
		}
		ruleOnly := len(fails) > 0
		for _, fl := range fails {
			if fl.Family != FamilyTools && fl.Family != FamilyPaths && fl.Family != FamilyCommands && fl.Family != FamilyHosts {
				ruleOnly = false
			}
		}
		f.Wrote = false
		if ruleOnly && len(x.Evaluate(f, 0)) == 0 {
			covered = append(covered, dn)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reading open drift: %w", err)
	}
	for _, dn := range covered {
		if _, err := tx.ExecContext(ctx, `UPDATE drift SET status = 'widened', widened_version = COALESCE(widened_version, ?) WHERE job = ? AND n = ?`, n, job, dn); err != nil {
			return fmt.Errorf("marking drift d-%d widened: %w", dn, err)
		}
	}
	return nil
}
