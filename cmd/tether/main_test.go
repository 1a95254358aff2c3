package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/tether-dev/tether/internal/testenv"
)

// TestMain lets testscript run this binary as "tether" inside scripts.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"tether": func() { os.Exit(run(os.Args[1:])) },
	})
}

// TestScripts runs the CLI scripts in testdata/script.
func TestScripts(t *testing.T) {
	testscript.Run(t, scriptParams("testdata/script"))
}

// TestPooledScripts runs the CLI scripts of pooled runs that are too slow
// for testdata/script's company (thousands of execs), in testdata/pool.
func TestPooledScripts(t *testing.T) {
	testscript.Run(t, scriptParams("testdata/pool"))
}

// scriptParams are the scripts' parameters for the scripts in dir.
func scriptParams(dir string) testscript.Params {
	return testscript.Params{
		Dir: dir,
		Setup: func(env *testscript.Env) error {
			env.Setenv("NO_COLOR", "1")
			// $TIME_SCALE, a whole number, stretches a script's waits as
			// testenv.Scaled does the tests' (the TCG guest sets 10).
			env.Setenv("TIME_SCALE", strconv.Itoa(int(math.Ceil(testenv.TimeScale()))))
			// Decisions and mandates go to the script's own state dir,
			// never the machine's /var/lib/tether (scripts may override).
			env.Setenv("TETHER_STATE_DIR", env.WorkDir+"/.tether-state")
			// A sandbox's root is an unprivileged host id: it must
			// traverse to the state root the scripts keep under $WORK
			// (testscript's directories are 0700).
			return traversable(env.WorkDir)
		},
		Condition: scriptCondition,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"sha2env":   sha2env,
			"maxrss":    cmdMaxRSS,
			"httpserve": cmdHTTPServe,
			"jsonget":   cmdJSONGet,
			"jsonstr":   cmdJSONStr,
			"docblocks": cmdDocBlocks,
		},
	}
}

var (
	pendingSHA = regexp.MustCompile(`pending[ _]sha256"?:? "?([0-9a-f]{64})`)
	versionSHA = regexp.MustCompile(`"sha256": "([0-9a-f]{64})"`)
)

// sha2env VAR sets $VAR to the pending SHA-256 that the previous command
// printed (`tether mandate diff`, as text or JSON; or a version's from
// `show --json`), as a reviewer copies it.
func sha2env(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: sha2env VAR")
	}
	out := ts.ReadFile("stdout")
	m := pendingSHA.FindStringSubmatch(out)
	if m == nil {
		m = versionSHA.FindStringSubmatch(out) // `tether mandate show --json`
	}
	if m == nil {
		ts.Fatalf("no pending sha256 in the last command's stdout")
	}
	ts.Setenv(args[0], m[1])
}

// cmdMaxRSS is "maxrss MIB OUTFILE PROGRAM [ARG...]": it runs PROGRAM
// (found in the script's $PATH) with its stdout and stderr in OUTFILE and
// fails when the process's peak resident set exceeded MIB mebibytes, or
// when it exited non-zero (unless negated).
func cmdMaxRSS(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 3 {
		ts.Fatalf("usage: maxrss MIB OUTFILE PROGRAM [ARG...]")
	}
	limit, err := strconv.ParseInt(args[0], 10, 64)
	ts.Check(err)
	outFile := ts.MkAbs(args[1])
	args = args[1:]
	prog := args[1]
	if !strings.Contains(prog, "/") {
		for _, dir := range strings.Split(ts.Getenv("PATH"), ":") {
			if fi, err := os.Stat(dir + "/" + prog); err == nil && !fi.IsDir() {
				prog = dir + "/" + prog
				break
			}
		}
	}
	cmd := exec.Command(prog, args[2:]...)
	cmd.Dir = ts.Getenv("WORK")
	// The script's own values win (exec keeps the last of duplicates).
	cmd.Env = append(os.Environ(), scriptEnv(ts)...)
	out, err := os.Create(outFile)
	ts.Check(err)
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	runErr := cmd.Run()
	if cmd.ProcessState == nil {
		ts.Fatalf("running %s: %v", prog, runErr)
	}
	rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss >> 10 // KiB to MiB
	ts.Logf("peak RSS of %s: %d MiB", args[1], rss)
	if rss > limit {
		ts.Fatalf("peak RSS %d MiB exceeds %d MiB", rss, limit)
	}
	if (runErr != nil) != neg {
		ts.Fatalf("%s: %v (negated: %v)", args[1], runErr, neg)
	}
}

// cmdHTTPServe is "httpserve VAR": it serves HTTP on the host's loopback
// for the rest of the script (every request answered "hello from the
// host") and sets $VAR to its port, for a sandbox to reach through the
// egress proxy.
func cmdHTTPServe(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: httpserve VAR")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "hello from the host\n")
	}))
	ts.Defer(srv.Close)
	_, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	ts.Check(err)
	ts.Setenv(args[0], port)
}

// cmdJSONGet is "jsonget FILE PATH OUT": it decodes the JSON document in
// FILE, follows PATH (dot-separated keys, numbers index arrays) and writes
// the value there to OUT: a string as it is, anything else as JSON.
func cmdJSONGet(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: jsonget FILE PATH OUT")
	}
	var v any
	ts.Check(json.Unmarshal([]byte(ts.ReadFile(args[0])), &v))
	for _, key := range strings.Split(args[1], ".") {
		switch node := v.(type) {
		case map[string]any:
			next, ok := node[key]
			if !ok {
				ts.Fatalf("jsonget: no key %q in %s", key, args[1])
			}
			v = next
		case []any:
			i, err := strconv.Atoi(key)
			if err != nil || i < 0 || i >= len(node) {
				ts.Fatalf("jsonget: no index %q in %s", key, args[1])
			}
			v = node[i]
		default:
			ts.Fatalf("jsonget: %s does not reach into a %T", args[1], v)
		}
	}
	out, ok := v.(string)
	if !ok {
		b, err := json.Marshal(v)
		ts.Check(err)
		out = string(b)
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[2]), []byte(out), 0o644))
}

// cmdJSONStr is "jsonstr FILE OUT": it writes FILE's content to OUT as a
// JSON string, for a request body built in a script.
func cmdJSONStr(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: jsonstr FILE OUT")
	}
	b, err := json.Marshal(ts.ReadFile(args[0]))
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), b, 0o644))
}

// cmdDocBlocks is "docblocks DOC OUT": it writes the ```sh blocks of the
// repository's DOC (a path relative to the repository's root), in order,
// to OUT, so a script runs the documentation as written.
func cmdDocBlocks(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: docblocks DOC OUT")
	}
	data, err := os.ReadFile(filepath.Join("..", "..", args[0]))
	ts.Check(err)
	var b strings.Builder
	for _, m := range shBlock.FindAllStringSubmatch(string(data), -1) {
		b.WriteString(m[1])
		b.WriteString("\n")
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(b.String()), 0o644))
}

// scriptEnv is the part of the script's environment tether reads, as
// KEY=VALUE entries.
func scriptEnv(ts *testscript.TestScript) []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "WORK", "TMPDIR", "TETHER_CONFIG", "TETHER_STATE_DIR", "TETHER_STATE_ROOT", "TETHER_CGROUP_PREFIX", "NO_COLOR"} {
		if v := ts.Getenv(k); v != "" {
			env = append(env, fmt.Sprintf("%s=%s", k, v))
		}
	}
	return env
}

// traversable makes dir and its parents up to the temp dir searchable by
// everyone (0711: listable by nobody else).
func traversable(dir string) error {
	tmp := filepath.Clean(os.TempDir())
	for d := filepath.Clean(dir); d != tmp && d != "/" && strings.HasPrefix(d, tmp+"/"); d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return err
		}
		if err := os.Chmod(d, fi.Mode().Perm()|0o711); err != nil {
			return err
		}
	}
	return nil
}
