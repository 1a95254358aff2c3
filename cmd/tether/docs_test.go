package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"mvdan.cc/sh/v3/syntax"
)

// docFiles hold the command blocks users copy.
var docFiles = []string{"../../README.md", "../../docs/api.md"}

// shBlock is one ```sh fenced block.
var shBlock = regexp.MustCompile("(?s)```sh\n(.*?)```")

// TestDocsCommandsParse parses every command block of README.md and
// docs/api.md as shell and checks each tether invocation in it against the
// real command tree: the subcommand exists, its flags parse and its
// arguments are accepted ([…] words of a synopsis are skipped). Running
// them is the job of docs_api.txtar (docs/api.md whole) and of
// TestDocsCommandsRun with docs_readme.txtar (README.md).
func TestDocsCommandsParse(t *testing.T) {
	for _, file := range docFiles {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		blocks := shBlock.FindAllStringSubmatch(string(data), -1)
		require.NotEmpty(t, blocks, "%s has no ```sh blocks", file)
		seen := 0
		for _, b := range blocks {
			f, err := syntax.NewParser().Parse(strings.NewReader(b[1]), file)
			if !assert.NoError(t, err, "%s: a block does not parse as shell:\n%s", file, b[1]) {
				continue
			}
			syntax.Walk(f, func(n syntax.Node) bool {
				call, ok := n.(*syntax.CallExpr)
				if !ok || len(call.Args) == 0 || call.Args[0].Lit() != "tether" {
					return true
				}
				seen++
				checkTetherArgs(t, file, call)
				return true
			})
		}
		if file == "../../README.md" {
			assert.NotZero(t, seen, "%s: no tether command found", file)
		}
	}
}

// checkTetherArgs resolves one documented tether call in the command tree.
// Words that are not literal ($S, "$(…)") stand for a value.
func checkTetherArgs(t *testing.T, file string, call *syntax.CallExpr) {
	t.Helper()
	var args []string
	var text strings.Builder
	optional := false // inside an optional part of a synopsis: [--state-dir DIR]
	for i, w := range call.Args {
		lit := w.Lit()
		if strings.HasPrefix(lit, "[") {
			optional = true
		}
		if optional {
			optional = !strings.HasSuffix(lit, "]")
			continue
		}
		if lit == "" {
			lit = "VALUE"
			if len(w.Parts) == 1 {
				if q, ok := w.Parts[0].(*syntax.SglQuoted); ok {
					lit = q.Value
				}
			}
		}
		if i > 0 {
			args = append(args, lit)
		}
		text.WriteString(lit + " ")
	}
	root := newRootCmd()
	c, rest, err := root.Find(args)
	if !assert.NoError(t, err, "%s: %s", file, text.String()) {
		return
	}
	if c.HasSubCommands() && !c.Runnable() {
		assert.Fail(t, "a group without its subcommand", "%s: %s", file, text.String())
		return
	}
	assert.NoError(t, c.ParseFlags(rest), "%s: %s", file, text.String())
	if c.Args != nil {
		assert.NoError(t, c.ValidateArgs(c.Flags().Args()), "%s: %s", file, text.String())
	}
}

// docNotRun are the README command lines no script here runs, with why
// and what covers them instead. Everything else in a ```sh block of
// README.md must be run by a script in testdata/script (TestDocsCommandsRun);
// docs/api.md runs whole (docs_api.txtar).
var docNotRun = map[string]string{
	"make demo": "provisions the machine first; the scenario it runs is demo.TestDemoScenario",
	"make test": "is the whole suite: CI runs it (.ci/run)",
	"sudo tether rootfs build --from debootstrap DIR":      "downloads Debian (25-60 s): rootfs.TestBuildDebootstrap, as root and not -short",
	"[--suite bookworm] [--mirror URL] [--force] [--json]": "a synopsis of the line above",
	"scripts/vagrant-test.sh":                              "boots VMs, which CI cannot; scripts.TestVagrantfileValidates checks the Vagrantfile",
	"vagrant destroy -f":                                   "the VMs' clean-up (see above)",
	"scripts/bench-launch.sh [-n 200] [-j]":                "a benchmark, run by hand (make bench)",
	"scripts/bench-trace.sh [-n 40]":                       "a benchmark (a launch trace), run by hand",
	"make test-cgroup2":                                    "boots the cgroup v2 QEMU guest for every test of its packages (minutes to hours under TCG): run by hand",
	"make test-cgroup2-ci":                                 "boots the cgroup v2 QEMU guest: .ci/run runs it after make test; scripts.TestVMCITestsList checks its list",
	"make test-systemd":                                    "boots the systemd QEMU guest: run by hand (docs/systemd.md)",
	"scripts/vm-test.sh --smoke":                           "boots the cgroup v2 QEMU guest; make test-cgroup2-ci runs the same smoke check first",
	"scripts/vm-test.sh --run 'TestFault'":                 "boots the cgroup v2 QEMU guest for a chosen -run: run by hand",
}

// TestDocsCommandsRun checks that every command of README.md's ```sh
// blocks is run by a script in testdata/script, as written: a line of a
// script (an exec line, or a line of a shell script in the archive) must
// hold the command, with the documentation's placeholders (DIR, JOB, an
// id such as d-3, a SHA-256 prefix, a port, [optional] parts) standing for
// any word. docNotRun lists the exceptions.
func TestDocsCommandsRun(t *testing.T) {
	scripts, err := filepath.Glob("testdata/script/*.txtar")
	require.NoError(t, err)
	var lines []string
	for _, f := range scripts {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		lines = append(lines, strings.Split(string(data), "\n")...)
	}
	data, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	for _, b := range shBlock.FindAllStringSubmatch(string(data), -1) {
		for _, line := range strings.Split(b[1], "\n") {
			cmd := docCommand(line)
			if cmd == "" {
				continue
			}
			if why, ok := docNotRun[cmd]; ok {
				t.Logf("not run: %s (%s)", cmd, why)
				continue
			}
			re := docPattern(cmd)
			found := slices.ContainsFunc(lines, re.MatchString)
			assert.True(t, found, "README.md: no script in testdata/script runs %q", cmd)
		}
	}
}

// docComment is a trailing comment of a documented command (white space,
// then "# ").
var docComment = regexp.MustCompile(`\s+#\s.*$`)

// docCommand is the command of a documentation line ("" for a comment or
// a blank line).
func docCommand(line string) string {
	line = strings.TrimSpace(docComment.ReplaceAllString(line, ""))
	if strings.HasPrefix(line, "#") {
		return ""
	}
	return line
}

// docPlaceholder is a word of the documentation that stands for any word.
var docPlaceholder = regexp.MustCompile(`^(?:[A-Z][A-Z0-9_]+|d-\d+|[0-9a-f]{8,}|127\.0\.0\.1:\d+)$`)

// docPattern matches a script line that runs cmd: its words in order,
// placeholders matching any word, [optional] parts dropped.
func docPattern(cmd string) *regexp.Regexp {
	var parts []string
	optional := false
	for _, w := range strings.Fields(cmd) {
		if strings.HasPrefix(w, "[") {
			optional = true
		}
		if optional {
			optional = !strings.HasSuffix(w, "]")
			continue
		}
		if w == "sudo" && len(parts) == 0 {
			continue // the scripts run as root
		}
		if docPlaceholder.MatchString(w) {
			parts = append(parts, `\S+`)
			continue
		}
		parts = append(parts, regexp.QuoteMeta(w))
	}
	return regexp.MustCompile(strings.Join(parts, `\s+`))
}
