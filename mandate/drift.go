package mandate

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Drift statuses. A record is open (blocked) or escalated until a version
// that allows its call is approved (widened), or a person closes it:
// resolved (the cause was dealt with outside the mandate) or dismissed (not
// worth acting on). Closed records are kept, with who closed them and why.
const (
	DriftOpen      = "open"
	DriftEscalated = "escalated"
	DriftWidened   = "widened"
	DriftResolved  = "resolved"
	DriftDismissed = "dismissed"
)

// DriftRecord is a blocked or escalated call. Identical calls (the same
// failures, the same redacted call, the same verdict) fold into one record
// while it is open or escalated: Count says how often the call was seen,
// LastSeen and LastRun when it was seen last. The failures are part of the
// key because redaction can make different calls read the same ("… token
// [REDACTED]" hides a host or a path): each way of failing keeps a record.
type DriftRecord struct {
	ID       string    `json:"id"`   // "d-<n>", numbered per job
	Time     time.Time `json:"time"` // first seen
	Run      string    `json:"run"`  // run of the first sighting
	Families []string  `json:"families"`
	Call     string    `json:"call"` // redacted
	Reason   string    `json:"reason"`
	Verdict  Verdict   `json:"verdict"`
	Status   string    `json:"status"` // open, escalated, widened, resolved, dismissed
	// WidenedBy is the pending or approved version that covers the call.
	WidenedBy int       `json:"widened_by,omitempty"`
	Count     int       `json:"count"`
	LastSeen  time.Time `json:"last_seen"`
	LastRun   string    `json:"last_run"`
	// ClosedBy and ClosedReason say who resolved or dismissed the record
	// and why.
	ClosedBy     string `json:"closed_by,omitempty"`
	ClosedReason string `json:"closed_reason,omitempty"`

	failures []Failure
}

// Open reports whether the record still waits for a decision.
func (d DriftRecord) Open() bool { return d.Status == DriftOpen || d.Status == DriftEscalated }

// driftColumns are the columns scanDrift reads, in order.
const driftColumns = `n, time, run, families, failures, call_text, reason, verdict, status, widened_version,
	count, last_seen, last_run, closed_by, closed_reason`

// insertDrift records a blocked or escalated call, folding it into an open
// record of the same failures, redacted call and verdict when there is one.
//
// Preconditions: tx is the caller's transaction.
func (s *Store) insertDrift(ctx context.Context, tx *sql.Tx, run Run, callID int64, c Call, fs []Failure, reason string, v Verdict, status string) (string, error) {
	fj, err := json.Marshal(fs)
	if err != nil {
		return "", fmt.Errorf("encoding drift failures: %w", err)
	}
	famj, _ := json.Marshal(failedFamilies(fs))
	text := redact(callText(c))
	now := s.stamp()
	var n int
	err = tx.QueryRowContext(ctx, `SELECT n FROM drift WHERE job = ? AND failures = ? AND call_text = ? AND verdict = ?
		AND status IN ('open','escalated') ORDER BY n LIMIT 1`, run.Job, string(fj), text, string(v)).Scan(&n)
	switch {
	case err == nil:
		if _, err := tx.ExecContext(ctx, `UPDATE drift SET count = count + 1, last_seen = ?, last_run = ?, reason = ?
			WHERE job = ? AND n = ?`, now, run.ID, reason, run.Job, n); err != nil {
			return "", fmt.Errorf("folding drift into d-%d: %w", n, err)
		}
		return "d-" + strconv.Itoa(n), nil
	case !errors.Is(err, sql.ErrNoRows):
		return "", fmt.Errorf("looking for identical drift: %w", err)
	}
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(n), 0) + 1 FROM drift WHERE job = ?`, run.Job).Scan(&n); err != nil {
		return "", fmt.Errorf("numbering drift record: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO drift(job, n, time, run, call_id, families, failures, call_text, reason, verdict, status, last_seen, last_run)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)`, run.Job, n, now, run.ID, callID, string(famj), string(fj),
		text, reason, string(v), status, now, run.ID); err != nil {
		return "", fmt.Errorf("recording drift: %w", err)
	}
	return "d-" + strconv.Itoa(n), nil
}

// Drift lists a job's drift records, newest first.
func (s *Store) Drift(ctx context.Context, job string) ([]DriftRecord, error) {
	if _, err := s.job(ctx, s.db, job); err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+driftColumns+` FROM drift WHERE job = ? ORDER BY n DESC`, job)
	if err != nil {
		return nil, fmt.Errorf("listing drift of %s: %w", job, err)
	}
	defer rows.Close()
	var out []DriftRecord
	for rows.Next() {
		d, err := scanDrift(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

type scanner interface{ Scan(...any) error }

func scanDrift(r scanner) (DriftRecord, error) {
	var d DriftRecord
	var n int
	var t, last, fam, fail, verdict string
	var wv sql.NullInt64
	if err := r.Scan(&n, &t, &d.Run, &fam, &fail, &d.Call, &d.Reason, &verdict, &d.Status, &wv,
		&d.Count, &last, &d.LastRun, &d.ClosedBy, &d.ClosedReason); err != nil {
		return d, fmt.Errorf("reading drift record: %w", err)
	}
	d.ID = "d-" + strconv.Itoa(n)
	d.Time, _ = time.Parse(time.RFC3339Nano, t)
	d.LastSeen, _ = time.Parse(time.RFC3339Nano, last)
	d.Verdict = Verdict(verdict)
	d.WidenedBy = int(wv.Int64)
	if err := json.Unmarshal([]byte(fam), &d.Families); err != nil {
		return d, fmt.Errorf("decoding drift families: %w", err)
	}
	if err := json.Unmarshal([]byte(fail), &d.failures); err != nil {
		return d, fmt.Errorf("decoding drift failures: %w", err)
	}
	return d, nil
}

// parseDriftID accepts "d-7" or "7".
func parseDriftID(id string) (int, error) {
	n, err := strconv.Atoi(strings.TrimPrefix(id, "d-"))
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("drift id %q: %w (ids look like d-3; list them with `tether mandate drift JOB`)", id, ErrUnknownDrift)
	}
	return n, nil
}

// Preview says what a widening would newly allow among the calls recorded
// for the job, counted once per distinct (redacted) call.
type Preview struct {
	NewlyAllowed int      `json:"newly_allowed"`
	Examples     []string `json:"examples,omitempty"` // up to 20, redacted, oldest first
}

// WidenResult is the outcome of Widen.
type WidenResult struct {
	Version Version `json:"version"`
	Added   []Rule  `json:"added"` // rules added, as "family: value" in Value
	Preview Preview `json:"preview"`
	// Diff is the whole pending version against the approved one after
	// the widening, including rules earlier widenings left pending: what
	// approving the version would activate.
	Diff Diff `json:"diff"`
	// DryRun reports that nothing was written (WidenDryRun).
	DryRun bool `json:"dry_run,omitempty"`
}

// MaxPreviewExamples bounds Preview.Examples.
const MaxPreviewExamples = 20

// Widen writes a new pending version that also allows the call of drift
// record id, covering every family it failed at once. By default each rule
// is the exact subject (the verbatim "=text" form for an opaque segment);
// with pattern, broader rules: "program sub -*" naming the call's risky
// options for commands, "DIR/**" for paths, "*.domain" for hosts. It
// builds on the latest pending version when there is one, else on the
// active one, and returns the whole diff of the new version against the
// approved one. It never activates anything: the drift record becomes
// "widened" when the new version is approved.
func (s *Store) Widen(ctx context.Context, job, id string, pattern bool) (WidenResult, error) {
	return s.widenDrift(ctx, job, id, pattern, false)
}

// WidenDryRun computes what Widen would write, with its diff, and writes
// nothing.
func (s *Store) WidenDryRun(ctx context.Context, job, id string, pattern bool) (WidenResult, error) {
	return s.widenDrift(ctx, job, id, pattern, true)
}

// errDryRun rolls back a dry run's transaction.
var errDryRun = errors.New("dry run")

func (s *Store) widenDrift(ctx context.Context, job, id string, pattern, dryRun bool) (WidenResult, error) {
	var res WidenResult
	n, err := parseDriftID(id)
	if err != nil {
		return res, err
	}
	err = s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := s.job(ctx, tx, job); err != nil {
			return err
		}
		d, err := scanDrift(tx.QueryRowContext(ctx, `SELECT `+driftColumns+` FROM drift WHERE job = ? AND n = ?`, job, n))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("drift %s of job %s: %w", id, job, ErrUnknownDrift)
		}
		if err != nil {
			return err
		}
		if d.Status == DriftResolved || d.Status == DriftDismissed {
			return fmt.Errorf("widening %s of job %s: it was %s: %w", d.ID, job, d.Status, ErrDriftClosed)
		}
		base, err := s.widenBase(ctx, tx, job)
		if err != nil {
			return err
		}
		m, err := Load([]byte(base.Text)) // a copy to widen
		if err != nil {
			return err
		}
		added, err := widen(m, d.failures, pattern)
		if err != nil {
			return fmt.Errorf("widening %s: %w", d.ID, err)
		}
		res.Added = added
		src := "widen " + d.ID
		if pattern {
			src += " --pattern"
		}
		res.Version, err = s.insertVersion(ctx, tx, job, m.Marshal(), src)
		if err != nil {
			return err
		}
		// The diff compares with what is enforced now (nothing in observe
		// mode), so carried-along pending rules show too.
		if res.Diff, err = s.diff(ctx, tx, job); err != nil {
			return err
		}
		res.Preview = Preview{NewlyAllowed: res.Diff.NewlyAllows, Examples: res.Diff.Examples}
		if dryRun {
			res.DryRun = true
			return errDryRun
		}
		if base.Status == StatusPending {
			// The new version carries the base's widenings along.
			if _, err := tx.ExecContext(ctx, `UPDATE drift SET widened_version = ? WHERE job = ? AND widened_version = ? AND status IN ('open','escalated')`,
				res.Version.Number, job, base.Number); err != nil {
				return fmt.Errorf("carrying widenings of v%d: %w", base.Number, err)
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE drift SET widened_version = ? WHERE job = ? AND n = ?`, res.Version.Number, job, n); err != nil {
			return fmt.Errorf("linking drift %s to v%d: %w", d.ID, res.Version.Number, err)
		}
		return s.audit(ctx, tx, job, "cli", "widen", fmt.Sprintf("%s -> v%d pending (pattern=%v)", d.ID, res.Version.Number, pattern))
	})
	if errors.Is(err, errDryRun) {
		err = nil
	}
	return res, err
}

// widenBase is the version Widen builds on: the latest pending, else the active.
//
// Preconditions: tx is the caller's transaction.
func (s *Store) widenBase(ctx context.Context, tx *sql.Tx, job string) (Version, error) {
	vs, err := s.versions(ctx, tx, job)
	if err != nil {
		return Version{}, err
	}
	for i := len(vs) - 1; i >= 0; i-- {
		if vs[i].Status == StatusPending {
			return vs[i], nil
		}
	}
	for _, v := range vs {
		if v.Active {
			return v, nil
		}
	}
	return Version{}, fmt.Errorf("job %s has no mandate to widen: compile one first", job)
}

// widen adds to m the rules covering fs and returns them (Value is
// "family: rule").
func widen(m *Mandate, fs []Failure, pattern bool) ([]Rule, error) {
	var added []Rule
	add := func(fam, v string) error {
		cv, err := canonRule(fam, v)
		if err != nil {
			return err
		}
		rules := m.family(fam)
		for _, r := range *rules {
			if r.Value == cv {
				return nil
			}
		}
		*rules = append(*rules, Rule{Value: cv, Seen: 1})
		added = append(added, Rule{Value: fam + ": " + cv, Seen: 1})
		return nil
	}
	for _, f := range fs {
		var err error
		if f.Exec {
			return nil, fmt.Errorf("%w: %w (%s)", ErrNotWidenable, ErrExecRefused, f.Value)
		}
		if f.Unwritable {
			return nil, fmt.Errorf("%w: no rule can express the command %q (a word holds a space or the program starts with '=')", ErrNotWidenable, f.Value)
		}
		switch f.Family {
		case FamilyMaxWrites:
			n, _ := strconv.Atoi(f.Value)
			if n > m.MaxWritesPerRun {
				m.MaxWritesPerRun = n
				added = append(added, Rule{Value: FamilyMaxWrites + ": " + f.Value})
			}
		case FamilyTools:
			err = add(FamilyTools, f.Value)
		case FamilyPaths:
			v := mapPath(f.Value, func(p string) string {
				// A literal name's directory widens only when a tree
				// rule can name it (pathmode.go).
				name, literal := LiteralName(p)
				if d := path.Dir(name); pattern && d != "." && d != "/" && !climbs(name) && !(literal && needsLiteral(d)) {
					return d + "/**"
				}
				return p
			})
			err = add(FamilyPaths, v)
		case FamilyHosts:
			v := f.Value
			if pattern && !strings.HasPrefix(v, "=") {
				if d := registrable(v); d != "" {
					if d == v {
						err = add(FamilyHosts, v)
					}
					v = "*." + d
				}
			}
			if err == nil {
				err = add(FamilyHosts, v)
			}
		case FamilyCommands:
			v := f.Value
			if pattern && !strings.HasPrefix(v, "=") {
				r, perr := parseCommandRule(v)
				if perr != nil {
					return nil, perr
				}
				// "-*" never covers the risky options: the rule names
				// the ones this call used, so the reviewer sees them.
				r.anyFlags, r.flags = true, uniqSorted(f.Risky)
				v = r.String()
			}
			err = add(FamilyCommands, v)
		default:
			return nil, fmt.Errorf("%w: failure family %q (%s)", ErrNotWidenable, f.Family, f.Value)
		}
		if err != nil {
			return nil, err
		}
	}
	if len(added) == 0 {
		return nil, errors.New("the mandate already allows this call")
	}
	return added, nil
}

// registrable approximates a host's registrable domain as its last two
// labels; IP addresses and single labels have none.
func registrable(h string) string {
	if strings.Contains(h, ":") {
		return ""
	}
	labels := strings.Split(h, ".")
	if len(labels) < 2 {
		return ""
	}
	if _, err := strconv.Atoi(labels[len(labels)-1]); err == nil {
		return "" // IPv4
	}
	return strings.Join(labels[len(labels)-2:], ".")
}

type redactor struct {
	re   *regexp.Regexp
	repl string
}

// redactors are compiled on first use, not at init (see cliTable).
var redactors = sync.OnceValue(func() []redactor {
	return []redactor{
		{regexp.MustCompile(`(?i)\b((?:proxy-)?authorization)(\s*[:=]\s*)(?:(?:bearer|basic|token)\s+)?[^\s'"]+`), `$1$2[REDACTED]`},
		{regexp.MustCompile(`(?i)\b(bearer|token)(\s+)[A-Za-z0-9._~+/=-]{8,}`), `$1$2[REDACTED]`},
		{regexp.MustCompile(`(?i)([A-Za-z0-9_-]*(?:passw(?:or)?d|passwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credential)[A-Za-z0-9_-]*)(=|:\s*|\s+)([^\s'"]+)`), `$1$2[REDACTED]`},
		{regexp.MustCompile(`://([^/@\s:]+):([^/@\s]+)@`), `://$1:[REDACTED]@`},
		{regexp.MustCompile(`\b(ghp|gho|ghs|ghr|ghu|github_pat|glpat|xox[abprs]|sk|sk-ant|AKIA|ASIA)[-_][A-Za-z0-9_-]{10,}|\bAKIA[A-Z0-9]{16}\b`), `[REDACTED]`},
	}
})

// redact hides secret-looking parts of text (tokens, passwords,
// Authorization headers, URL credentials) for display and storage of
// descriptions. It may hide more than needed; it is never used for matching.
func redact(text string) string {
	for _, r := range redactors() {
		text = r.re.ReplaceAllString(text, r.repl)
	}
	return text
}

// CloseDrift marks drift records of job as resolved or dismissed (status
// DriftResolved or DriftDismissed), with who did it and why. Every id must
// name an open or escalated record; otherwise nothing changes. A closed
// record no longer counts as open drift and is never folded into again: the
// same call blocked later opens a new record.
func (s *Store) CloseDrift(ctx context.Context, job string, ids []string, status, reason, by string) error {
	if status != DriftResolved && status != DriftDismissed {
		return fmt.Errorf("closing drift: status %q: want %s or %s", status, DriftResolved, DriftDismissed)
	}
	reason = strings.TrimSpace(reason)
	if reason == "" {
		return fmt.Errorf("closing drift: %w", ErrNoReason)
	}
	if len(ids) == 0 {
		return errors.New("closing drift: name at least one drift id")
	}
	by = actorOrUnknown(by)
	return s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := s.job(ctx, tx, job); err != nil {
			return err
		}
		for _, id := range ids {
			n, err := parseDriftID(id)
			if err != nil {
				return err
			}
			var st string
			err = tx.QueryRowContext(ctx, `SELECT status FROM drift WHERE job = ? AND n = ?`, job, n).Scan(&st)
			if errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("drift %s of job %s: %w", id, job, ErrUnknownDrift)
			}
			if err != nil {
				return fmt.Errorf("reading drift %s: %w", id, err)
			}
			if st != DriftOpen && st != DriftEscalated {
				return fmt.Errorf("drift d-%d of job %s is already %s: %w", n, job, st, ErrDriftClosed)
			}
			if _, err := tx.ExecContext(ctx, `UPDATE drift SET status = ?, closed_by = ?, closed_reason = ? WHERE job = ? AND n = ?`,
				status, by, reason, job, n); err != nil {
				return fmt.Errorf("closing drift d-%d: %w", n, err)
			}
			if err := s.audit(ctx, tx, job, by, status, fmt.Sprintf("d-%d: %s", n, reason)); err != nil {
				return err
			}
		}
		return nil
	})
}

// actorOrUnknown names who acted; the CLI passes the user (see the
// command's --by), library callers may pass "".
func actorOrUnknown(by string) string {
	if by == "" {
		return "unknown"
	}
	return by
}
