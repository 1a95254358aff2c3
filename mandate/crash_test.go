package mandate

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	crashDirEnv = "TETHER_MANDATE_CRASH_DIR"
	crashBatch  = 25 // rows per transaction
)

// TestCrashWriterChild is the writer process of TestCrashSafety: it commits
// batches of crashBatch calls, one transaction each, and prints each batch
// number after its commit, until it is killed.
func TestCrashWriterChild(t *testing.T) {
	dir := os.Getenv(crashDirEnv)
	if dir == "" {
		t.Skip("run only as TestCrashSafety's child process")
	}
	s, err := Open(dir, Options{})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	ctx := context.Background()
	for b := 1; ; b++ {
		run := Run{Job: "crash", ID: "b" + strconv.Itoa(b), Mode: RunCron}
		err := s.tx(ctx, func(tx *sql.Tx) error {
			if err := s.ensureJob(ctx, tx, "crash"); err != nil {
				return err
			}
			for i := 0; i < crashBatch; i++ {
				c := term("git status --short " + strconv.Itoa(i))
				if _, err := s.insertCall(ctx, tx, run, c, Facts{Tool: ToolTerminal}, "observed"); err != nil {
					return err
				}
			}
			return s.audit(ctx, tx, "crash", "test", "batch", run.ID)
		})
		if err != nil {
			fmt.Println("tx:", err)
			os.Exit(2)
		}
		fmt.Println(b)
	}
}

// TestCrashSafety kills a writer mid-way with SIGKILL and checks that the
// store is intact: integrity_check ok, every committed batch whole, and no
// batch half-written.
func TestCrashSafety(t *testing.T) {
	if os.Getenv(crashDirEnv) != "" {
		t.Skip("child")
	}
	dir := t.TempDir()
	// Create the schema first so the child starts writing at once.
	s0, err := Open(dir, Options{})
	require.NoError(t, err)
	require.NoError(t, s0.Close())

	for round := 0; round < 3; round++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashWriterChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashDirEnv+"="+dir)
		out, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		sc := bufio.NewScanner(out)
		last := 0
		target := 20 + round*7
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			n, err := strconv.Atoi(line)
			require.NoError(t, err, "child said %q", line)
			last = n
			if n >= target {
				break
			}
		}
		require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		_ = cmd.Wait()
		require.GreaterOrEqual(t, last, target, "child stopped early")

		s, err := Open(dir, Options{})
		require.NoError(t, err)
		var ok string
		require.NoError(t, s.db.QueryRow("PRAGMA integrity_check").Scan(&ok))
		assert.Equal(t, "ok", ok)

		rows, err := s.db.Query(`SELECT run, COUNT(*), MAX(seq) FROM calls WHERE job = 'crash' GROUP BY run`)
		require.NoError(t, err)
		batches := map[string]int{}
		for rows.Next() {
			var run string
			var n, maxSeq int
			require.NoError(t, rows.Scan(&run, &n, &maxSeq))
			assert.Equal(t, crashBatch, n, "batch %s is whole", run)
			assert.Equal(t, crashBatch, maxSeq)
			batches[run] = n
		}
		require.NoError(t, rows.Err())
		rows.Close()
		// Every batch the child reported committed is there.
		for b := 1; b <= last; b++ {
			_, found := batches["b"+strconv.Itoa(b)]
			assert.True(t, found, "committed batch b%d survives the kill", b)
		}
		var audits int
		require.NoError(t, s.db.QueryRow(`SELECT COUNT(*) FROM audit WHERE job = 'crash'`).Scan(&audits))
		assert.Equal(t, len(batches), audits, "one audit row per whole batch: no transaction landed in part")
		require.NoError(t, s.Close())
		// Start the next round from a clean slate of batch numbers.
		s2, err := Open(dir, Options{})
		require.NoError(t, err)
		_, err = s2.db.Exec(`DELETE FROM calls WHERE job = 'crash'; DELETE FROM runs WHERE job = 'crash'; DELETE FROM audit WHERE job = 'crash'`)
		require.NoError(t, err)
		require.NoError(t, s2.Close())
	}
}
