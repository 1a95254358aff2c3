package mandate

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// RunMode says how a run was started.
type RunMode string

// Run modes. RunUnknown means the mode could not be determined; a run that
// is or might be cron is treated as unknown, and a failed cron-identity
// lookup makes a run unknown.
const (
	RunInteractive RunMode = "interactive"
	RunCron        RunMode = "cron"
	RunUnknown     RunMode = "unknown"
)

// ModeFromCron resolves a run's mode from a cron-identity lookup: a failed
// lookup is unknown (it might be cron), a found identity is cron, otherwise
// interactive only when the caller knows a person is attached.
func ModeFromCron(identity string, lookupErr error, interactive bool) RunMode {
	switch {
	case lookupErr != nil:
		return RunUnknown
	case identity != "":
		return RunCron
	case interactive:
		return RunInteractive
	}
	return RunUnknown
}

// Run identifies one run of a job.
type Run struct {
	Job          string  `json:"job"`
	ID           string  `json:"id"`
	Mode         RunMode `json:"mode"`
	CronIdentity string  `json:"cron_identity,omitempty"`
	// Violation is the interactive_violation ("block" or "approve") of the
	// profile the run uses. It applies only when the job has no setting of
	// its own (`tether mandate set`); empty means "block". See
	// ResolveViolation.
	Violation string `json:"violation,omitempty"`
}

// Verdict is the mandate's answer for one call.
type Verdict string

// Verdicts.
const (
	Allow    Verdict = "allow"    // inside the mandate, or the job is observed
	Block    Verdict = "block"    // outside the mandate, or enforcement failed
	Escalate Verdict = "escalate" // outside the mandate; ask through the approval prompt
)

// Decision is the result of Check.
type Decision struct {
	Verdict  Verdict   `json:"verdict"`
	Mode     string    `json:"mode"`              // the job's mode: observe or enforce
	Version  int       `json:"version,omitempty"` // the enforced version
	Failures []Failure `json:"failures,omitempty"`
	Reason   string    `json:"reason,omitempty"`
	DriftID  string    `json:"drift_id,omitempty"`
	// Warning is for the call's result: set when an observe-mode call
	// could not be recorded (LostWarning).
	Warning string `json:"warning,omitempty"`
	// Err is the internal error behind a block or behind an observe
	// failure that was allowed anyway. It is for logs, not for the model.
	Err error `json:"-"`
	// Paths is the enforced version's paths family, as written, when the
	// call may run (allowed, or escalated to a person): what the kernel
	// is to hold its sandbox to (KernelPaths). Nil in observe mode.
	Paths []string `json:"-"`
	// Hosts is its hosts family, as written, with Paths: the TCP ports
	// the kernel is to hold the sandbox's connects to (KernelPorts).
	Hosts []string `json:"-"`
}

// Observe records c as an observation of run, whatever the job's mode. It
// never panics; the error is for logging only and must never block the call.
func (s *Store) Observe(ctx context.Context, run Run, c Call) (err error) {
	lost := s.takeLost(run.Job)
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("observing call: panic: %v", p)
		}
		if err != nil {
			s.log.Error("mandate observe failed; call allowed", "job", run.Job, "run", run.ID, "err", err)
			// This observation is lost too; the count waits for the
			// next one that can be stored.
			s.addLost(run.Job, lost+1)
		}
	}()
	if s.faultHook != nil {
		if err := s.faultHook(c); err != nil {
			return fmt.Errorf("observing call: %w", err)
		}
	}
	f, err := extract(c, s.parse)
	if err != nil {
		return fmt.Errorf("observing call: %w", err)
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		if err := s.ensureJob(ctx, tx, run.Job); err != nil {
			return err
		}
		if _, err := s.insertCall(ctx, tx, run, c, f, "observed"); err != nil {
			return err
		}
		return storeLost(ctx, tx, run.Job, lost)
	})
}

// storeLost adds n observations of job that could not be stored to the
// job's count (jobs.lost_observations), in tx.
func storeLost(ctx context.Context, tx *sql.Tx, job string, n int) error {
	if n <= 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `UPDATE jobs SET lost_observations = lost_observations + ? WHERE name = ?`, n, job); err != nil {
		return fmt.Errorf("counting lost observations: %w", err)
	}
	return nil
}

// LostWarning is the warning a call carries when its observation could not
// be stored.
const LostWarning = "this call could not be recorded as evidence for the job's mandate; the next compile will say its evidence is incomplete"

func (s *Store) takeLost(job string) int {
	s.lostMu.Lock()
	defer s.lostMu.Unlock()
	n := s.lost[job]
	delete(s.lost, job)
	return n
}

func (s *Store) addLost(job string, n int) {
	s.lostMu.Lock()
	defer s.lostMu.Unlock()
	s.lost[job] += n
}

// LostObservations returns how many of job's calls could not be stored as
// observations: those counted in the database and those this process has
// not been able to count there yet.
func (s *Store) LostObservations(ctx context.Context, q querier, job string) (int, error) {
	var n int
	err := q.QueryRowContext(ctx, `SELECT lost_observations FROM jobs WHERE name = ?`, job).Scan(&n)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("reading lost observations of %s: %w", job, err)
	}
	s.lostMu.Lock()
	n += s.lost[job]
	s.lostMu.Unlock()
	return n, nil
}

// Check decides whether c may run under its job's mandate and records it.
// In observe mode it records and allows, whatever goes wrong. In enforce
// mode it fails closed: any error, tampered text, unknown run mode or call
// outside the mandate blocks, except that an interactive run of a job whose
// interactive_violation is "approve" escalates a call outside the mandate.
// Blocked and escalated calls become drift records.
func (s *Store) Check(ctx context.Context, run Run, c Call) (d Decision) {
	return s.check(ctx, run, c, true)
}

// Probe decides c exactly as Check does but records nothing: no
// observation, no call, no drift record, no run. It is what a reviewer's
// `tether mandate check` uses, so probing a mandate never teaches it.
func (s *Store) Probe(ctx context.Context, run Run, c Call) Decision {
	return s.check(ctx, run, c, false)
}

func (s *Store) check(ctx context.Context, run Run, c Call, record bool) (d Decision) {
	// A database that lost the job's enforcement (deleted, emptied,
	// replaced) must not turn it into an observe-mode job: the anchor
	// outside the database says what it enforced.
	if err := s.checkAnchor(ctx, run.Job); err != nil {
		s.log.Error("mandate enforcement anchor check failed; call blocked", "job", run.Job, "err", err)
		return Decision{Verdict: Block, Mode: "enforce", Reason: err.Error(), Err: err}
	}
	var mode string
	func() {
		defer func() {
			if p := recover(); p != nil {
				mode = "enforce" // unknown: fail closed
			}
		}()
		j, err := s.job(ctx, s.db, run.Job)
		switch {
		case errors.Is(err, ErrUnknownJob):
			mode = "observe"
		case err != nil:
			mode = "enforce" // cannot tell: fail closed
		default:
			mode = j.mode
		}
	}()
	if mode == "observe" {
		d := Decision{Verdict: Allow, Mode: "observe", Reason: "job is in observe mode"}
		if record {
			if d.Err = s.Observe(ctx, run, c); d.Err != nil {
				d.Warning = LostWarning
			}
		}
		return d
	}
	defer func() {
		if p := recover(); p != nil {
			d = Decision{Verdict: Block, Mode: "enforce", Reason: "mandate evaluation failed",
				Err: fmt.Errorf("evaluating mandate: panic: %v", p)}
			s.log.Error("mandate evaluation panicked; call blocked", "job", run.Job, "err", d.Err)
		}
	}()
	d, err := s.enforce(ctx, run, c, record)
	if err != nil {
		d = Decision{Verdict: Block, Mode: "enforce", Version: d.Version, Reason: "mandate evaluation failed", Err: err}
		s.log.Error("mandate evaluation failed; call blocked", "job", run.Job, "err", err)
		// Record what we can so the block shows up as drift.
		if !record {
			return d
		}
		if id, rerr := s.recordFailure(ctx, run, c, err); rerr == nil {
			d.DriftID = id
		}
	}
	return d
}

// enforce decides c under the active version; with record it also stores
// the call and, when it is outside, a drift record.
func (s *Store) enforce(ctx context.Context, run Run, c Call, record bool) (Decision, error) {
	d := Decision{Mode: "enforce"}
	f, ferr := extract(c, s.parse)
	err := s.tx(ctx, func(tx *sql.Tx) error {
		j, err := s.job(ctx, tx, run.Job)
		if err != nil {
			return err
		}
		if j.mode != "enforce" || !j.active.Valid {
			return fmt.Errorf("job %s changed mode during the check", run.Job)
		}
		d.Version = int(j.active.Int64)
		if s.faultHook != nil {
			if err := s.faultHook(c); err != nil {
				return fmt.Errorf("evaluating mandate: %w", err)
			}
		}
		if ferr != nil {
			return ferr
		}
		x, err := s.activeMatcher(ctx, tx, run.Job, d.Version)
		if err != nil {
			return err
		}
		d.Paths = append([]string{}, x.pathRules...) // non-nil: enforced, even when empty
		d.Hosts = append([]string{}, x.hostRules...)
		switch run.Mode {
		case RunInteractive, RunCron:
		default:
			d.Failures = []Failure{{Family: FamilyRun, Value: string(RunUnknown)}}
			d.Reason = "the run's mode cannot be determined and it might be a cron run"
		}
		if d.Failures == nil {
			var writes int
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM calls WHERE job = ? AND run = ? AND wrote = 1 AND outcome IN ('observed','allowed')`,
				run.Job, run.ID).Scan(&writes); err != nil {
				return fmt.Errorf("counting writes of run %s: %w", run.ID, err)
			}
			d.Failures = x.Evaluate(f, writes)
			if len(d.Failures) > 0 {
				d.Reason = "outside the mandate: " + strings.Join(failedFamilies(d.Failures), ", ")
			}
		}
		if len(d.Failures) == 0 {
			d.Verdict = Allow
			if !record {
				return nil
			}
			_, err := s.insertCall(ctx, tx, run, c, f, "allowed")
			return err
		}
		d.Verdict = Block
		if viol, _ := resolveViolation(j, run.Violation); run.Mode == RunInteractive && viol == ViolationApprove && d.Failures[0].Family != FamilyRun {
			d.Verdict = Escalate
		}
		outcome, status := "blocked", DriftOpen
		if d.Verdict == Escalate {
			outcome, status = "escalated", DriftEscalated
		}
		if !record {
			return nil
		}
		callID, err := s.insertCall(ctx, tx, run, c, f, outcome)
		if err != nil {
			return err
		}
		d.DriftID, err = s.insertDrift(ctx, tx, run, callID, c, d.Failures, d.Reason, d.Verdict, status)
		return err
	})
	return d, err
}

// activeMatcher loads the active version, verifies its text against the
// SHA-256 recorded when it was approved, and returns its matcher.
//
// Preconditions: tx is the caller's transaction.
func (s *Store) activeMatcher(ctx context.Context, tx *sql.Tx, job string, version int) (*Matcher, error) {
	var text, approved string
	err := tx.QueryRowContext(ctx, `SELECT v.text, a.sha256 FROM versions v
		JOIN approvals a ON a.job = v.job AND a.version = v.version AND a.action = 'approve'
		WHERE v.job = ? AND v.version = ? AND v.status = 'approved'
		ORDER BY a.id DESC LIMIT 1`, job, version).Scan(&text, &approved)
	if err != nil {
		return nil, fmt.Errorf("loading approved mandate %s v%d: %w", job, version, err)
	}
	sum := sha256.Sum256([]byte(text))
	if hex.EncodeToString(sum[:]) != approved {
		return nil, fmt.Errorf("loading mandate %s v%d: %w", job, version, ErrTampered)
	}
	s.cacheMu.Lock()
	x := s.cache[approved]
	s.cacheMu.Unlock()
	if x != nil {
		return x, nil
	}
	m, err := Load([]byte(text))
	if err != nil {
		return nil, fmt.Errorf("loading mandate %s v%d: %w", job, version, err)
	}
	x = NewMatcher(m)
	s.cacheMu.Lock()
	s.cache[approved] = x
	s.cacheMu.Unlock()
	return x, nil
}

// recordFailure records a call whose evaluation failed as blocked drift, in
// its own transaction.
func (s *Store) recordFailure(ctx context.Context, run Run, c Call, cause error) (string, error) {
	var id string
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if err := s.ensureJob(ctx, tx, run.Job); err != nil {
			return err
		}
		f := Facts{Tool: c.Tool, Wrote: c.Wrote}
		callID, err := s.insertCall(ctx, tx, run, c, f, "blocked")
		if err != nil {
			return err
		}
		fam := "evaluation"
		if errors.Is(cause, ErrTampered) {
			fam = "integrity"
		}
		id, err = s.insertDrift(ctx, tx, run, callID, c, []Failure{{Family: fam, Value: "error"}},
			"mandate evaluation failed: "+redact(cause.Error()), Block, "open")
		return err
	})
	return id, err
}

func failedFamilies(fs []Failure) []string {
	var out []string
	for _, f := range fs {
		if len(out) == 0 || out[len(out)-1] != f.Family {
			out = append(out, f.Family)
		}
	}
	return out
}

// insertCall records one call of run, creating the run row when new.
//
// Preconditions: tx is the caller's transaction and the job exists.
func (s *Store) insertCall(ctx context.Context, tx *sql.Tx, run Run, c Call, f Facts, outcome string) (int64, error) {
	if run.ID == "" {
		return 0, errors.New("recording call: run id is empty")
	}
	mode := run.Mode
	if mode != RunInteractive && mode != RunCron {
		mode = RunUnknown
	}
	if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO runs(job, id, started, mode, cron_identity) VALUES (?,?,?,?,?)`,
		run.Job, run.ID, s.stamp(), string(mode), run.CronIdentity); err != nil {
		return 0, fmt.Errorf("recording run %s: %w", run.ID, err)
	}
	var seq int
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) + 1 FROM calls WHERE job = ? AND run = ?`, run.Job, run.ID).Scan(&seq); err != nil {
		return 0, fmt.Errorf("numbering call: %w", err)
	}
	fj, err := json.Marshal(f)
	if err != nil {
		return 0, fmt.Errorf("encoding call facts: %w", err)
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO calls(job, run, seq, tool, call_text, facts, wrote, outcome, time) VALUES (?,?,?,?,?,?,?,?,?)`,
		run.Job, run.ID, seq, c.Tool, redact(callText(c)), string(fj), f.Wrote, outcome, s.stamp())
	if err != nil {
		return 0, fmt.Errorf("recording call: %w", err)
	}
	return res.LastInsertId()
}

// callText is a one-line description of a call for people.
func callText(c Call) string { return withHosts(baseCallText(c), c.Hosts) }

func baseCallText(c Call) string {
	if c.Command != "" {
		return c.Command
	}
	if len(c.Paths) > 0 {
		return c.Tool + " " + strings.Join(c.Paths, " ")
	}
	return c.Tool
}
