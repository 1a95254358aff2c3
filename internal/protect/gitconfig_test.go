package protect

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestConfigRefs(t *testing.T) {
	t.Parallel()
	type ref struct {
		path    string
		kind    Kind
		missing bool
		arg     bool
	}
	cases := []struct {
		name, text string
		want       []ref
	}{
		{"hooks directory", "[core]\n\thooksPath = .husky\n", []ref{{".husky", Dir, true, false}}},
		{"husky 9 runs the hooks above its stubs", "[core]\n\thooksPath = .husky/_\n", []ref{{".husky/_", Dir, true, false}, {".husky", Dir, true, false}}},
		{"key and section case", "[CORE]\n\tHooksPath=hooks\n", []ref{{"hooks", Dir, true, false}}},
		{"include", "[include]\n\tpath = ../tools/shared.gitconfig\n", []ref{{"../tools/shared.gitconfig", File, true, false}}},
		{"includeIf", "[includeIf \"gitdir:~/w/\"]\n\tpath = \"../x y.inc\" ; a comment\n", []ref{{"../x y.inc", File, true, false}}},
		{"fsmonitor program", "[core]\n\tfsmonitor = ./tools/watch --fast\n", []ref{{"./tools/watch", File, true, false}}},
		{"quoted command, words inside", "[core]\n\tfsmonitor = \"sh -c 'tools/w.sh; false'\"\n", []ref{{"tools/w.sh", File, false, false}, {"false", File, false, true}}},
		{"a program from $PATH is not a work-tree file", "[core]\n\teditor = code --wait\n\tpager = less -R\n", nil},
		{"interpreter and script", "[core]\n\tfsmonitor = python3 fsm.py\n", []ref{{"fsm.py", File, false, true}}},
		{"shell alias", "[alias]\n\tlint = !./scripts/lint --all\n", []ref{{"./scripts/lint", File, true, false}}},
		{"git alias runs git", "[alias]\n\tst = status -s\n", nil},
		{"filter with a subsection holding dots", "[filter \"a.b\"]\n\tclean = bin/clean %f\n", []ref{{"bin/clean", File, true, false}, {"%f", File, false, true}}},
		{"deprecated subsection syntax", "[diff.X]\n\ttextconv = conv/x\n", []ref{{"conv/x", File, true, false}}},
		{"continuation line", "[core]\n\tpager = ./less \\\n  -R\n", []ref{{"./less", File, true, false}}},
		{"escaped quote", "[core]\n\teditor = \"ed\\\"it/or\"\n", []ref{{"it/or", File, false, false}}},
		{"comment, not a value", "[core]\n# hooksPath = x\n\tbare = false\n", nil},
		{"boolean key", "[core]\n\tfsmonitor\n\thooksPath = h\n", []ref{{"h", Dir, true, false}}},
		{"other keys", "[user]\n\tname = tools/x\n[remote \"o\"]\n\turl = ../r\n", nil},
		{"remote helper programs", "[remote \"o\"]\n\tuploadpack = ./up\n", []ref{{"./up", File, true, false}}},
		{"template directory: every later init and clone copies and runs its hooks", "[init]\n\ttemplateDir = tmpl\n", []ref{{"tmpl", Dir, true, false}}},
		{"trailer commands", "[trailer \"sign\"]\n\tkey = Signed-off-by\n\tcommand = bin/signer\n\tcmd = ./bin/cmd --x\n", []ref{{"bin/signer", File, true, false}, {"./bin/cmd", File, true, false}}},
		{"alternate refs command", "[core]\n\talternateRefsCommand = bin/altrefs\n", []ref{{"bin/altrefs", File, true, false}}},
		{"trust files", "[gpg \"ssh\"]\n\tallowedSignersFile = keys/allowed\n\trevocationFile = keys/revoked\n[http]\n\tsslCAInfo = ca.pem\n\tsslCAPath = certs\n[http \"https://h.example/\"]\n\tsslCAInfo = h.pem\n",
			[]ref{{"keys/allowed", File, true, false}, {"keys/revoked", File, true, false}, {"ca.pem", File, true, false}, {"certs", Dir, true, false}, {"h.pem", File, true, false}}},
		{"remote helper named as a path", "[remote \"o\"]\n\tvcs = ./tools/helper\n[remote \"p\"]\n\tvcs = hg\n", []ref{{"./tools/helper", File, true, false}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []ref
			for _, r := range ConfigRefs([]byte(c.text)) {
				got = append(got, ref{r.Path, r.Kind, r.Missing, r.Arg})
			}
			assert.Equal(t, c.want, got)
		})
	}
}

func TestConfigRefResolve(t *testing.T) {
	t.Parallel()
	ws := "/w/ws"
	cases := []struct {
		ref      ConfigRef
		dir, top string
		want     string
		ok       bool
	}{
		{ConfigRef{Path: "../tools/x", Base: BaseFile}, ".git", ".", "tools/x", true},
		{ConfigRef{Path: "../../../x", Base: BaseFile}, "sub/.git", "sub", "", false},
		{ConfigRef{Path: ".husky", Base: BaseTop}, ".git", ".", ".husky", true},
		{ConfigRef{Path: ".githooks", Base: BaseTop}, "sub/.git", "sub", "sub/.githooks", true},
		{ConfigRef{Path: "/w/ws/tools/x", Base: BaseTop}, ".git", ".", "tools/x", true},
		{ConfigRef{Path: "/w/wsx/tools", Base: BaseTop}, ".git", ".", "", false},
		{ConfigRef{Path: "/usr/bin/less", Base: BaseTop}, ".git", ".", "", false},
		{ConfigRef{Path: "~/x", Base: BaseFile}, ".git", ".", "", false},
		{ConfigRef{Path: "$HOME/x", Base: BaseTop}, ".git", ".", "", false},
	}
	for _, c := range cases {
		got, ok := c.ref.Resolve(ws, c.dir, c.top)
		assert.Equal(t, c.ok, ok, "%+v", c.ref)
		assert.Equal(t, c.want, got, "%+v", c.ref)
	}
}

// TestReasonFoldsCase: on a case-folding directory (ext4 or tmpfs with
// casefold, chattr +F) ".GIT/config" opens .git/config; the creation gate
// refuses ".git" in any letter case for that reason, and the file tools'
// check must too.
func TestReasonFoldsCase(t *testing.T) {
	t.Parallel()
	for _, p := range []string{".GIT/config", ".Git/hooks/pre-commit", "sub/.GIT", ".ENVRC", ".BashRC"} {
		assert.NotEmpty(t, Reason(p), p)
	}
}
