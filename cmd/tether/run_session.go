package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/tether-dev/tether/runner"
)

// errSessionNeedsDaemon is what tether run --session says when no daemon
// answers: sessions live in the daemon, there is no local fallback.
var errSessionNeedsDaemon = errors.New(`--session needs a running daemon (tether serve): sessions live in the daemon so that state persists between invocations; start it with "tether serve &" or drop --session for a one-shot sandbox`)

// sessionNameRE is what a CLI session name may look like: it becomes a
// file name, so no separators and no "..". It is compiled on first use, not
// at init: init work runs in both processes of every `tether run`.
var sessionNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`) })

// oneShotOnlyFlags shape the one-shot sandbox; in a daemon session the
// sandbox follows the daemon's profile, so they would be silently ignored.
var oneShotOnlyFlags = []string{"rootfs", "network", "memory", "pids", "cpus", "grace", "output-limit",
	"tmpfs-size", "seccomp", "userns", "env", "state-root", "cgroup-prefix", "config", "yolo"}

// cliSession is what this user remembers about a daemon session: the
// per-user file $XDG_RUNTIME_DIR/tether/cli-sessions/<socket-hash>/<S>.json.
type cliSession struct {
	Name        string    `json:"name"`
	Socket      string    `json:"socket"`
	Session     string    `json:"session"`
	ClientToken string    `json:"client_token"`
	Profile     string    `json:"profile"`
	Job         string    `json:"job,omitempty"`
	Platform    string    `json:"platform,omitempty"`
	Created     time.Time `json:"created"`
}

// runSession is tether run --session: the command goes to the daemon as a
// terminal call in the session's persistent sandbox.
func runSession(cmd *cobra.Command, f runFlags, args []string) error {
	if err := checkSessionName(f.session); err != nil {
		return err
	}
	for _, fl := range oneShotOnlyFlags {
		if cmd.Flags().Changed(fl) {
			return usageErr("--%s does not apply with --session: the session's sandbox follows the daemon's profile (drop --session for a one-shot sandbox)", fl)
		}
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, unix.SIGTERM)
	defer stop()
	if f.closeSession {
		if f.shell != "" || len(args) > 0 {
			return usageErr("--close-session takes no command")
		}
		socket, file, err := sessionFile(f.socket, f.session)
		if err != nil {
			return err
		}
		return closeCLISession(ctx, cmd.OutOrStdout(), socket, file, f.session)
	}
	command, err := commandText(f.shell, args)
	if err != nil {
		return err
	}
	ds, err := attachDaemonSession(ctx, f, cmd.Flags().Changed("platform"), errSessionNeedsDaemon)
	if err != nil {
		return err
	}
	res, err := ds.call(ctx, cmd.ErrOrStderr(), command, f.timeout)
	if err != nil {
		return &exitError{Code: exitWrapper, Err: fmt.Errorf("running in session %s: %w", f.session, err)}
	}
	return reportSessionResult(cmd.OutOrStdout(), cmd.ErrOrStderr(), f.asJSON, res)
}

// checkSessionName refuses a CLI session name that cannot be a file name.
func checkSessionName(name string) error {
	if !sessionNameRE().MatchString(name) {
		return usageErr("--session %q: a name of 1 to 64 letters, digits, '_', '.' or '-'", name)
	}
	if name == "." || name == ".." {
		return usageErr("--session %q is not a usable name", name)
	}
	return nil
}

// sessionFile resolves the daemon's socket (--socket, $TETHER_SOCKET, the
// default) and the file this user remembers session name of it in.
func sessionFile(socketFlag, name string) (socket, file string, err error) {
	socket = socketFlag
	if socket == "" {
		socket = os.Getenv(envSocket)
	}
	if socket == "" {
		socket = runner.DefaultSocket()
	}
	if abs, err := filepath.Abs(socket); err == nil {
		socket = abs
	}
	dir, err := cliSessionDir(socket)
	if err != nil {
		return "", "", &exitError{Code: exitWrapper, Err: err}
	}
	return socket, filepath.Join(dir, name+".json"), nil
}

// daemonSession is a daemon session that tether run --session and tether
// shell --session send terminal calls to, by its CLI name.
type daemonSession struct {
	f        runFlags
	file     string
	platform string
	sess     *cliSession
	fresh    bool // created by this process: a 404 is not a restarted daemon
}

// attachDaemonSession finds the daemon session f.session remembered by
// this user, or creates it (profile f.profile, "" for the daemon's
// default; workspace f.cwd). Without a
// daemon it fails with exit status 125 and noDaemon, which says how to
// start one.
func attachDaemonSession(ctx context.Context, f runFlags, platformSet bool, noDaemon error) (*daemonSession, error) {
	socket, file, err := sessionFile(f.socket, f.session)
	if err != nil {
		return nil, err
	}
	ds := &daemonSession{f: f, file: file, platform: f.gate.platform}
	ds.f.socket = socket
	if ds.platform == "" || ds.platform == "cli" {
		// The daemon cannot ask on this terminal: approvals wait in its
		// gateway queue, answered with tether approvals.
		ds.platform = "gateway"
	}
	if !daemonAnswers(ctx, socket) {
		return nil, &exitError{Code: exitWrapper, Err: noDaemon}
	}
	if ds.sess, err = loadCLISession(file); err != nil {
		return nil, &exitError{Code: exitWrapper, Err: err}
	}
	if ds.sess != nil && f.profile != "" && ds.sess.Profile != f.profile {
		return nil, usageErr("session %s was created with profile %q, not %q: close it first (tether run --session %s --close-session)", f.session, ds.sess.Profile, f.profile, f.session)
	}
	// A session's job and platform are fixed when the daemon creates it.
	if ds.sess != nil && f.gate.job != "" && ds.sess.Job != f.gate.job {
		return nil, usageErr("session %s was created for job %q, not %q: close it first (tether run --session %s --close-session)", f.session, ds.sess.Job, f.gate.job, f.session)
	}
	if ds.sess != nil && ds.sess.Platform != "" && platformSet && ds.sess.Platform != ds.platform {
		return nil, usageErr("session %s was created on platform %q, not %q: close it first (tether run --session %s --close-session)", f.session, ds.sess.Platform, ds.platform, f.session)
	}
	if ds.sess == nil {
		if ds.sess, err = newCLISession(ctx, ds.f, socket, file, ds.platform); err != nil {
			return nil, err
		}
		ds.fresh = true
	}
	return ds, nil
}

// call runs command (with a per-command timeout, 0 for the profile's) as a
// terminal call in the session. When the daemon no longer knows the
// session (it restarted, or it was cleared through the API), nothing ran:
// a new session is started, and stderr says so.
func (ds *daemonSession) call(ctx context.Context, stderr io.Writer, command string, timeout time.Duration) (runner.Result, error) {
	callArgs := map[string]any{"command": command}
	if timeout > 0 {
		callArgs["timeout"] = int64(math.Ceil(timeout.Seconds()))
	}
	raw, err := json.Marshal(callArgs)
	if err != nil {
		return runner.Result{}, err
	}
	calls := []runner.RawCall{{ID: "cli-1", Name: "terminal", Arguments: raw}}
	res, err := callInSession(ctx, stderr, ds.sess, ds.file, calls)
	var apiErr *runner.APIError
	if errors.As(err, &apiErr) && (apiErr.Status == 404 || apiErr.Status == 401 || apiErr.Status == 410) && !ds.fresh {
		fmt.Fprintf(stderr, "tether: the daemon no longer has session %s (%s); starting a new one, earlier state is gone\n", ds.f.session, ds.sess.Session)
		if ds.sess, err = newCLISession(ctx, ds.f, ds.f.socket, ds.file, ds.platform); err != nil {
			return runner.Result{}, err
		}
		ds.fresh = true
		res, err = callInSession(ctx, stderr, ds.sess, ds.file, calls)
	}
	return res, err
}

// daemonAnswers says whether tether serve answers on socket.
func daemonAnswers(ctx context.Context, socket string) bool {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	_, err := runner.NewClient(socket).Health(ctx)
	return err == nil
}

// newCLISession creates a daemon session and remembers it in file.
func newCLISession(ctx context.Context, f runFlags, socket, file, platform string) (*cliSession, error) {
	cwd, err := f.workDir()
	if err != nil {
		return nil, err
	}
	c := runner.NewClient(socket)
	req := runner.SessionRequest{Profile: f.profile, Platform: platform, Job: f.gate.job, Cwd: cwd}
	if f.cwd == "" {
		// The current directory is the workspace only when the profile
		// fixes none, as for a one-shot tether run.
		req.Cwd, req.CallerCwd = "", cwd
	}
	info, err := c.CreateSession(ctx, req)
	var apiErr *runner.APIError
	if errors.As(err, &apiErr) && apiErr.Status == 400 {
		return nil, &exitError{Code: exitUsage, Err: fmt.Errorf("creating session %s: %w", f.session, err)}
	}
	if err != nil {
		return nil, &exitError{Code: exitWrapper, Err: fmt.Errorf("creating session %s: %w", f.session, err)}
	}
	s := &cliSession{Name: f.session, Socket: socket, Session: info.Session, ClientToken: info.ClientToken,
		Profile: info.Profile, Job: f.gate.job, Platform: platform, Created: time.Now().UTC()}
	if err := saveCLISession(file, s); err != nil {
		// Do not leave a session nobody can reach.
		_ = c.ClearSession(context.WithoutCancel(ctx), info.Session)
		return nil, &exitError{Code: exitWrapper, Err: err}
	}
	return s, nil
}

// callInSession sends calls to the session. While a call waits for an
// approval in the daemon's queue, it says on stderr how to answer it.
func callInSession(ctx context.Context, stderr io.Writer, s *cliSession, file string, calls []runner.RawCall) (runner.Result, error) {
	c := runner.NewClient(s.Socket)
	c.ClientToken = s.ClientToken
	evCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	// Stop the hint goroutine before returning, so it never writes after
	// the command's own output.
	defer func() { cancel(); <-done }()
	if events, err := c.Events(evCtx); err != nil {
		close(done)
	} else {
		go func() {
			defer close(done)
			for p := range events {
				if p.Session == s.Session {
					fmt.Fprintf(stderr, "tether: %q waits for approval in the daemon's queue; answer it from another terminal:\n"+
						"  tether approvals approve --session %s --client-token \"$(sed -nE 's/.*\"client_token\": *\"([^\"]+)\".*/\\1/p' %s)\"\n",
						oneLine(p.Command), s.Session, file)
				}
			}
		}()
	}
	out, err := c.Call(ctx, s.Session, "", calls)
	if err != nil {
		return runner.Result{}, err
	}
	if len(out.Results) != 1 {
		return runner.Result{}, fmt.Errorf("the daemon answered %d results for 1 call", len(out.Results))
	}
	return out.Results[0], nil
}

// reportSessionResult prints the tool result and turns it into tether
// run's exit status.
func reportSessionResult(stdout, stderr io.Writer, asJSON bool, res runner.Result) error {
	code, hasCode := res.Output["exit_code"].(float64)
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			return err
		}
	}
	switch {
	case res.Class == runner.ClassRefused || res.Class == runner.ClassPending || res.Class == runner.ClassBlocked:
		return &exitError{Code: exitWrapper, Reported: asJSON,
			Err: &refusal{Stage: string(res.Gate), Reason: fmt.Sprintf("%s: %s", res.Class, res.Message)}}
	case !res.Ran || !hasCode:
		return &exitError{Code: exitWrapper, Reported: asJSON, Err: errors.New(res.Message)}
	}
	if !asJSON {
		s, _ := res.Output["stdout"].(string)
		e, _ := res.Output["stderr"].(string)
		_, _ = io.WriteString(stdout, s)
		_, _ = io.WriteString(stderr, e)
		if t, _ := res.Output["timed_out"].(bool); t {
			fmt.Fprintln(stderr, "tether: timed out")
		}
		if t, _ := res.Output["oom_killed"].(bool); t {
			fmt.Fprintln(stderr, "tether: a process was killed for exceeding the memory limit")
		}
		if t, _ := res.Output["output_truncated"].(bool); t {
			fmt.Fprintln(stderr, "tether: output truncated at the profile's output limit")
		}
	}
	if res.Warning != "" {
		fmt.Fprintf(stderr, "tether: %s\n", res.Warning)
	}
	return exitFor(int(code), nil)
}

// closeCLISession clears the daemon session S and forgets it.
func closeCLISession(ctx context.Context, stdout io.Writer, socket, file, name string) error {
	s, err := loadCLISession(file)
	if err != nil {
		return &exitError{Code: exitWrapper, Err: err}
	}
	if s == nil {
		return &exitError{Code: 1, Err: fmt.Errorf("no session %s to close (none was started with tether run --session %s on %s)", name, name, socket)}
	}
	gone := "closed"
	if daemonAnswers(ctx, socket) {
		c := runner.NewClient(socket)
		c.ClientToken = s.ClientToken
		err := c.ClearSession(ctx, s.Session)
		var apiErr *runner.APIError
		switch {
		case errors.As(err, &apiErr) && (apiErr.Status == 404 || apiErr.Status == 401):
			gone = "already gone from the daemon"
		case err != nil:
			return &exitError{Code: exitWrapper, Err: fmt.Errorf("closing session %s: %w", name, err)}
		}
	} else {
		// A stopped daemon cleared every session when it shut down.
		gone = "already gone (the daemon is not running)"
	}
	if err := os.Remove(file); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return &exitError{Code: exitWrapper, Err: fmt.Errorf("forgetting session %s: %w", name, err)}
	}
	fmt.Fprintf(stdout, "session %s: %s\n", name, gone)
	return nil
}

// cliSessionDir is this user's private directory of remembered sessions
// for the daemon on socket. Every directory on the way that tether
// creates is checked to be the user's own and not writable by others.
func cliSessionDir(socket string) (string, error) {
	var base string
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		base = filepath.Join(d, "tether")
		if err := os.MkdirAll(d, 0o700); err != nil {
			return "", fmt.Errorf("creating %s: %w", d, err)
		}
	} else {
		base = filepath.Join(os.TempDir(), fmt.Sprintf("tether-%d", os.Geteuid()))
	}
	sum := sha256.Sum256([]byte(socket))
	dir := base
	for _, part := range []string{"", "cli-sessions", hex.EncodeToString(sum[:8])} {
		dir = filepath.Join(dir, part)
		if err := privateDir(dir); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// privateDir creates dir (0700) if needed and refuses it unless it is a
// real directory owned by this user that no one else can write to: in a
// shared /tmp another user could have made it first.
func privateDir(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("checking %s: %w", dir, err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.IsDir():
		return fmt.Errorf("refusing %s: not a directory (a symlink?); remove it", dir)
	case !ok || int(st.Uid) != os.Geteuid():
		return fmt.Errorf("refusing %s: not owned by uid %d; remove it or set XDG_RUNTIME_DIR", dir, os.Geteuid())
	case fi.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("refusing %s: writable by group or others (mode %04o); chmod 700 it", dir, fi.Mode().Perm())
	}
	return nil
}

// loadCLISession reads a remembered session; nil when there is none.
func loadCLISession(file string) (*cliSession, error) {
	fd, err := unix.Open(file, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", file, err)
	}
	fh := os.NewFile(uintptr(fd), file)
	defer fh.Close()
	data, err := io.ReadAll(io.LimitReader(fh, 64<<10))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", file, err)
	}
	var s cliSession
	if err := json.Unmarshal(data, &s); err != nil || s.Session == "" || s.ClientToken == "" {
		return nil, fmt.Errorf("reading %s: not a remembered session; remove it", file)
	}
	return &s, nil
}

// saveCLISession writes s to file (0600) atomically.
func saveCLISession(file string, s *cliSession) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), ".session-*")
	if err != nil {
		return fmt.Errorf("remembering session %s: %w", s.Name, err)
	}
	defer os.Remove(tmp.Name())
	// CreateTemp makes the file 0600 already; say it anyway.
	if err = tmp.Chmod(0o600); err == nil {
		_, err = tmp.Write(append(data, '\n'))
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), file)
	}
	if err != nil {
		return fmt.Errorf("remembering session %s: %w", s.Name, err)
	}
	return nil
}

// sessionHelp is the --help paragraph of tether run about --session.
var sessionHelp = strings.TrimSpace(`
--session S runs the command in the persistent sandbox of session S, kept by
the daemon: files in its /tmp, background processes and (with persist_cwd)
the working directory carry over to the next "tether run --session S". It
needs a running daemon (tether serve, on --socket, $TETHER_SOCKET or its
default socket); without one it exits 125:
` + errSessionNeedsDaemon.Error() + `.
The first run creates the daemon session (profile --profile, else the
daemon's default profile; workspace --cwd, else the current directory when
the profile fixes none; --job and --platform, fixed for the session's
life) and remembers its id and client token in
$XDG_RUNTIME_DIR/tether/cli-sessions/<socket-hash>/S.json (else
$TMPDIR/tether-<uid>/…), readable by this user only. If the daemon has
restarted, a new session is started and stderr says so. The sandbox follows
the daemon's profile: --rootfs, --network, --memory, --env, --yolo and the
other sandbox flags are refused; --timeout applies per command. Approvals
wait in the daemon's queue (tether approvals --session S). "tether shell
--session S" attaches a line-by-line shell to the same session.
--close-session clears the session and forgets it. Names: 1-64 of A-Z a-z 0-9 _ . -`)
