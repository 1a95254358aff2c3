package mandate

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the pure-Go "sqlite" driver
)

// DBName is the database file name inside the state directory.
const DBName = "tether.db"

// StateDir returns the state directory: $TETHER_STATE_DIR when set, else
// /var/lib/tether for root, else $XDG_STATE_HOME/tether (default
// ~/.local/state/tether). A --state-dir flag takes precedence over all of
// these and is handled by the caller.
func StateDir() (string, error) {
	if d := os.Getenv("TETHER_STATE_DIR"); d != "" {
		return d, nil
	}
	if os.Geteuid() == 0 {
		return "/var/lib/tether", nil
	}
	if d := os.Getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "tether"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("finding the state directory: %w (set TETHER_STATE_DIR or --state-dir)", err)
	}
	return filepath.Join(home, ".local", "state", "tether"), nil
}

// Options tunes Open. The zero value is valid.
type Options struct {
	// Logger receives errors that must not change a decision (an observe
	// failure, for example). Nil discards them.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// BusyTimeout is how long a writer waits for another process's write
	// lock; 0 means 10 seconds.
	BusyTimeout time.Duration
}

// Store is the mandate database of one state directory. It is safe for
// concurrent use, also by several processes sharing the directory (WAL,
// a busy timeout, and BEGIN IMMEDIATE for every writing transaction). The
// caller must call Close.
type Store struct {
	dir string // the state directory
	db  *sql.DB
	log *slog.Logger
	now func() time.Time

	// faultHook, when set (tests only), runs inside evaluation; an error
	// or panic from it is an evaluation failure.
	faultHook func(Call) error
	parse     parseFunc

	cacheMu sync.Mutex
	cache   map[string]*Matcher // by SHA-256 of the approved text

	// lost counts, per job, observations that could not be stored and
	// whose count is not in the database yet either (the disk was full):
	// the next stored observation of the job adds them to
	// jobs.lost_observations.
	lostMu sync.Mutex
	lost   map[string]int
}

// Open opens (creating if needed) the database in dir and migrates it to the
// current schema.
func Open(dir string, opts Options) (*Store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating state directory %s: %w", dir, err)
	}
	busy := opts.BusyTimeout
	if busy <= 0 {
		busy = 10 * time.Second
	}
	// synchronous=FULL: in WAL mode NORMAL already survives a killed
	// process, but FULL also keeps the last commits across power loss,
	// which approvals and drift records must.
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busy.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(FULL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Set("_txlock", "immediate")
	dsn := "file:" + filepath.Join(dir, DBName) + "?" + q.Encode()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("opening mandate store: %w", err)
	}
	db.SetMaxOpenConns(4)
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	s := &Store{dir: dir, db: db, log: log, now: now, parse: defaultParse, cache: map[string]*Matcher{}, lost: map[string]int{}}
	if err := s.migrate(context.Background()); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// DB exposes the database handle for integrity checks in tests and tools.
func (s *Store) DB() *sql.DB { return s.db }

// migrations are applied in order; migration i moves user_version from i to
// i+1. Never edit a released migration: append a new one.
var migrations = []string{
	`CREATE TABLE jobs (
		name TEXT PRIMARY KEY,
		mode TEXT NOT NULL DEFAULT 'observe' CHECK (mode IN ('observe','enforce')),
		active_version INTEGER,
		interactive_violation TEXT NOT NULL DEFAULT 'block' CHECK (interactive_violation IN ('block','approve')),
		created TEXT NOT NULL
	);
	CREATE TABLE runs (
		job TEXT NOT NULL REFERENCES jobs(name),
		id TEXT NOT NULL,
		started TEXT NOT NULL,
		mode TEXT NOT NULL CHECK (mode IN ('interactive','cron','unknown')),
		cron_identity TEXT NOT NULL DEFAULT '',
		PRIMARY KEY (job, id)
	);
	CREATE TABLE calls (
		id INTEGER PRIMARY KEY AUTOINCREMENT,
		job TEXT NOT NULL,
		run TEXT NOT NULL,
		seq INTEGER NOT NULL,
		tool TEXT NOT NULL,
		call_text TEXT NOT NULL,
		facts TEXT NOT NULL,
		wrote INTEGER NOT NULL,
		outcome TEXT NOT NULL CHECK (outcome IN ('observed','allowed','blocked','escalated')),
		time TEXT NOT NULL,
		UNIQUE (job, run, seq),
		FOREIGN KEY (job, run) REFERENCES runs(job, id)
	);
	CREATE TABLE versions (
		job TEXT NOT NULL REFERENCES jobs(name),
		version INTEGER NOT NULL,
		text TEXT NOT NULL,
		sha256 TEXT NOT NULL,
		status TEXT NOT NULL CHECK (status IN ('pending','approved','superseded')),
		source TEXT NOT NULL,
		created TEXT NOT NULL,
		approved_at TEXT,
		approved_by TEXT,
		PRIMARY KEY (job, version)
	);
	CREATE TABLE approvals (
		id INTEGER PRIMARY KEY AUTOINCREMENT,
		job TEXT NOT NULL,
		version INTEGER NOT NULL,
		action TEXT NOT NULL CHECK (action IN ('approve','undo')),
		sha256 TEXT NOT NULL,
		by TEXT NOT NULL,
		at TEXT NOT NULL
	);
	CREATE TABLE drift (
		job TEXT NOT NULL REFERENCES jobs(name),
		n INTEGER NOT NULL,
		time TEXT NOT NULL,
		run TEXT NOT NULL,
		call_id INTEGER NOT NULL REFERENCES calls(id),
		families TEXT NOT NULL,
		failures TEXT NOT NULL,
		call_text TEXT NOT NULL,
		reason TEXT NOT NULL,
		verdict TEXT NOT NULL CHECK (verdict IN ('block','escalate')),
		status TEXT NOT NULL CHECK (status IN ('open','escalated','widened')),
		widened_version INTEGER,
		PRIMARY KEY (job, n)
	);
	CREATE TABLE audit (
		id INTEGER PRIMARY KEY AUTOINCREMENT,
		time TEXT NOT NULL,
		job TEXT NOT NULL,
		actor TEXT NOT NULL,
		action TEXT NOT NULL,
		detail TEXT NOT NULL
	);
	CREATE INDEX calls_job ON calls(job, id);`,
	// 2: connections the egress proxy saw (see RecordConnection).
	`CREATE TABLE connections (
		id INTEGER PRIMARY KEY AUTOINCREMENT,
		time TEXT NOT NULL,
		job TEXT NOT NULL,
		run TEXT NOT NULL,
		command TEXT NOT NULL,
		host TEXT NOT NULL,
		port INTEGER NOT NULL,
		method TEXT NOT NULL,
		allowed INTEGER NOT NULL,
		rule TEXT NOT NULL,
		reason TEXT NOT NULL,
		bytes_up INTEGER NOT NULL,
		bytes_down INTEGER NOT NULL,
		duration_ns INTEGER NOT NULL,
		error TEXT NOT NULL
	);
	CREATE INDEX connections_job ON connections(job, id);`,
	// 3: a job's interactive_violation is its own only once set (else the
	// profile's applies); identical drift folds into one record with a
	// count and last-seen time; drift can be resolved or dismissed with a
	// reason. SQLite cannot change a CHECK constraint in place, so the
	// drift table is rebuilt with every row kept.
	`ALTER TABLE jobs ADD COLUMN violation_set INTEGER NOT NULL DEFAULT 0;
	UPDATE jobs SET violation_set = 1 WHERE interactive_violation != 'block'
		OR name IN (SELECT job FROM audit WHERE action = 'set' AND detail LIKE 'interactive_violation=%');
	CREATE TABLE drift3 (
		job TEXT NOT NULL REFERENCES jobs(name),
		n INTEGER NOT NULL,
		time TEXT NOT NULL,
		run TEXT NOT NULL,
		call_id INTEGER NOT NULL REFERENCES calls(id),
		families TEXT NOT NULL,
		failures TEXT NOT NULL,
		call_text TEXT NOT NULL,
		reason TEXT NOT NULL,
		verdict TEXT NOT NULL CHECK (verdict IN ('block','escalate')),
		status TEXT NOT NULL CHECK (status IN ('open','escalated','widened','resolved','dismissed')),
		widened_version INTEGER,
		count INTEGER NOT NULL DEFAULT 1,
		last_seen TEXT NOT NULL DEFAULT '',
		last_run TEXT NOT NULL DEFAULT '',
		closed_by TEXT NOT NULL DEFAULT '',
		closed_reason TEXT NOT NULL DEFAULT '',
		PRIMARY KEY (job, n)
	);
	INSERT INTO drift3(job, n, time, run, call_id, families, failures, call_text, reason, verdict, status, widened_version, last_seen, last_run)
		SELECT job, n, time, run, call_id, families, failures, call_text, reason, verdict, status, widened_version, time, run FROM drift;
	DROP TABLE drift;
	ALTER TABLE drift3 RENAME TO drift;`,
	// 4: calls whose observation could not be stored (see Observe).
	`ALTER TABLE jobs ADD COLUMN lost_observations INTEGER NOT NULL DEFAULT 0;`,
}

func (s *Store) migrate(ctx context.Context) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		var v int
		if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
			return fmt.Errorf("reading schema version: %w", err)
		}
		if v > len(migrations) {
			return fmt.Errorf("mandate store schema %d is newer than this tether (%d): upgrade tether", v, len(migrations))
		}
		for i := v; i < len(migrations); i++ {
			if _, err := tx.ExecContext(ctx, migrations[i]); err != nil {
				return fmt.Errorf("migrating mandate store to schema %d: %w", i+1, err)
			}
			if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", i+1)); err != nil {
				return fmt.Errorf("recording schema version %d: %w", i+1, err)
			}
		}
		return nil
	})
}

// tx runs fn in one IMMEDIATE transaction (the DSN's _txlock), committing
// when fn returns nil and rolling back otherwise, so a multi-step change
// lands whole or not at all.
func (s *Store) tx(ctx context.Context, fn func(*sql.Tx) error) (err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("starting transaction: %w", err)
	}
	defer func() {
		if p := recover(); p != nil {
			tx.Rollback()
			panic(p)
		}
		if err != nil {
			tx.Rollback()
		}
	}()
	if err = fn(tx); err != nil {
		return err
	}
	if err = tx.Commit(); err != nil {
		return fmt.Errorf("committing transaction: %w", err)
	}
	return nil
}

func (s *Store) stamp() string { return s.now().UTC().Format(time.RFC3339Nano) }

func (s *Store) audit(ctx context.Context, tx *sql.Tx, job, actor, action, detail string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO audit(time, job, actor, action, detail) VALUES (?,?,?,?,?)`,
		s.stamp(), job, actor, action, detail)
	if err != nil {
		return fmt.Errorf("writing audit log: %w", err)
	}
	return nil
}

// ensureJob creates the job in observe mode if it does not exist.
func (s *Store) ensureJob(ctx context.Context, tx *sql.Tx, job string) error {
	if !ValidJob(job) {
		return fmt.Errorf("job name %q: use 1-64 letters, digits, '.', '_' or '-'", job)
	}
	_, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO jobs(name, created) VALUES (?, ?)`, job, s.stamp())
	if err != nil {
		return fmt.Errorf("creating job %s: %w", job, err)
	}
	return nil
}

// jobRow is a job's current state.
type jobRow struct {
	mode         string
	active       sql.NullInt64
	violations   string // the job's own setting, meaningful when violationSet
	violationSet bool
}

func (s *Store) job(ctx context.Context, q querier, job string) (jobRow, error) {
	var j jobRow
	err := q.QueryRowContext(ctx, `SELECT mode, active_version, interactive_violation, violation_set FROM jobs WHERE name = ?`, job).
		Scan(&j.mode, &j.active, &j.violations, &j.violationSet)
	if errors.Is(err, sql.ErrNoRows) {
		return j, fmt.Errorf("job %s: %w", job, ErrUnknownJob)
	}
	if err != nil {
		return j, fmt.Errorf("reading job %s: %w", job, err)
	}
	return j, nil
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}
