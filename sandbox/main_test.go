package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tether-dev/tether/internal/testenv"
)

// init makes the test binary act as the container init when libcontainer
// re-executes it (as runc's libcontainer/integration tests do).
// It also pins the main goroutine to the main thread, so that the main
// thread (whose view /proc/self shows) never runs libcontainer code that
// enters a container's mount namespace.
func init() {
	runtime.LockOSThread()
	if IsInit() {
		Init()
	}
}

// helperEnv makes the test binary a stand-in tether that starts a long
// command and waits to be killed (TestGC* simulate a crash with it).
const helperEnv = "TETHER_SANDBOX_TEST_HELPER"

// rootlessEnv makes the test binary run one script in a sandbox (as
// whatever user started it) and print the Result as JSON on stdout; the
// value is "STATE_ROOT:WORKSPACE", the script is in rootlessScriptEnv.
const (
	rootlessEnv       = "TETHER_SANDBOX_TEST_ROOTLESS"
	rootlessScriptEnv = "TETHER_SANDBOX_TEST_SCRIPT"
	// rootlessGateEnv names a program the exec gate refuses.
	rootlessGateEnv = "TETHER_SANDBOX_TEST_GATE"
	// rootlessNoExecEnv is Config.NoExec, colon-separated.
	rootlessNoExecEnv = "TETHER_SANDBOX_TEST_NOEXEC"
	// rootlessLandlockEnv confines the sandbox to the workspace's ok/;
	// "plan" adds the mount plan (Landlock.ReadOnlyWorkspace).
	rootlessLandlockEnv = "TETHER_SANDBOX_TEST_LANDLOCK"
	// rootlessSessionEnv runs the script in a session instead, then the
	// value of rootlessSessionEnv in the background of the same session;
	// before the session closes, the Output gets "live: " and the host's
	// view of each path named by rootlessLiveEnv (space-separated,
	// workspace-relative): "absent" or "present".
	rootlessSessionEnv = "TETHER_SANDBOX_TEST_SESSION"
	rootlessLiveEnv    = "TETHER_SANDBOX_TEST_LIVE"
	// rootlessBindEnv names a directory bound writable at its own path.
	rootlessBindEnv = "TETHER_SANDBOX_TEST_BIND"
)

func TestMain(m *testing.M) {
	if spec := os.Getenv(helperEnv); spec != "" {
		os.Exit(helperMain(spec))
	}
	if mode := os.Getenv(ownerEnv); mode != "" {
		os.Exit(ownerMain(mode))
	}
	if spec := os.Getenv(rootlessEnv); spec != "" {
		os.Exit(rootlessMain(spec))
	}
	if os.Getenv(sealedTestEnv) != "" {
		os.Exit(sealedMain())
	}
	if spec := os.Getenv(poolClientEnv); spec != "" {
		os.Exit(poolClientMain(spec))
	}
	// A supervisor's start is the way out of a hang, not an assertion of
	// speed: under TCG, with a dozen sandboxes starting beside it on one
	// emulated CPU, one took more than 20 s to say it was up
	// (TestConcurrentSandboxesSharePrefix in the cgroup v2 guest).
	readyTimeout = testenv.Scaled(readyTimeout)
	code := m.Run()
	// The binary's cgroup prefix is its own: whatever a test (or a
	// sandbox torn down beside another) left of it, empty directories in
	// any hierarchy the unified tree included, goes with the run.
	if os.Geteuid() == 0 {
		if err := removeCgroupTree("/" + testPrefix); err != nil {
			fmt.Fprintln(os.Stderr, "removing the test cgroup prefix:", err)
			if code == 0 {
				code = 1
			}
		}
	}
	os.Exit(code)
}

// helperMain runs "sleep 600" in a sandbox under the state root and cgroup
// prefix given as "STATE_ROOT:PREFIX".
func helperMain(spec string) int {
	var state, prefix string
	for i := len(spec) - 1; i >= 0; i-- {
		if spec[i] == ':' {
			state, prefix = spec[:i], spec[i+1:]
			break
		}
	}
	// The GC tests reap by hand what this crash leaves.
	keeperOff = true
	r := &Runner{StateRoot: state, CgroupPrefix: prefix}
	res, err := r.Run(context.Background(), Config{}, Command{Args: []string{"sleep", "600"}})
	fmt.Fprintln(os.Stderr, "helper: finished unexpectedly:", res, err)
	return 3
}

func rootlessMain(spec string) int {
	state, ws, _ := strings.Cut(spec, ":")
	r := &Runner{StateRoot: state}
	if os.Getenv(rootlessGateEnv) != "" {
		r.ExecGate = newRefuse(os.Getenv(rootlessGateEnv)).gate
	}
	var out bytes.Buffer
	cfg := Config{Workspace: ws, Limits: Limits{MemoryBytes: 64 << 20, Pids: 50, Timeout: 30 * time.Second}}
	if os.Getenv(rootlessLandlockEnv) != "" {
		cfg.Landlock = &Landlock{Trees: []string{ws + "/ok"}, ReadOnlyWorkspace: os.Getenv(rootlessLandlockEnv) == "plan"}
	}
	if b := os.Getenv(rootlessBindEnv); b != "" {
		cfg.Binds = append(cfg.Binds, Bind{Source: b})
	}
	if p := os.Getenv(rootlessNoExecEnv); p != "" {
		cfg.NoExec = strings.Split(p, ":")
	}
	var res *Result
	var err error
	if bg := os.Getenv(rootlessSessionEnv); bg != "" {
		res, err = rootlessSession(state, ws, cfg, bg, &out)
	} else {
		res, err = r.Run(context.Background(), cfg, Command{Shell: os.Getenv(rootlessScriptEnv), Stdout: &out, Stderr: &out})
	}
	doc := struct {
		Result *Result
		Output string
		Error  string
	}{res, out.String(), ""}
	if err != nil {
		doc.Error = err.Error()
	}
	_ = json.NewEncoder(os.Stdout).Encode(doc)
	return 0
}

// rootlessSession is rootlessMain's session mode (rootlessSessionEnv).
func rootlessSession(state, ws string, cfg Config, bg string, out *bytes.Buffer) (*Result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	m := &Sessions{StateRoot: state}
	defer m.Close()
	s, err := m.Open(ctx, "default", "rootless", SessionSpec{Config: cfg})
	if err != nil {
		return nil, err
	}
	res, err := s.Run(ctx, Command{Shell: os.Getenv(rootlessScriptEnv), Stdout: out, Stderr: out})
	if err != nil {
		return nil, err
	}
	p, err := s.Start(Command{Shell: bg, Stdout: out, Stderr: out})
	if err != nil {
		return nil, err
	}
	if _, err := p.Wait(ctx); err != nil {
		return nil, err
	}
	out.WriteString("live:")
	for _, rel := range strings.Fields(os.Getenv(rootlessLiveEnv)) {
		// Followed: a reservation is a dangling link, absent to a reader.
		if _, err := os.Stat(ws + "/" + rel); err == nil {
			fmt.Fprintf(out, " %s=present", rel)
		} else {
			fmt.Fprintf(out, " %s=absent", rel)
		}
	}
	out.WriteString("\n")
	return res, m.CloseSession("default", "rootless")
}
