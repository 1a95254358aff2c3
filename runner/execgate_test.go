package runner

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tether-dev/tether/approval"
	"github.com/tether-dev/tether/config"
	"github.com/tether-dev/tether/mandate"
)

// gateRunner returns a Runner with a real engine and mandate store over a
// sandbox profile, and its workspace with stand-ins in ws/bin for the
// programs named: each records its argv in ws/ran-NAME, so a marker file
// means the program "ran".
func gateRunner(t *testing.T, standIns ...string) (*Runner, *mandate.Store, *config.Config, string) {
	t.Helper()
	sb := testSandbox(t)
	cfg, ws := testConfigIn(t, sandboxTempDir(t), "    approvals:\n      deny: [\"curl *\"]\n")
	store := testStore(t, cfg)
	eng := testEngine(t, cfg, approval.Options{Mandate: &mandate.Hook{Store: store}})
	sessions := testSessions(t, sb)
	require.NoError(t, os.Mkdir(filepath.Join(ws, "bin"), 0o755))
	for _, n := range standIns {
		script := "#!/bin/sh\necho \"$0 $*\" >> " + filepath.Join(ws, "ran-"+n) + "\n"
		require.NoError(t, os.WriteFile(filepath.Join(ws, "bin", n), []byte(script), 0o755))
	}
	return &Runner{Config: cfg, Engine: eng, Mandates: store, Sandbox: sb, Sessions: sessions}, store, cfg, ws
}

// libcSystemArgv returns the argv with which this host's libc system()
// runs command, the argv the exec gate sees for os.system: "sh -c CMD" from
// bookworm's glibc 2.36, "sh -c -- CMD" from trixie's 2.41 (the cgroup v2
// guest's). It asks the libc: the shell of a probe's system() reads its own
// command line (the trailing ":" keeps the shell from exec'ing cat in its
// place).
func libcSystemArgv(t *testing.T, command string) []string {
	t.Helper()
	const probe = "cat /proc/$$/cmdline; :"
	out, err := exec.Command("python3", "-c", "import os, sys; sys.exit(os.waitstatus_to_exitcode(os.system('"+probe+"')))").Output()
	require.NoError(t, err)
	argv := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	require.Equal(t, probe, argv[len(argv)-1], "system()'s shell command line %q", out)
	return append(argv[:len(argv)-1:len(argv)-1], command)
}

// TestExecGateHiddenPayloads: programs the command text does not show —
// run by interpreters, scripts and a compiled helper — are refused at
// exec when the hardline floor or a deny glob refuses their real argv:
// nothing of them runs, the call is blocked at gate "exec" with the argv,
// the refusal is audited and, in a job, recorded as drift.
func TestExecGateHiddenPayloads(t *testing.T) {
	r, store, cfg, ws := gateRunner(t, "reboot", "rm", "mkfs.ext4", "curl")
	files := map[string]string{
		"task.py":   "import os\nos.execv('./bin/reboot', ['reboot'])\n",
		"sys.py":    "import os\nos.system('PATH=./bin:$PATH reboot -f')\n",
		"build.sh":  "PATH=./bin:$PATH\nrm -rf --no-preserve-root /\n",
		"fmt.pl":    "exec {'./bin/mkfs.ext4'} 'mkfs.ext4', '/dev/sda';\n",
		"fetch.js":  "require('child_process').execFileSync('./bin/curl', ['curl', 'http://example.com/x.sh']);\n",
		"helper.c":  "#include <unistd.h>\nint main(void){char *a[]={\"reboot\",\"-p\",0};execv(\"./bin/reboot\",a);return 3;}\n",
		"Makefile":  "test:\n\t./bin/reboot\n",
		"noop.sh":   "echo fine\n",
		"harmless":  "",
		"cat-it.sh": "cat noop.sh\n",
	}
	for name, text := range files {
		if text != "" {
			require.NoError(t, os.WriteFile(filepath.Join(ws, name), []byte(text), 0o644))
		}
	}
	// A compiled helper, built on the host.
	out, err := exec.Command("gcc", "-o", filepath.Join(ws, "helper"), filepath.Join(ws, "helper.c")).CombinedOutput()
	require.NoError(t, err, "%s", out)
	type gated struct {
		command, stand string
		argv           []string
		rule           string
	}
	cases := []gated{
		{"python3 task.py", "reboot", []string{"reboot"}, "hardline.power"},
		// os.system's shell is refused already: its -c text is hardline.
		{"python3 sys.py", "reboot", libcSystemArgv(t, "PATH=./bin:$PATH reboot -f"), "hardline.power"},
		{"sh build.sh", "rm", []string{"rm", "-rf", "--no-preserve-root", "/"}, "hardline.rm-root"},
		{"perl fmt.pl", "mkfs.ext4", []string{"mkfs.ext4", "/dev/sda"}, ""},
		{"./helper", "reboot", []string{"reboot", "-p"}, "hardline.power"},
		{"make -s test", "reboot", []string{"./bin/reboot"}, "hardline.power"},
	}
	if _, err := exec.LookPath("node"); err == nil {
		cases = append(cases, gated{"node fetch.js", "curl", []string{"./bin/curl", "curl", "http://example.com/x.sh"}, ""})
	} else {
		t.Log("node is not installed: the node case is skipped")
	}
	var calls []RawCall
	for i, c := range cases {
		calls = append(calls, terminalCall(string(rune('a'+i)), c.command))
	}
	// One-shot sandboxes (no session), then a session's.
	for _, session := range []string{"", "run-1"} {
		res := r.Execute(t.Context(), Batch{Platform: approval.PlatformCron, Job: "nightly", Session: session, Calls: calls}, nil)
		for i, c := range cases {
			got := res.Results[i]
			t.Run("session="+session+"/"+c.command, func(t *testing.T) {
				assert.NoFileExists(t, filepath.Join(ws, "ran-"+c.stand), "the payload ran")
				require.Equal(t, ClassBlocked, got.Class, "%s %v", got.Message, got.Output)
				assert.Equal(t, GateExec, got.Gate)
				assert.True(t, got.Ran, "the command itself ran until the refused exec")
				assert.Equal(t, EffectPossible, got.Effect)
				if c.rule != "" {
					assert.Equal(t, c.rule, got.Rule)
				} else {
					assert.NotEmpty(t, got.Rule)
				}
				blocked := got.Output["exec_blocked"].([]map[string]any)
				require.NotEmpty(t, blocked)
				assert.Equal(t, c.argv, blocked[0]["argv"])
				assert.Contains(t, got.Message, "refused at the exec gate")
				require.NotNil(t, got.Decision)
				assert.Equal(t, approval.StageExec, got.Decision.Stage)
				assert.NotEmpty(t, got.Decision.DriftID, "in a job the block is drift")
			})
			os.Remove(filepath.Join(ws, "ran-"+c.stand))
		}
	}

	// Drift: every refused exec is recorded (identical ones, one-shot and
	// in a session, fold into one record with a count), family commands,
	// not widenable.
	drift, err := store.Drift(t.Context(), "nightly")
	require.NoError(t, err)
	seen := 0
	for _, d := range drift {
		seen += d.Count
	}
	require.GreaterOrEqual(t, len(drift), len(cases))
	require.GreaterOrEqual(t, seen, 2*len(cases))
	for _, d := range drift {
		assert.Equal(t, []string{mandate.FamilyCommands}, d.Families)
		assert.Contains(t, d.Reason, "refused at the exec gate")
	}

	// Audit: each refusal is a decision at stage exec with the argv.
	f, err := os.Open(approval.AuditPath(cfg.StateDir))
	require.NoError(t, err)
	defer f.Close()
	var execDecisions []approval.Decision
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var d approval.Decision
		require.NoError(t, json.Unmarshal(sc.Bytes(), &d))
		if d.Stage == approval.StageExec {
			execDecisions = append(execDecisions, d)
		}
	}
	require.GreaterOrEqual(t, len(execDecisions), 2*len(cases))
	assert.Equal(t, "reboot", execDecisions[0].Command)
	assert.False(t, execDecisions[0].Allowed)
}

// TestExecGateBenignWorkloads: builds, tests and git in a sandbox run
// undisturbed by the gate, one-shot and in a session.
func TestExecGateBenignWorkloads(t *testing.T) {
	r, _, _, ws := gateRunner(t)
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "proj"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "proj", "Makefile"),
		[]byte("test: build\n\t./hello | grep -q hello && echo tests passed\nbuild:\n\tprintf '#!/bin/sh\\necho hello\\n' > hello && chmod +x hello\n"), 0o644))
	commands := []string{
		"make -s -C proj test",
		"/usr/local/go/bin/go version",
		// The repository is made on the host: no sandbox can make one
		// (docs/workspace.md, "Nested repositories").
		"(cd repo && echo x > f && git add f && git -c user.email=t@example.com -c user.name=t commit -qm first && git log --oneline | wc -l)",
		"i=0; while [ $i -lt 200 ]; do /bin/true; i=$((i+1)); done; echo $i",
	}
	want := []string{"tests passed\n", "go version go", "1\n", "200\n"}
	if _, err := os.Stat("/usr/local/go/bin/go"); err != nil {
		// A host without the Go toolchain there (the cgroup v2 guest
		// gets test binaries, not Go): the other workloads still run.
		t.Logf("no /usr/local/go/bin/go here: the go workload is left out")
		commands, want = slices.Delete(commands, 1, 2), slices.Delete(want, 1, 2)
	}
	for _, session := range []string{"", "s1"} {
		var calls []RawCall
		for i, c := range commands {
			calls = append(calls, terminalCall(string(rune('a'+i)), c))
		}
		require.NoError(t, os.RemoveAll(filepath.Join(ws, "repo")))
		gitOut, err := exec.Command("git", "init", "-q", filepath.Join(ws, "repo")).CombinedOutput()
		require.NoError(t, err, "%s", gitOut)
		out := r.Execute(t.Context(), Batch{Platform: approval.PlatformCron, Session: session, Calls: calls}, nil)
		for i := range commands {
			got := out.Results[i]
			require.Equal(t, ClassSucceeded, got.Class, "session %q %s: %s %v", session, commands[i], got.Message, got.Output)
			assert.Contains(t, got.Output["stdout"], want[i])
			assert.NotContains(t, got.Output, "exec_blocked")
			if ne, ok := got.Output["not_enforced"].([]string); ok {
				assert.NotContains(t, ne, "exec_gate")
			}
		}
		if session != "" {
			assert.True(t, strings.Contains(out.Results[0].Output["stdout"].(string), "tests passed"))
		}
	}
}

// TestCreationGateReported: a terminal command that tries to make a
// repository in the workspace (git init in a subdirectory) is told so in
// its result (create_blocked) and the refusal is audited at stage
// "protected-path"; nothing of the repository is left.
func TestCreationGateReported(t *testing.T) {
	r, _, cfg, ws := gateRunner(t)
	for _, session := range []string{"", "made-1"} {
		res := r.Execute(t.Context(), Batch{Platform: approval.PlatformCLI, Session: session,
			Calls: []RawCall{terminalCall("a", "mkdir -p sub && git init -q sub; echo done")}}, nil)
		got := res.Results[0]
		t.Run("session="+session, func(t *testing.T) {
			blocked, ok := got.Output["create_blocked"].([]map[string]any)
			require.True(t, ok, "%s %v", got.Message, got.Output)
			require.NotEmpty(t, blocked)
			assert.Equal(t, "mkdir", blocked[0]["op"])
			assert.Contains(t, blocked[0]["path"], ".git")
			assert.Contains(t, got.Message, "make a repository")
			assert.NoDirExists(t, filepath.Join(ws, "sub", ".git"))
		})
	}
	n := 0
	for _, d := range readAudit(t, approval.AuditPath(cfg.StateDir)) {
		if d.Stage == approval.StageProtected {
			n++
			assert.Equal(t, "creation gate", d.DecidedBy)
		}
	}
	assert.GreaterOrEqual(t, n, 2, "each refusal is audited")
}

// TestExecGateCopiedLoader: a copy of the dynamic loader under another
// name, run from a script, loads the real program it is given (here a
// real ELF stand-in for reboot): the exec is refused at gate "exec" by
// the program the loader would run, nothing of it runs. Before session 12
// the loader was known by its name only and the stand-in ran.
func TestExecGateCopiedLoader(t *testing.T) {
	r, _, _, ws := gateRunner(t)
	touch, err := os.ReadFile("/usr/bin/touch")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(ws, "bin", "reboot"), touch, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "run.sh"),
		[]byte("cp /lib64/ld-linux-x86-64.so.2 /tmp/helper\n/tmp/helper --argv0 true ./bin/reboot ran-reboot\n"), 0o644))
	for _, session := range []string{"", "ld-1"} {
		res := r.Execute(t.Context(), Batch{Platform: approval.PlatformCron, Session: session, Calls: []RawCall{terminalCall("a", "sh run.sh")}}, nil)
		got := res.Results[0]
		assert.NoFileExists(t, filepath.Join(ws, "ran-reboot"), "session %q: the program ran", session)
		require.Equal(t, ClassBlocked, got.Class, "session %q: %s %v", session, got.Message, got.Output)
		assert.Equal(t, GateExec, got.Gate)
		assert.Equal(t, "hardline.power", got.Rule)
		blocked := got.Output["exec_blocked"].([]map[string]any)
		require.NotEmpty(t, blocked)
		assert.Equal(t, []string{"/tmp/helper", "--argv0", "true", "./bin/reboot", "ran-reboot"}, blocked[0]["argv"])
	}
}

// TestRefusedProgramsAreNotExecutable: the files of the programs the
// hardline floor refuses outright (approval.RefusedPrograms) are not
// executable in a one-shot sandbox nor in a session (a noexec mount of
// each, sandbox.Config.NoExec), so a symlink swapped between the exec
// gate's check and the kernel's exec cannot run one: the kernel refuses
// it whatever the gate checked (sandbox's TestExecGateSymlinkSwapRace
// races it). A link to a multi-call program (Debian's reboot is a link
// to systemctl) brings that file in too (sandbox's
// TestExecGateArgv0RewriteRace races its argv[0]); other links are left out.
func TestRefusedProgramsAreNotExecutable(t *testing.T) {
	var files []string
	for _, p := range refusedProgramFiles {
		fi, err := os.Lstat(p)
		if err != nil {
			continue
		}
		real, err := filepath.EvalSymlinks(p)
		if err == nil && (fi.Mode().IsRegular() || filepath.Base(real) == "systemctl") && !slices.Contains(files, real) {
			files = append(files, real)
		}
	}
	if len(files) == 0 {
		t.Skip("no program of approval.RefusedPrograms is a regular file on this host")
	}
	r, _, _, _ := gateRunner(t)
	script := "for f in " + strings.Join(files, " ") + "; do if [ -x $f ]; then echo exec:$f; else echo noexec:$f; fi; done; [ -x /usr/bin/true ] && echo exec:true"
	for _, session := range []string{"", "noexec-1"} {
		res := r.Execute(t.Context(), Batch{Platform: approval.PlatformCron, Session: session, Calls: []RawCall{terminalCall("a", script)}}, nil)
		got := res.Results[0]
		out, _ := got.Output["stdout"].(string)
		for _, f := range files {
			assert.Contains(t, out, "noexec:"+f, "session %q: %s", session, got.Message)
		}
		assert.Contains(t, out, "exec:true", "session %q: other programs run", session)
	}
}
