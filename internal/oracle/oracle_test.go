package oracle

import (
	crand "crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tether-dev/tether/approval"
	"github.com/tether-dev/tether/internal/testenv"
	"github.com/tether-dev/tether/sandbox"
)

// init makes the test binary the container init when libcontainer
// re-executes it, with the main goroutine pinned to the main thread.
func init() {
	runtime.LockOSThread()
	if sandbox.IsInit() {
		sandbox.Init()
	}
}

var (
	flagN      = flag.Int("oracle.n", 100, "generated commands to run (make oracle runs more)")
	flagSeed   = flag.Uint64("oracle.seed", 1, "the generator's seed")
	flagCorpus = flag.Int("oracle.corpus", 150, "corpus commands to run, a seeded sample; 0 runs them all")
	flagRecord = flag.Bool("oracle.record", false, "append the under-rated commands to approval/testdata/oracle-found.tsv")
	flagBatch  = flag.Int("oracle.batch", 150, "commands per sandbox")
	flagTiers  = flag.String("oracle.tiers", "", "a file of commands, one a line: TestOracleTiers prints each one's observed and static tier")
)

// repoRoot is the module root, two levels up from this package.
var repoRoot = filepath.Join("..", "..")

// newOracle returns an oracle whose sandboxes use a unique state root and
// cgroup prefix, all removed (every hierarchy, unified included) when the
// test ends.
func newOracle(t testing.TB) *Oracle {
	t.Helper()
	testenv.RequireSandbox(t)
	var b [4]byte
	_, _ = crand.Read(b[:])
	prefix := "tether-oracle-" + hex.EncodeToString(b[:])
	state, err := os.MkdirTemp("", "orc")
	require.NoError(t, err)
	require.NoError(t, os.Chmod(state, 0o711))
	r := &sandbox.Runner{StateRoot: state, CgroupPrefix: prefix, Grace: 300 * time.Millisecond}
	t.Cleanup(func() {
		rep, err := sandbox.GC(sandbox.GCOptions{StateRoot: state, CgroupPrefix: prefix, Caches: true})
		assert.NoError(t, err)
		if rep != nil {
			assert.Empty(t, rep.Errors)
		}
		assert.Empty(t, cgroupsNamed(prefix), "cgroups left behind")
		assert.NoError(t, os.RemoveAll(state))
	})
	o, err := New(t.TempDir(), r)
	require.NoError(t, err)
	return o
}

// cgroupsNamed lists the cgroup directories called prefix in every
// hierarchy, removing empty ones first (the profile cgroup outlives its
// last container until GC).
func cgroupsNamed(prefix string) []string {
	var left []string
	mounts, _ := filepath.Glob("/sys/fs/cgroup/*")
	mounts = append(mounts, "/sys/fs/cgroup")
	for _, m := range mounts {
		d := filepath.Join(m, prefix)
		if _, err := os.Stat(d); err != nil {
			continue
		}
		removeEmptyTree(d)
		if _, err := os.Stat(d); err == nil {
			left = append(left, d)
		}
	}
	return left
}

func removeEmptyTree(d string) {
	entries, _ := os.ReadDir(d)
	for _, e := range entries {
		if e.IsDir() {
			removeEmptyTree(filepath.Join(d, e.Name()))
		}
	}
	_ = os.Remove(d)
}

// TestOracleObserves attacks the oracle itself: each command is run under
// real bash in the sandbox and the observed tier must be what the command
// really did, seen from outside after the command is gone.
func TestOracleObserves(t *testing.T) {
	o := newOracle(t)
	cases := []struct {
		cmd  string
		want approval.Tier
	}{
		// hardline: what really wipes, writes a disk, powers off, kills all, forks without end
		{"rm -rf ~", approval.TierHardline},
		{"rm --recur --forc /home/alice/", approval.TierHardline},
		{"rm -r --no-preserve-root /", approval.TierHardline},
		{"rm -rf /usr", approval.TierHardline},
		{"rm -rf ~/*", approval.TierHardline},
		{"find ~ -delete", approval.TierHardline},
		{"dd if=/dev/zero of=/dev/disk/by-id/ata-DISK count=1", approval.TierHardline},
		{"echo x > /dev/nvme0n1", approval.TierHardline},
		{"cd /dev && cp /work/README.md mapper/x", approval.TierHardline},
		{"mkfs.ext4 /dev/vg0/lv0", approval.TierHardline},
		{"wipefs --al /dev/block/8:0", approval.TierHardline},
		{"printf 'o\\nw\\n' | fdisk /dev/sda", approval.TierHardline},
		{"kill -9 -1", approval.TierHardline},
		{"echo -1 | xargs kill -9", approval.TierHardline},
		{"echo -1 | xargs kill -s KILL --", approval.TierAllow}, // util-linux kill refuses "--" there: nothing is killed
		{"pkill -f .", approval.TierHardline},
		{"reboot", approval.TierHardline},
		{"sudo -u root systemctl --no-bl reboot", approval.TierHardline},
		{"systemctl -H host isolate poweroff", approval.TierHardline},
		{"busctl call org.freedesktop.login1 /org/freedesktop/login1 org.freedesktop.login1.Manager PowerOff b true", approval.TierHardline},
		{"init 6", approval.TierHardline},
		{":(){ :|:& };:", approval.TierHardline},
		// a stand-in run under another name is still the program it stands
		// for: a copy, a symbolic link, a hash table entry
		{"cp /bin/rm /tmp/x && /tmp/x -rf ~", approval.TierHardline},
		{"ln -s /usr/bin/rm x; ./x -rf ~", approval.TierHardline},
		{"cp /usr/bin/rm r; BASH_CMDS[ls]=$PWD/r; ls -rf ~", approval.TierHardline},
		{"BASH_CMDS[ls]=/sbin/reboot; ls", approval.TierHardline},
		// approval: dangerous, not catastrophic
		{"rm -rf ./build", approval.TierApproval},
		{"rm -rf /", approval.TierApproval}, // rm refuses /: only the forced recursive delete is seen
		{"pkill nginx", approval.TierApproval},
		{"echo 'curl x | sh' >> ~/.bashrc", approval.TierApproval},
		// allow: nothing happened that matters
		{"echo hi; ls -la", approval.TierAllow},
		{"kill -0 -1", approval.TierAllow},
		{"kill -STOP -1", approval.TierHardline}, // stops timeout too: the driver must bound the wait itself
		{"kill -1", approval.TierAllow},          // signal 1, no pid: a usage error
		{"wipefs /dev/sda", approval.TierAllow},
		{"mkfs.ext4 -n /dev/sda", approval.TierAllow},
		{"shutdown -c", approval.TierAllow},
		{"systemctl --dry-run reboot", approval.TierAllow},
		{"systemctl status", approval.TierAllow},
		{"reboot --help", approval.TierAllow},
		{"dd if=/dev/sda of=disk.img count=1", approval.TierAllow},
		{"cat /dev/sda > /dev/null", approval.TierAllow},
		{"fdisk -l /dev/sda", approval.TierAllow},
		{"rm notes.txt", approval.TierAllow},
		{"cp .env.example .env; truncate -s0 app.log", approval.TierAllow},
		{"rm -rf '~'", approval.TierApproval},
		// wrappers that run nothing, a device node renamed (its data kept)
		{"sudo -l reboot", approval.TierAllow},
		{"sudo --ve reboot", approval.TierAllow},
		{"su --ve -c reboot", approval.TierAllow},
		{"su -c reboot", approval.TierHardline},
		{"doas -C /etc/doas.conf reboot", approval.TierAllow},
		{"unlink /home/alice/.bashrc", approval.TierApproval},
		{"mv /dev/sda /tmp/x", approval.TierApproval},
		{"mv README.md /dev/sda", approval.TierHardline},
	}
	var cmds []string
	for _, c := range cases {
		cmds = append(cmds, c.cmd)
	}
	obs, lost, err := o.Run(t.Context(), cmds)
	require.NoError(t, err)
	require.Zero(t, lost)
	for i, c := range cases {
		assert.Equal(t, c.want.String(), obs[i].Tier.String(), "%q: evidence %v stderr %q", c.cmd, obs[i].Evidence, obs[i].Stderr)
	}
}

// TestOracleSeesWipeOfItsLog: a command that deletes all it can write
// takes the driver's log too; its own result is still written, so it is
// not lost (a lost result reads as allow).
func TestOracleSeesWipeOfItsLog(t *testing.T) {
	o := newOracle(t)
	for _, c := range []string{"find / -delete", "find /oracle/log /home -delete"} {
		obs, lost, err := o.Run(t.Context(), []string{c})
		require.NoError(t, err)
		require.Zero(t, lost, c)
		assert.Equal(t, "hardline", obs[0].Tier.String(), "%q: evidence %v stderr %q", c, obs[0].Evidence, obs[0].Stderr)
	}
}

// TestOracleSetVariants attacks the set side of choice expansions: a
// variable exported to a case reaches the command (a nested shell's too),
// and each state picks what bash picks.
func TestOracleSetVariants(t *testing.T) {
	o := newOracle(t)
	cases := []struct {
		c    Case
		want approval.Tier
	}{
		{Case{Command: "${X:+reboot}"}, approval.TierAllow},
		{Case{Command: "${X:+reboot}", Env: []string{"X=x"}}, approval.TierHardline},
		{Case{Command: "${X:+reboot}", Env: []string{"X="}}, approval.TierAllow},
		{Case{Command: "${X+reboot}", Env: []string{"X="}}, approval.TierHardline},
		{Case{Command: "bash -c 'rm -rf ${D:+~}'", Env: []string{"D=x"}}, approval.TierHardline},
		{Case{Command: "echo x > ${T-/dev/sda}", Env: []string{"T="}}, approval.TierAllow}, // an empty name: bash refuses the redirection
		{Case{Command: "echo x > ${T-/dev/sda}"}, approval.TierHardline},
		{Case{Command: "shred /dev/sda --help", Env: []string{"POSIXLY_CORRECT=1"}}, approval.TierHardline},
	}
	var in []Case
	for _, c := range cases {
		in = append(in, c.c)
	}
	obs, lost, err := o.RunCases(t.Context(), in)
	require.NoError(t, err)
	require.Zero(t, lost)
	for i, c := range cases {
		assert.Equal(t, c.want.String(), obs[i].Tier.String(), "%q with %q: evidence %v stderr %q", c.c.Command, c.c.Env, obs[i].Evidence, obs[i].Stderr)
		assert.Equal(t, c.c.Env, obs[i].Env)
	}
}

// TestOracleDivergenceRunsInBash shows that bash really runs what shellparse
// marks as a parser divergence: every case of
// shellparse/testdata/divergence.tsv reboots (the stand-in is called) or
// writes the stand-in disk, and the analyzer holds each for approval under
// approval.parser-divergence.
func TestOracleDivergenceRunsInBash(t *testing.T) {
	o := newOracle(t)
	cmds, err := ReadTSV(filepath.Join(repoRoot, "shellparse", "testdata", "divergence.tsv"), 0)
	require.NoError(t, err)
	require.NotEmpty(t, cmds)
	obs, lost, err := o.Run(t.Context(), cmds)
	require.NoError(t, err)
	require.Zero(t, lost)
	for i, c := range cmds {
		assert.Equal(t, "hardline", obs[i].Tier.String(), "%q: bash should run the hidden command; evidence %v stderr %q", c, obs[i].Evidence, obs[i].Stderr)
		an, err := Analyze(c)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, an.Verdict, approval.TierApproval, c)
		assert.True(t, slices.ContainsFunc(an.Findings, func(f approval.Finding) bool {
			return f.Rule == approval.RuleDivergence || f.Rule == approval.RuleUnparseable
		}), "%q: want %s (or unparseable), got %v", c, approval.RuleDivergence, an.Findings)
	}
}

// corpora are every command corpus of the repository, and the peer corpus
// next to it when present.
func corpora(t *testing.T) []Corpus {
	var out []Corpus
	add := func(name, path string, col int) {
		cmds, err := ReadTSV(path, col)
		require.NoError(t, err, name)
		out = append(out, Corpus{Name: name, Commands: cmds})
	}
	add("approval/testdata/corpus.tsv", filepath.Join(repoRoot, "approval", "testdata", "corpus.tsv"), 2)
	add("approval/testdata/benign.tsv", filepath.Join(repoRoot, "approval", "testdata", "benign.tsv"), 0)
	add("approval/testdata/redteam-s10.tsv", filepath.Join(repoRoot, "approval", "testdata", "redteam-s10.tsv"), 2)
	add("approval/testdata/redteam-s11.tsv", filepath.Join(repoRoot, "approval", "testdata", "redteam-s11.tsv"), 2)
	add("approval/testdata/redteam-s12.tsv", filepath.Join(repoRoot, "approval", "testdata", "redteam-s12.tsv"), 2)
	add("approval/testdata/redteam-s13.tsv", filepath.Join(repoRoot, "approval", "testdata", "redteam-s13.tsv"), 2)
	add("approval/testdata/redteam-s13g.tsv", filepath.Join(repoRoot, "approval", "testdata", "redteam-s13g.tsv"), 2)
	add("approval/testdata/redteam-s13b.tsv", filepath.Join(repoRoot, "approval", "testdata", "redteam-s13b.tsv"), 2)
	add("approval/testdata/redteam-s14.tsv", filepath.Join(repoRoot, "approval", "testdata", "redteam-s14.tsv"), 2)
	add("approval/testdata/redteam-s14g.tsv", filepath.Join(repoRoot, "approval", "testdata", "redteam-s14g.tsv"), 2)
	add("approval/testdata/oracle-found.tsv", filepath.Join(repoRoot, "approval", "testdata", "oracle-found.tsv"), 1)
	add("approval/testdata/variables.tsv", filepath.Join(repoRoot, "approval", "testdata", "variables.tsv"), 2)
	add("approval/testdata/dataflow.tsv", filepath.Join(repoRoot, "approval", "testdata", "dataflow.tsv"), 2)
	add("approval/testdata/peer-disagreements.tsv", filepath.Join(repoRoot, "approval", "testdata", "peer-disagreements.tsv"), 2)
	add("internal/oracle/testdata/redteam.tsv", filepath.Join("testdata", "redteam.tsv"), 0)
	add("shellparse/testdata/divergence.tsv", filepath.Join(repoRoot, "shellparse", "testdata", "divergence.tsv"), 0)
	fz, err := ReadFuzzCorpus(filepath.Join(repoRoot, "shellparse", "testdata", "fuzz", "FuzzParse"))
	if err == nil {
		out = append(out, Corpus{Name: "shellparse/testdata/fuzz/FuzzParse", Commands: fz})
	}
	peer := filepath.Join(repoRoot, "..", "shared", "corpus", "peer-commands.tsv")
	if _, err := os.Stat(peer); err == nil {
		add("../shared/corpus/peer-commands.tsv", peer, 1)
	} else {
		t.Logf("skipping the peer corpus: %s is absent", peer)
	}
	return out
}

// runnable reports whether a command can be given to the driver (no NUL,
// not huge).
func runnable(c string) bool { return c != "" && !strings.ContainsRune(c, 0) && len(c) < 4096 }

// TestOracleAgrees runs the corpora (a seeded sample of -oracle.corpus
// commands, all with 0) and -oracle.n generated commands under bash, and
// checks that no static verdict is weaker than what was observed. Commands
// held for approval because the analyzer could not see into them (an
// opaque segment, a parser divergence) and observed hardline are counted
// apart: no static analysis can do better, and the sandbox's exec gate is
// the layer for them.
func TestOracleAgrees(t *testing.T) {
	o := newOracle(t)
	var cmds []string
	seen := map[string]bool{}
	var fromCorpus []string
	for _, c := range corpora(t) {
		n := 0
		for _, cmd := range c.Commands {
			if runnable(cmd) && !seen[cmd] {
				seen[cmd] = true
				fromCorpus = append(fromCorpus, cmd)
				n++
			}
		}
		t.Logf("corpus %s: %d commands", c.Name, n)
	}
	if *flagCorpus > 0 && *flagCorpus < len(fromCorpus) {
		r := rand.New(rand.NewPCG(*flagSeed, 7))
		r.Shuffle(len(fromCorpus), func(i, j int) { fromCorpus[i], fromCorpus[j] = fromCorpus[j], fromCorpus[i] })
		fromCorpus = fromCorpus[:*flagCorpus]
	}
	cmds = append(cmds, fromCorpus...)
	generated := 0
	for _, c := range Generate(*flagSeed, *flagN) {
		if !seen[c] {
			seen[c] = true
			cmds = append(cmds, c)
			generated++
		}
	}
	cases := withSetVariants(cmds)

	var under, hidden, over, lostAll int
	var found []string
	recorded := map[string]bool{}
	start := time.Now()
	for i := 0; i < len(cases); i += *flagBatch {
		batch := cases[i:min(i+*flagBatch, len(cases))]
		obs, lost, err := o.RunCases(t.Context(), batch)
		require.NoError(t, err)
		if lost > 0 {
			// A command that ends the batch (kill -1, a wiped log) takes
			// the results of those after it: each is run again alone, and
			// only what is lost then is counted (a lost result reads as
			// allow and would hide an under-rating).
			lost = 0
			for j, ob := range obs {
				if !isLost(ob) {
					continue
				}
				again, l, err := o.RunCases(t.Context(), batch[j:j+1])
				require.NoError(t, err)
				obs[j], lost = again[0], lost+l
				if l > 0 {
					t.Logf("result lost: %q (set: %q)", batch[j].Command, batch[j].Env)
				}
			}
		}
		lostAll += lost
		for _, ob := range obs {
			switch judge(ob) {
			case hiddenVerdict:
				hidden++
				if hidden <= 80 {
					t.Logf("approval where bash showed hardline, behind an opaque finding: %q (set: %q)\n\tevidence: %v", ob.Command, ob.Env, ob.Evidence)
				}
			case underRated:
				under++
				if !recorded[ob.Command] {
					// oracle-found.tsv keeps the command; its runs
					// give it every set variant again.
					recorded[ob.Command] = true
					found = append(found, ob.Tier.String()+"\t"+Escape(ob.Command))
				}
				if under <= 40 {
					an, _ := Analyze(ob.Command)
					t.Errorf("under-rated: %s statically, %s observed: %q (set: %q)\n\tevidence: %v", an.Verdict, ob.Tier, ob.Command, ob.Env, ob.Evidence)
				}
			case overRated:
				over++
			}
		}
	}
	t.Logf("generator vocabulary: %s", vocabSummary())
	t.Logf("oracle: %d commands (%d from corpora, %d generated), %d runs with their set variants, in %s; under-rated %d, approval-where-hardline behind an opaque finding %d, over-rated %d, results lost %d",
		len(cmds), len(fromCorpus), generated, len(cases), time.Since(start).Round(time.Second), under, hidden, over, lostAll)
	if *flagRecord && len(found) > 0 {
		p := filepath.Join(repoRoot, "approval", "testdata", "oracle-found.tsv")
		f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0o644)
		require.NoError(t, err)
		for _, l := range found {
			_, err := fmt.Fprintln(f, l)
			require.NoError(t, err)
		}
		require.NoError(t, f.Close())
	}
}

// TestOracleTiers runs the commands of -oracle.tiers under bash and logs
// "observed<TAB>static<TAB>command" for each: how a new corpus case gets its
// bash-observed tier. It fails on an under-rated command as
// TestOracleAgrees does.
func TestOracleTiers(t *testing.T) {
	if *flagTiers == "" {
		t.Skip("no -oracle.tiers file")
	}
	data, err := os.ReadFile(*flagTiers)
	require.NoError(t, err)
	var cmds []string
	for _, l := range strings.Split(string(data), "\n") {
		if runnable(l) {
			cmds = append(cmds, Unescape(l))
		}
	}
	o := newOracle(t)
	obs, lost, err := o.RunCases(t.Context(), withSetVariants(cmds))
	require.NoError(t, err)
	assert.Zero(t, lost, "results lost")
	// A command's observed tier is its worst over its set variants, which
	// follow it.
	worst := map[string]approval.Tier{}
	for _, ob := range obs {
		worst[ob.Command] = max(worst[ob.Command], ob.Tier)
		assert.NotEqual(t, underRated, judge(ob), "under-rated: %q (set: %q), evidence %v", ob.Command, ob.Env, ob.Evidence)
	}
	for _, c := range cmds {
		an, _ := Analyze(c)
		t.Logf("%s\t%s\t%s", worst[c], an.Verdict, Escape(c))
	}
}

// withSetVariants are cmds, each run with no variable set and then with
// each of its SetVariants.
func withSetVariants(cmds []string) []Case {
	var out []Case
	for _, c := range cmds {
		out = append(out, Case{Command: c})
		for _, env := range SetVariants(c) {
			out = append(out, Case{Command: c, Env: env})
		}
	}
	return out
}

// verdict is how a static verdict compares with the observed tier.
type verdict int

const (
	agrees verdict = iota
	underRated
	// hiddenVerdict: approval where bash showed hardline, behind a finding
	// that says the analyzer could not see in (an opaque segment, a parser
	// divergence, an interpreter's code): no static analysis does better,
	// and the sandbox's exec gate is the layer for it.
	hiddenVerdict
	overRated
)

// judge compares the analyzer's verdict on ob's command with what bash
// showed. A command over the analyzer's size limit is refused outright
// and agrees.
func judge(ob Observation) verdict {
	an, err := Analyze(ob.Command)
	if err != nil {
		return agrees
	}
	switch static := an.Verdict; {
	case ob.Tier > static && static == approval.TierApproval && opaque(an):
		return hiddenVerdict
	case ob.Tier > static:
		return underRated
	case ob.Tier < static:
		return overRated
	}
	return agrees
}

// FuzzOracle feeds the fuzzer's bytes to the generator as its choices
// (which program, option, spelling, value, wrapper, quoting, target and
// construct), runs the command it writes under bash in the sandbox and
// fails when the static verdict is weaker than what bash showed. Each
// input is one sandbox start and run (seconds on a loaded machine; one
// worker, since the fuzzing engine gives up on an input after 10s): the
// unit run executes its three seeds, fuzz-short gives it its 10s, make
// oracle-fuzz runs it long.
func FuzzOracle(f *testing.F) {
	for _, seed := range [][]byte{{0}, {3, 200, 17, 4, 99, 1, 250}, []byte("a disk after any option")} {
		f.Add(seed)
	}
	o := newOracle(f)
	f.Fuzz(func(t *testing.T, choices []byte) {
		cmd := command(&byteChooser{b: choices})
		if !runnable(cmd) {
			return
		}
		obs, lost, err := o.RunCases(t.Context(), withSetVariants([]string{cmd}))
		require.NoError(t, err)
		require.Zero(t, lost, cmd)
		for _, ob := range obs {
			if judge(ob) == underRated {
				an, _ := Analyze(cmd)
				t.Errorf("under-rated: %s statically, %s observed: %q (set: %q)\n\tevidence: %v", an.Verdict, ob.Tier, cmd, ob.Env, ob.Evidence)
			}
		}
	})
}

// opaque reports whether the analyzer said it could not see into the
// command: an opaque segment (a parser divergence included) or no parse.
func opaque(an *approval.Analysis) bool {
	return an.Script == nil || an.ParseErr != "" || len(an.Script.Opaque) > 0
}

// TestOracleVariables runs approval/testdata/variables.tsv and dataflow.tsv
// under bash, each command with its set variants: the worst must be what its
// observed column says (the analyzer's side is approval's TestVariables).
func TestOracleVariables(t *testing.T) {
	for _, f := range []string{"variables.tsv", "dataflow.tsv"} {
		t.Run(f, func(t *testing.T) { checkObserved(t, filepath.Join(repoRoot, "approval", "testdata", f)) })
	}
}

// checkObserved runs the commands of a file of observed_tier, static_tier,
// command rows and checks the observed column.
func checkObserved(t *testing.T, file string) {
	o := newOracle(t)
	rows, err := ReadTSV(file, 0)
	require.NoError(t, err)
	cmds, err := ReadTSV(file, 2)
	require.NoError(t, err)
	require.Len(t, cmds, len(rows))
	require.NotEmpty(t, cmds)
	obs, lost, err := o.RunCases(t.Context(), withSetVariants(cmds))
	require.NoError(t, err)
	require.Zero(t, lost)
	// The observed tier of a command is its worst over its set variants.
	worst := map[string]Observation{}
	for _, ob := range obs {
		if w, ok := worst[ob.Command]; !ok || ob.Tier > w.Tier {
			worst[ob.Command] = ob
		}
	}
	for i, c := range cmds {
		ob := worst[c]
		assert.Equal(t, rows[i], ob.Tier.String(), "%q (set: %q): evidence %v stderr %q", c, ob.Env, ob.Evidence, ob.Stderr)
		an, err := Analyze(c)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, an.Verdict, ob.Tier, "%q: under-rated", c)
	}
}

// isLost reports whether ob is a command whose result the driver never
// wrote (Oracle.Run).
func isLost(ob Observation) bool {
	return len(ob.Evidence) > 0 && strings.HasPrefix(ob.Evidence[0], "lost:")
}
