package mandate

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Connection is one connection attempt a sandboxed command made through
// tether's egress proxy, allowed or not. Job and Run are empty for a
// command that belongs to no job.
type Connection struct {
	Time      time.Time     `json:"time"`
	Job       string        `json:"job,omitempty"`
	Run       string        `json:"run,omitempty"`
	Command   string        `json:"command,omitempty"` // the proxy's command attribution
	Host      string        `json:"host"`
	Port      int           `json:"port"`
	Method    string        `json:"method"` // HTTP method, CONNECT or SOCKS5
	Allowed   bool          `json:"allowed"`
	Rule      string        `json:"rule,omitempty"`   // the rule that decided
	Reason    string        `json:"reason,omitempty"` // the refusal as the program saw it
	BytesUp   int64         `json:"bytes_up"`
	BytesDown int64         `json:"bytes_down"`
	Duration  time.Duration `json:"duration_ns"`
	Err       string        `json:"error,omitempty"`
}

// RecordConnection appends c to the connection log. It is a record of what
// happened, never a decision: callers log its error and go on.
func (s *Store) RecordConnection(ctx context.Context, c Connection) error {
	if c.Time.IsZero() {
		c.Time = time.Now()
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO connections
			(time, job, run, command, host, port, method, allowed, rule, reason, bytes_up, bytes_down, duration_ns, error)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			c.Time.UTC().Format(time.RFC3339Nano), c.Job, c.Run, c.Command, c.Host, c.Port, c.Method,
			c.Allowed, c.Rule, c.Reason, c.BytesUp, c.BytesDown, int64(c.Duration), c.Err)
		if err != nil {
			return fmt.Errorf("recording connection to %s: %w", c.Host, err)
		}
		return nil
	})
}

// Connections returns up to limit connection records of job ("" for
// commands of no job), newest first.
func (s *Store) Connections(ctx context.Context, job string, limit int) ([]Connection, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT time, job, run, command, host, port, method, allowed, rule, reason,
		bytes_up, bytes_down, duration_ns, error FROM connections WHERE job = ? ORDER BY id DESC LIMIT ?`, job, limit)
	if err != nil {
		return nil, fmt.Errorf("reading connections of %q: %w", job, err)
	}
	defer rows.Close()
	var out []Connection
	for rows.Next() {
		var c Connection
		var when string
		var dur int64
		if err := rows.Scan(&when, &c.Job, &c.Run, &c.Command, &c.Host, &c.Port, &c.Method, &c.Allowed, &c.Rule,
			&c.Reason, &c.BytesUp, &c.BytesDown, &dur, &c.Err); err != nil {
			return nil, fmt.Errorf("reading connections of %q: %w", job, err)
		}
		c.Time, _ = time.Parse(time.RFC3339Nano, when)
		c.Duration = time.Duration(dur)
		out = append(out, c)
	}
	return out, rows.Err()
}
