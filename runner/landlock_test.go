package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/tether-dev/tether/approval"
	"github.com/tether-dev/tether/config"
	"github.com/tether-dev/tether/internal/testenv"
	"github.com/tether-dev/tether/mandate"
)

const landlockSecret = "TOKEN-7f3a9c-NEVER-SHOWN"

// landlockRunner is gateRunner's set-up with the workspace outside /tmp
// (whose sandbox rule would cover it) holding a small project and a
// secret: src/check.sh, run by make test, reads src/data.txt, reads the
// file named in src/extra when there is one, appends to the file named
// in src/extra-write when there is one, and makes the file named in
// src/extra-meta group-readable (0640; no sandbox may make it world-writable) and back-dates it, and removes the file
// named in src/extra-rm: what a poisoned
// dependency would do, invisible in the command text "make test".
func landlockRunner(t *testing.T) (*Runner, *mandate.Store, string) {
	t.Helper()
	sb := testSandbox(t)
	requireLandlockAudit(t)
	dir, err := os.MkdirTemp("/var/tmp", "tether-llr-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	ws := filepath.Join(dir, "ws")
	for _, d := range []string{"src", "secret"} {
		require.NoError(t, os.MkdirAll(filepath.Join(ws, d), 0o755))
	}
	files := map[string]string{
		"Makefile": "test:\n\tsh src/check.sh\n",
		"src/check.sh": "cat src/data.txt\nif [ -f src/extra ]; then f=$(cat src/extra); cat \"$f\"; fi\n" +
			"if [ -f src/extra-write ]; then f=$(cat src/extra-write); echo tampered >> \"$f\"; fi\n" +
			"if [ -f src/extra-meta ]; then f=$(cat src/extra-meta); chmod 0640 \"$f\"; touch -d 2001-01-01 \"$f\"; fi\n" +
			"if [ -f src/extra-rm ]; then rm -f \"$(cat src/extra-rm)\"; fi\necho check-done\n",
		"src/data.txt": "data-ok\n",
		"secret/token": landlockSecret + "\n",
	}
	for name, text := range files {
		require.NoError(t, os.WriteFile(filepath.Join(ws, name), []byte(text), 0o644))
	}
	y := fmt.Sprintf("state_dir: %s\nprofiles:\n  default:\n    terminal:\n      cwd: %s\n", filepath.Join(dir, "state"), ws)
	cfg, err := config.Parse("test.yaml", []byte(y), dir)
	require.NoError(t, err)
	store := testStore(t, cfg)
	eng := testEngine(t, cfg, approval.Options{Mandate: mandate.NewHook(store, cfg)})
	sessions := testSessions(t, sb)
	return &Runner{Config: cfg, Engine: eng, Mandates: store, Sandbox: sb, Sessions: sessions}, store, ws
}

// requireLandlockAudit skips (fails under REQUIRE_SANDBOX when Landlock
// is missing) unless the kernel logs Landlock's refusals: the refusals
// these tests read as drift are its audit records, which ABI 7 brought.
// Below it the ruleset holds and the result lists landlock_audit instead
// (a documented limit: sandbox's TestLandlockBelowABI7).
func requireLandlockAudit(t *testing.T) {
	t.Helper()
	// LANDLOCK_CREATE_RULESET_VERSION
	switch v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, 1); {
	case errno != 0:
		testenv.SkipOrFail(t, "the kernel has no Landlock")
	case v < 7:
		t.Skipf("the kernel's Landlock ABI is %d: its refusals are not logged below 7 (landlock_audit)", v)
	}
}

// A job observed, compiled and approved runs its workload under a
// Landlock ruleset made from its paths family: the workload works, a
// poisoned script's read of a file outside the mandate is refused by the
// kernel (EACCES), its content never reaches the output, and the refusal
// is a paths drift record naming the path the kernel refused, which
// widening turns into that exact rule. The same poisoned run of a job
// without an approved mandate (no ruleset) reads the secret, so the
// assertions can fail. One-shot sandboxes, then a session's.
func TestLandlockEnforcedMandate(t *testing.T) {
	r, store, ws := landlockRunner(t)
	ctx := t.Context()
	observe := Batch{Platform: approval.PlatformCron, Job: "nightly", Session: "obs", Calls: []RawCall{
		rawCall("1", "read_file", args("path", "Makefile")),
		rawCall("2", "read_file", args("path", "src/check.sh")),
		rawCall("3", "read_file", args("path", "src/data.txt")),
		rawCall("4", "read_file", args("path", "src/extra-notes.txt")),
		terminalCall("5", "make -s test"),
	}}
	require.NoError(t, os.WriteFile(filepath.Join(ws, "src", "extra-notes.txt"), []byte("n\n"), 0o644))
	for _, res := range r.Execute(ctx, observe, nil).Results {
		require.Contains(t, []Class{ClassSucceeded, ClassFailed}, res.Class, res.Message)
	}

	// Control: a job with no approved mandate (another job, observing,
	// so that what the poisoned run touches is not this job's evidence)
	// runs the poisoned script with no ruleset, and it reads the secret.
	require.NoError(t, os.WriteFile(filepath.Join(ws, "src", "extra"), []byte("secret/token\n"), 0o644))
	ctl := r.Execute(ctx, Batch{Platform: approval.PlatformCron, Job: "unapproved", Session: "ctl", Calls: []RawCall{terminalCall("1", "make -s test")}}, nil).Results[0]
	assert.Contains(t, ctl.Output["stdout"], landlockSecret, "without a ruleset the attack works: %v", ctl.Output)
	assert.Nil(t, ctl.Output["paths_refused"])
	require.NoError(t, os.Remove(filepath.Join(ws, "src", "extra")))
	// And it writes a file the job only ever read.
	data := filepath.Join(ws, "src", "data.txt")
	require.NoError(t, os.WriteFile(filepath.Join(ws, "src", "extra-write"), []byte("src/data.txt\n"), 0o644))
	r.Execute(ctx, Batch{Platform: approval.PlatformCron, Job: "unapproved", Session: "ctl", Calls: []RawCall{terminalCall("1", "make -s test")}}, nil)
	got, err := os.ReadFile(data)
	require.NoError(t, err)
	assert.Equal(t, "data-ok\ntampered\n", string(got), "without a ruleset the write works")
	require.NoError(t, os.WriteFile(data, []byte("data-ok\n"), 0o644))
	require.NoError(t, os.Remove(filepath.Join(ws, "src", "extra-write")))
	// And it changes the metadata of a file outside everything the job
	// touched, which Landlock does not govern.
	token := filepath.Join(ws, "secret", "token")
	tokenBefore, err := os.Stat(token)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(ws, "src", "extra-meta"), []byte("secret/token\n"), 0o644))
	r.Execute(ctx, Batch{Platform: approval.PlatformCron, Job: "unapproved", Session: "ctl", Calls: []RawCall{terminalCall("1", "make -s test")}}, nil)
	fi, err := os.Stat(token)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm(), "without a ruleset the chmod works")
	require.NoError(t, os.Chmod(token, tokenBefore.Mode().Perm()))
	require.NoError(t, os.Chtimes(token, tokenBefore.ModTime(), tokenBefore.ModTime()))
	require.NoError(t, os.Remove(filepath.Join(ws, "src", "extra-meta")))
	// And it removes it.
	require.NoError(t, os.WriteFile(filepath.Join(ws, "src", "extra-rm"), []byte("secret/token\n"), 0o644))
	r.Execute(ctx, Batch{Platform: approval.PlatformCron, Job: "unapproved", Session: "ctl", Calls: []RawCall{terminalCall("1", "make -s test")}}, nil)
	assert.NoFileExists(t, token, "without a ruleset the rm works")
	require.NoError(t, os.WriteFile(token, []byte(landlockSecret+"\n"), tokenBefore.Mode().Perm()))
	require.NoError(t, os.Chtimes(token, tokenBefore.ModTime(), tokenBefore.ModTime()))
	require.NoError(t, os.Remove(filepath.Join(ws, "src", "extra-rm")))
	tokenBefore, err = os.Stat(token)
	require.NoError(t, err)

	v, err := store.Compile(ctx, "nightly")
	require.NoError(t, err)
	t.Logf("compiled mandate:\n%s", v.Text)
	assert.Contains(t, v.Text, `"read:src/**"`, "the job only read src: read-only")
	_, err = store.ApproveReviewed(ctx, "nightly", v.Number, v.SHA256, "test")
	require.NoError(t, err)

	// The observe-mode session holds no ruleset: it does not run the
	// enforced job's calls (its processes cannot be given one now).
	stale := r.Execute(ctx, Batch{Platform: approval.PlatformCron, Job: "nightly", Session: "obs", Calls: []RawCall{terminalCall("1", "make -s test")}}, nil).Results[0]
	assert.False(t, stale.Ran, "%s", stale.Message)
	assert.Contains(t, stale.Message, "another version of the job's mandate")

	for _, session := range []string{"", "run-2"} {
		t.Run("session="+session, func(t *testing.T) {
			run := func(cmd string) Result {
				return r.Execute(ctx, Batch{Platform: approval.PlatformCron, Job: "nightly", Session: session,
					Calls: []RawCall{terminalCall("1", cmd)}}, nil).Results[0]
			}
			ok := run("make -s test")
			require.Equal(t, ClassSucceeded, ok.Class, "%s %v", ok.Message, ok.Output)
			assert.Contains(t, ok.Output["stdout"], "data-ok")
			assert.Nil(t, ok.Output["paths_refused"])

			require.NoError(t, os.WriteFile(filepath.Join(ws, "src", "extra"), []byte("secret/token\n"), 0o644))
			defer os.Remove(filepath.Join(ws, "src", "extra"))
			bad := run("make -s test")
			assert.NotContains(t, fmt.Sprint(bad.Output), landlockSecret, "the secret reached the result")
			assert.NotContains(t, bad.Message, landlockSecret)
			require.Equal(t, ClassBlocked, bad.Class, "%s %v", bad.Message, bad.Output)
			assert.Equal(t, GateLandlock, bad.Gate)
			assert.True(t, bad.Ran)
			assert.Equal(t, EffectPossible, bad.Effect)
			assert.Contains(t, bad.Output["stderr"], "Permission denied")
			refused, _ := bad.Output["paths_refused"].([]map[string]any)
			require.NotEmpty(t, refused, "%v", bad.Output)
			assert.Equal(t, filepath.Join(ws, "secret", "token"), refused[0]["path"])
			id, _ := refused[0]["drift_id"].(string)
			require.NotEmpty(t, id, "the refusal is drift")

			recs, err := store.Drift(ctx, "nightly")
			require.NoError(t, err)
			var rec *mandate.DriftRecord
			for i := range recs {
				if recs[i].ID == id {
					rec = &recs[i]
				}
			}
			require.NotNil(t, rec)
			assert.Equal(t, []string{mandate.FamilyPaths}, rec.Families)
			assert.Contains(t, rec.Reason, "secret/token")
			w, err := store.WidenDryRun(ctx, "nightly", id, false)
			require.NoError(t, err)
			require.Len(t, w.Added, 1)
			assert.True(t, strings.HasSuffix(w.Added[0].Value, "secret/token"), "widening covers the kernel's path: %v", w.Added)
			assert.True(t, strings.HasPrefix(w.Added[0].Value, "paths: "+mandate.ReadOnlyPrefix), "a refused read widens to a read-only rule: %v", w.Added)

			// A write to a file the mandate allows reading is refused by
			// the kernel (the read-only workspace of the mount plan:
			// the shell's >> opens with O_CREAT, which the creation gate
			// performs and reports), and its drift says write.
			require.NoError(t, os.Remove(filepath.Join(ws, "src", "extra")))
			require.NoError(t, os.WriteFile(filepath.Join(ws, "src", "extra-write"), []byte("src/data.txt\n"), 0o644))
			defer os.Remove(filepath.Join(ws, "src", "extra-write"))
			wr := run("make -s test")
			require.Equal(t, ClassBlocked, wr.Class, "%s %v", wr.Message, wr.Output)
			assert.Equal(t, GateLandlock, wr.Gate)
			assert.Contains(t, wr.Output["stdout"], "data-ok", "reading it still works")
			got, err := os.ReadFile(data)
			require.NoError(t, err)
			assert.Equal(t, "data-ok\n", string(got), "from the host: the read-only file is unchanged")
			refused, _ = wr.Output["paths_refused"].([]map[string]any)
			require.NotEmpty(t, refused, "%v", wr.Output)
			assert.Equal(t, data, refused[0]["path"])
			assert.Contains(t, refused[0]["blockers"], "mount.read_only")
			id, _ = refused[0]["drift_id"].(string)
			recs, err = store.Drift(ctx, "nightly")
			require.NoError(t, err)
			rec = nil
			for i := range recs {
				if recs[i].ID == id {
					rec = &recs[i]
				}
			}
			require.NotNil(t, rec)
			assert.Contains(t, rec.Reason, "write src/data.txt")
			assert.Equal(t, "open", refused[0]["op"], "the write is the shell's open(O_CREAT)")
			w, err = store.WidenDryRun(ctx, "nightly", id, false)
			require.NoError(t, err)
			require.Len(t, w.Added, 1)
			assert.Equal(t, "paths: src/data.txt", w.Added[0].Value, "a refused write widens to a read-write rule")

			// The metadata of a file outside the mandate is refused by the
			// read-only workspace (the mount plan), seen from the host.
			require.NoError(t, os.WriteFile(filepath.Join(ws, "src", "extra-meta"), []byte("secret/token\n"), 0o644))
			defer os.Remove(filepath.Join(ws, "src", "extra-meta"))
			mr := run("make -s test")
			assert.Contains(t, mr.Output["stderr"], "Read-only file system", "%v", mr.Output)
			fi, err := os.Stat(token)
			require.NoError(t, err)
			assert.Equal(t, tokenBefore.Mode(), fi.Mode(), "from the host: the mode of a file outside the mandate changed")
			assert.Equal(t, tokenBefore.ModTime(), fi.ModTime(), "from the host: the times of a file outside the mandate changed")
			// The chmod is drift that says chmod (not write).
			refused, _ = mr.Output["paths_refused"].([]map[string]any)
			id = ""
			for _, p := range refused {
				if p["path"] == token && p["op"] == "chmod" {
					id, _ = p["drift_id"].(string)
				}
			}
			require.NotEmpty(t, id, "the refused chmod is drift: %v", refused)
			rec = driftRecord(t, store, id)
			assert.Contains(t, rec.Reason, "chmod secret/token")

			// Its removal is refused by the read-only workspace before
			// Landlock looks; the gate reports it, and it is drift.
			require.NoError(t, os.Remove(filepath.Join(ws, "src", "extra-meta")))
			require.NoError(t, os.Remove(filepath.Join(ws, "src", "extra-write")))
			require.NoError(t, os.WriteFile(filepath.Join(ws, "src", "extra-rm"), []byte("secret/token\n"), 0o644))
			defer os.Remove(filepath.Join(ws, "src", "extra-rm"))
			rm := run("make -s test")
			require.Equal(t, ClassBlocked, rm.Class, "%s %v", rm.Message, rm.Output)
			assert.Contains(t, rm.Output["stderr"], "Read-only file system", "%v", rm.Output)
			got, err = os.ReadFile(token)
			require.NoError(t, err, "from the host: the file outside the mandate was removed")
			assert.Equal(t, landlockSecret+"\n", string(got))
			refused, _ = rm.Output["paths_refused"].([]map[string]any)
			require.NotEmpty(t, refused, "%v", rm.Output)
			assert.Equal(t, token, refused[0]["path"])
			assert.Contains(t, refused[0]["blockers"], "mount.read_only")
			id, _ = refused[0]["drift_id"].(string)
			require.NotEmpty(t, id, "the refused rm is drift")
			recs, err = store.Drift(ctx, "nightly")
			require.NoError(t, err)
			rec = nil
			for i := range recs {
				if recs[i].ID == id {
					rec = &recs[i]
				}
			}
			require.NotNil(t, rec)
			assert.Equal(t, []string{mandate.FamilyPaths}, rec.Families)
			assert.Contains(t, rec.Reason, "unlink secret/token", "the drift of an rm says unlink, not write")
			assert.Equal(t, "unlink", refused[0]["op"])
		})
	}
}

// driftRecord returns the drift record id of job nightly.
func driftRecord(t *testing.T, store *mandate.Store, id string) *mandate.DriftRecord {
	t.Helper()
	recs, err := store.Drift(t.Context(), "nightly")
	require.NoError(t, err)
	for i := range recs {
		if recs[i].ID == id {
			return &recs[i]
		}
	}
	require.FailNow(t, "no drift record "+id)
	return nil
}

// TestKernelPolicyLeavesOutLinkedFiles: an exact rule whose file has
// more than one name is not granted (the kernel's rule would grant the
// file by every name); a file with one name, a tree and a missing file
// are as before.
func TestKernelPolicyLeavesOutLinkedFiles(t *testing.T) {
	ws := t.TempDir()
	for _, d := range []string{"ok", "secret", "tree"} {
		require.NoError(t, os.Mkdir(filepath.Join(ws, d), 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(ws, "secret", "key"), []byte("s"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "ok", "file"), []byte("f"), 0o644))
	require.NoError(t, os.Link(filepath.Join(ws, "secret", "key"), filepath.Join(ws, "ok", "x")))
	ll := KernelPolicy(&approval.MandatePaths{Rules: []string{"read:ok/x", "ok/file", "read:ok/missing", "tree/**", "secret/key"}}, ws, false)
	require.NotNil(t, ll)
	assert.Equal(t, []string{filepath.Join(ws, "ok", "file")}, ll.Files, "secret/key has two names")
	assert.Equal(t, []string{filepath.Join(ws, "ok", "missing")}, ll.ReadFiles, "ok/x has two names")
	assert.Equal(t, []string{filepath.Join(ws, "tree")}, ll.Trees)
}

// TestLandlockEnforcedPorts: an enforced mandate whose hosts family names
// ports (here: none at first) holds the job's TCP connects to them in the
// kernel. The job's script, seen doing nothing in observe mode, later
// listens on two loopback ports of its sandbox and connects to both: the
// kernel refuses each connect (EACCES), each refusal is a hosts drift
// record naming the address the kernel refused, and widening one adds
// the rule "127.0.0.1:PORT"; approved, the connect to that port works and
// the other is still refused. Before, an enforced sandbox's connects were
// not held at all (both connected, no drift).
func TestLandlockEnforcedPorts(t *testing.T) {
	r, store, ws := landlockRunner(t)
	ctx := t.Context()
	script := `import errno, os, socket
if os.path.exists("src/ports"):
    ports = [int(p) for p in open("src/ports").read().split()]
    ls = []
    for p in ports:
        l = socket.socket(); l.bind(("127.0.0.1", p)); l.listen(1); ls.append(l)
    for p in ports:
        c = socket.socket()
        try:
            c.connect(("127.0.0.1", p)); print(p, "connected")
        except OSError as e:
            print(p, errno.errorcode[e.errno])
print("conn-done")
`
	require.NoError(t, os.WriteFile(filepath.Join(ws, "src", "conn.py"), []byte(script), 0o644))
	run := func(session string) Result {
		return r.Execute(ctx, Batch{Platform: approval.PlatformCron, Job: "ported", Session: session,
			Calls: []RawCall{terminalCall("1", "python3 src/conn.py")}}, nil).Results[0]
	}
	for _, res := range r.Execute(ctx, Batch{Platform: approval.PlatformCron, Job: "ported", Session: "obs", Calls: []RawCall{
		rawCall("1", "read_file", args("path", "src/check.sh")),
		rawCall("2", "read_file", args("path", "src/data.txt")),
		terminalCall("3", "python3 src/conn.py"),
	}}, nil).Results {
		require.Equal(t, ClassSucceeded, res.Class, res.Message)
	}
	v, err := store.Compile(ctx, "ported")
	require.NoError(t, err)
	require.NotContains(t, v.Text, "hosts:\n  -", "no connection observed: %s", v.Text)
	_, err = store.ApproveReviewed(ctx, "ported", v.Number, v.SHA256, "test")
	require.NoError(t, err)

	a, b := 40000+os.Getpid()%10000, 50000+os.Getpid()%10000
	require.NoError(t, os.WriteFile(filepath.Join(ws, "src", "ports"), []byte(fmt.Sprintf("%d %d\n", a, b)), 0o644))
	driftOf := func(res Result, addr string) string {
		t.Helper()
		refused, _ := res.Output["paths_refused"].([]map[string]any)
		for _, p := range refused {
			if p["addr"] == addr {
				id, _ := p["drift_id"].(string)
				require.NotEmpty(t, id, "the refusal is drift")
				return id
			}
		}
		t.Fatalf("no refusal of %s: %v", addr, res.Output)
		return ""
	}
	aAddr, bAddr := fmt.Sprintf("127.0.0.1:%d", a), fmt.Sprintf("127.0.0.1:%d", b)

	bad := run("")
	require.Equal(t, ClassBlocked, bad.Class, "%s %v", bad.Message, bad.Output)
	assert.Equal(t, GateLandlock, bad.Gate)
	assert.Contains(t, bad.Output["stdout"], fmt.Sprintf("%d EACCES\n%d EACCES\nconn-done", a, b))
	id := driftOf(bad, aAddr)
	driftOf(bad, bAddr)
	recs, err := store.Drift(ctx, "ported")
	require.NoError(t, err)
	var rec *mandate.DriftRecord
	for i := range recs {
		if recs[i].ID == id {
			rec = &recs[i]
		}
	}
	require.NotNil(t, rec)
	assert.Equal(t, []string{mandate.FamilyHosts}, rec.Families)
	assert.Contains(t, rec.Reason, aAddr)

	w, err := store.Widen(ctx, "ported", id, false)
	require.NoError(t, err)
	require.Len(t, w.Added, 1)
	assert.Equal(t, "hosts: "+aAddr, w.Added[0].Value)
	_, err = store.ApproveReviewed(ctx, "ported", w.Version.Number, w.Version.SHA256, "test")
	require.NoError(t, err)

	for _, session := range []string{"", "enf"} {
		res := run(session)
		assert.Contains(t, res.Output["stdout"], fmt.Sprintf("%d connected\n%d EACCES\nconn-done", a, b), "session %q: %v", session, res.Output)
		require.Equal(t, ClassBlocked, res.Class, "%s %v", res.Message, res.Output)
		driftOf(res, bAddr)
		refused, _ := res.Output["paths_refused"].([]map[string]any)
		assert.Len(t, refused, 1, "the allowed port is not refused: %v", refused)
	}
}
