package mandate

import (
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tether-dev/tether/grammar"
)

var update = flag.Bool("update", false, "rewrite golden files")

// golden compares got with testdata/<name>, rewriting it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, got, 0o644))
	}
	want, err := os.ReadFile(p)
	require.NoError(t, err, "missing golden file; run go test -update")
	assert.Equal(t, string(want), string(got))
}

// sampleCalls is a nightly-triage-like job: three runs.
func sampleCalls() []struct {
	run  string
	call Call
} {
	ws := "/work/repo"
	term := func(cmd string) Call { return Call{Tool: ToolTerminal, Command: cmd, Workspace: ws} }
	return []struct {
		run  string
		call Call
	}{
		{"r1", term("git status")},
		{"r1", term("git -C /work/repo log --oneline -n 5")},
		{"r1", term("GOFLAGS=-mod=mod go test -race ./...")},
		{"r1", term("env CGO_ENABLED=0 go build -o bin/app ./cmd/app")},
		{"r1", term("npm run build")},
		{"r1", term("make lint test")},
		{"r1", term("curl -sSf https://api.github.com/repos/x/y/issues")},
		{"r1", term("git push origin main")},
		{"r1", term(`bash -c "$SCRIPT"`)},
		{"r1", Call{Tool: "read_file", Paths: []string{"/work/repo/src/a.go"}, Workspace: ws}},
		{"r1", Call{Tool: "write_file", Paths: []string{"src/b.go"}, Wrote: true, Workspace: ws}},
		{"r2", Call{Tool: "read_file", Paths: []string{"src/c.go"}, Workspace: ws}},
		{"r2", Call{Tool: "patch", Paths: []string{"src/a.go"}, Wrote: true, Workspace: ws}},
		{"r2", Call{Tool: "patch", Paths: []string{"README.md"}, Wrote: true, Workspace: ws}},
		{"r2", term("git status")},
		{"r2", term("go test ./...")},
		{"r2", term("ssh deploy@build.example.org uptime")},
		{"r2", term("git clone git@github.com:tether-dev/tether.git /tmp/t")},
		{"r2", term("echo done > /tmp/triage.log")},
		{"r3", term("git status")},
		{"r3", term("kubectl -n prod get pods -o wide")},
		{"r3", term("docker compose -f dc.yml up -d")},
		{"r3", term("timeout 300 make lint")},
		{"r3", term("sudo -u 'build bot' make lint")},
		{"r3", Call{Tool: "read_file", Paths: []string{"/etc/os-release"}, Workspace: ws}},
	}
}

func sampleObservations(t *testing.T) []Observation {
	t.Helper()
	var obs []Observation
	for _, c := range sampleCalls() {
		f, err := extract(c.call, defaultParse)
		require.NoError(t, err, c.call.Command)
		obs = append(obs, Observation{Run: c.run, Facts: f})
	}
	return obs
}

func TestCompileGolden(t *testing.T) {
	text := Compile("nightly-triage", sampleObservations(t)).Marshal()
	golden(t, "compile/nightly-triage.yaml", text)
	// The text loads back and re-marshals to the same bytes.
	m, err := Load(text)
	require.NoError(t, err)
	assert.Equal(t, string(text), string(m.Marshal()))
}

func TestCompileDeterministic(t *testing.T) {
	obs := sampleObservations(t)
	want := Compile("nightly-triage", obs).Marshal()
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 50; i++ {
		r.Shuffle(len(obs), func(a, b int) { obs[a], obs[b] = obs[b], obs[a] })
		require.Equal(t, string(want), string(Compile("nightly-triage", obs).Marshal()), "shuffle %d", i)
	}
}

func TestCompileAllowsEveryObservedCall(t *testing.T) {
	obs := sampleObservations(t)
	x := NewMatcher(Compile("j", obs))
	writes := map[string]int{}
	for _, o := range obs {
		fails := x.Evaluate(o.Facts, writes[o.Run])
		if o.Facts.Tool == ToolTerminal && len(o.Facts.Commands) == 1 && len(o.Facts.Commands[0].Wrappers) == 1 &&
			strings.Contains(o.Facts.Commands[0].Wrappers[0], " ") {
			// sudo -u 'build bot': a wrapper argument with a space cannot
			// be written, so the call stays outside the mandate.
			assert.Equal(t, []Failure{{Family: FamilyCommands, Value: "sudo(unrepresentable arguments) make lint", Unwritable: true}}, fails)
			continue
		}
		assert.Empty(t, fails, "%+v", o.Facts)
		if o.Facts.Wrote {
			writes[o.Run]++
		}
	}
}

func TestGeneralisePaths(t *testing.T) {
	tests := []struct {
		name string
		in   map[string]int
		want map[string]int
	}{
		{"below threshold stays exact", map[string]int{"src/a.go": 1, "src/b.go": 2},
			map[string]int{"src/a.go": 1, "src/b.go": 2}},
		{"three files collapse", map[string]int{"src/a.go": 1, "src/b.go": 2, "src/c.go": 1, "README.md": 1},
			map[string]int{"src/**": 4, "README.md": 1}},
		{"workspace root never collapses", map[string]int{"a": 1, "b": 1, "c": 1},
			map[string]int{"a": 1, "b": 1, "c": 1}},
		{"absolute root never collapses", map[string]int{"/a": 1, "/b": 1, "/c": 1},
			map[string]int{"/a": 1, "/b": 1, "/c": 1}},
		{"covered rules fold into outer", map[string]int{"src/a": 1, "src/b": 1, "src/c": 1, "src/x/y.go": 5},
			map[string]int{"src/**": 8}},
		{"climbing paths stay exact", map[string]int{"../a": 1, "../b": 1, "../c": 1},
			map[string]int{"../a": 1, "../b": 1, "../c": 1}},
		// Modes: reads never widen into writes.
		{"three reads collapse read-only", map[string]int{"read:conf/a": 1, "read:conf/b": 1, "read:conf/c": 2},
			map[string]int{"read:conf/**": 4}},
		{"reads collapse beside the written file", map[string]int{"read:src/a": 1, "read:src/b": 1, "src/c": 2},
			map[string]int{"read:src/**": 2, "src/c": 2}},
		{"three writes collapse read-write over the reads", map[string]int{"read:src/a": 1, "src/b": 1, "src/c": 1, "src/d": 1},
			map[string]int{"src/**": 4}},
		{"a file read and written is written", map[string]int{"read:notes": 2, "notes": 1},
			map[string]int{"notes": 3}},
		{"a read-write tree covers reads beneath it", map[string]int{"out/**": 1, "read:out/x/y": 1},
			map[string]int{"out/**": 2}},
		{"a read-only tree does not cover writes", map[string]int{"read:conf/**": 1, "conf/local.ini": 1},
			map[string]int{"read:conf/**": 1, "conf/local.ini": 1}},
		{"a path spelled like a mode", map[string]int{"rw:read:x": 1, "read:read:y": 1},
			map[string]int{"rw:read:x": 1, "read:read:y": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, generaliseModes(tt.in, nil))
		})
	}
}

func TestExtractFacts(t *testing.T) {
	tests := []struct {
		cmd   string
		rules []string // command rules, in order
		hosts []string
		paths []string
		wrote bool
	}{
		{cmd: "git commit -m 'fix' --amend", rules: []string{"git commit --amend --message"}},
		{cmd: "git -C /x remote add up https://example.com/r.git", rules: []string{"git remote add -C"}, hosts: []string{"example.com"}, paths: []string{"/x"}},
		// Operands that are assignments are part of the rule; paths
		// outside the workspace are part of the paths family.
		{cmd: "make test SHELL=/bin/bash BASH_ENV=reports/notes.md", rules: []string{"make test BASH_ENV=reports/notes.md SHELL=/bin/bash"}, paths: []string{"/bin/bash"}},
		{cmd: "dd if=a of=/dev/sda", rules: []string{"dd if=a of=/dev/sda"}, paths: []string{"/dev/sda"}},
		{cmd: "git diff --stat ../../etc/passwd", rules: []string{"git diff --stat"}, paths: []string{"../../etc/passwd"}},
		{cmd: "git diff --output=/tmp/x", rules: []string{"git diff --output"}, paths: []string{"/tmp/x"}},
		{cmd: "cat ~/.ssh/id_rsa origin/main", rules: []string{"cat"}, paths: []string{"~/.ssh/id_rsa"}},
		{cmd: "git push origin main", rules: []string{"git push"}},
		{cmd: "npm run build -- --watch", rules: []string{"npm run build"}},
		{cmd: "go mod tidy", rules: []string{"go mod tidy"}},
		{cmd: "docker compose up -d", rules: []string{"docker compose up -d"}},
		{cmd: "kubectl get pods", rules: []string{"kubectl get pods"}},
		{cmd: "make -j 4 build test", rules: []string{"make build test --jobs"}},
		// Value-taking options before the subcommand, read by the grammar.
		{cmd: "make -C sub -f Build.mk test", rules: []string{"make test --directory --file"}},
		{cmd: "kubectl -n prod --context stage get pods", rules: []string{"kubectl get pods --context -n"}},
		{cmd: "helm --namespace x uninstall app", rules: []string{"helm uninstall --namespace"}},
		{cmd: "gh -R o/r pr list", rules: []string{"gh pr list -R"}},
		{cmd: "X=1 env Y=2 make test", rules: []string{"env X,Y: make test"}},
		{cmd: "python3 script.py --flag", rules: []string{"python3"}},
		{cmd: "./rm -rf x", rules: []string{"./rm -rf"}},
		{cmd: "curl https://x.y/z", rules: []string{"curl"}, hosts: []string{"x.y"}},
		{cmd: "curl --url=https://A.B.example/ -o out", rules: []string{"curl --output --url"}, hosts: []string{"a.b.example"}},
		{cmd: "wget example.org/file", rules: []string{"wget"}, hosts: []string{"example.org"}},
		{cmd: "ssh -p 22 user@h uptime", rules: []string{"ssh -p"}, hosts: []string{"h"}},
		{cmd: "scp a h:/p", rules: []string{"scp"}, hosts: []string{"h"}},
		{cmd: "git clone git@github.com:o/r.git", rules: []string{"git clone"}, hosts: []string{"github.com"}},
		{cmd: "echo hi > out.txt 2>/dev/null", rules: []string{"echo"}, paths: []string{"out.txt"}, wrote: true},
		{cmd: "cat < in.txt", rules: []string{"cat"}, paths: []string{"read:in.txt"}},
		{cmd: "git $SUB", rules: []string{"git $SUB"}},
		{cmd: "sudo -u bob make test", rules: []string{"sudo(-u,bob) make test"}},
		{cmd: `curl -H "Authorization: $T" "$URL/x"`, rules: []string{"curl -H"}, hosts: []string{`="$URL/x"`}},
		{cmd: "curl -x proxy.corp:3128 -o out https://a.example/", rules: []string{"curl --output -x"}, hosts: []string{"a.example", "proxy.corp"}},
		{cmd: `ssh -p "$PORT" "$HOST" uptime`, rules: []string{"ssh -p"}, hosts: []string{`="$HOST"`}},
		{cmd: `ssh -p 22 ci@build.example "$CMD"`, rules: []string{"ssh -p"}, hosts: []string{"build.example"}},
		{cmd: "timeout 60 nice -n 5 make", rules: []string{"timeout(60) nice(-n,5) make"}},
		{cmd: "nohup ./run.sh", rules: []string{"nohup ./run.sh"}},
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			f, err := extract(Call{Tool: ToolTerminal, Command: tt.cmd}, defaultParse)
			require.NoError(t, err)
			var rules []string
			for _, c := range f.Commands {
				rules = append(rules, factRule(c).String())
			}
			assert.Equal(t, tt.rules, rules)
			assert.Equal(t, tt.hosts, f.Hosts)
			assert.Equal(t, tt.paths, f.Paths)
			assert.Equal(t, tt.wrote, f.Wrote)
		})
	}
}

func TestExtractOpaque(t *testing.T) {
	f, err := extract(Call{Tool: ToolTerminal, Command: `bash -c "$X"`}, defaultParse)
	require.NoError(t, err)
	assert.Equal(t, []string{`bash -c "$X"`}, f.Opaque)
	// Unparseable text is one opaque segment: only its exact text allows it.
	f, err = extract(Call{Tool: ToolTerminal, Command: `echo "unterminated`}, defaultParse)
	require.NoError(t, err)
	assert.Equal(t, []string{`echo "unterminated`}, f.Opaque)
	assert.Empty(t, f.Commands)
}

// TestCLITableLeavesValuesToTheGrammar: the table lists value-taking
// options only for programs the command grammar does not know; for the
// others the grammar is the one place that says which words are values.
func TestCLITableLeavesValuesToTheGrammar(t *testing.T) {
	for name, spec := range cliTable() {
		if len(spec.valueFlags) > 0 {
			assert.Nil(t, grammar.Lookup(name), "%s: the grammar knows it; its value options belong there", name)
		}
	}
}
