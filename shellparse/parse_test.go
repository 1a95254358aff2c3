package shellparse

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"mvdan.cc/sh/v3/syntax"
)

func mustParse(t *testing.T, src string) *Script {
	t.Helper()
	s, err := Parse(src, Options{})
	require.NoError(t, err, "parsing %q", src)
	return s
}

// programs lists the effective programs of a script, in order.
func programs(s *Script) []string {
	out := make([]string, 0, len(s.Commands))
	for _, c := range s.Commands {
		out = append(out, c.Program)
	}
	return out
}

func argValues(c Command) []string {
	out := make([]string, 0, len(c.Args))
	for _, a := range c.Args {
		out = append(out, a.Value)
	}
	return out
}

func wrapperNames(c Command) []string {
	out := make([]string, 0, len(c.Wrappers))
	for _, w := range c.Wrappers {
		out = append(out, w.Program)
	}
	return out
}

func findCmd(s *Script, program string) (Command, bool) {
	for _, c := range s.Commands {
		if c.Program == program {
			return c, true
		}
	}
	return Command{}, false
}

func opaqueKinds(s *Script) []OpaqueKind {
	out := make([]OpaqueKind, 0, len(s.Opaque))
	for _, o := range s.Opaque {
		out = append(out, o.Kind)
	}
	return out
}

func TestPrograms(t *testing.T) {
	t.Parallel()
	cases := []struct {
		src  string
		want []string
	}{
		{"git status", []string{"git"}},
		{"ls -la src/ && go test ./... || echo fail", []string{"ls", "go", "echo"}},
		{"a; b & c | d |& e", []string{"a", "b", "c", "d", "e"}},
		{"(a; (b)) && { c; }", []string{"a", "b", "c"}},
		{"if a; then b; elif c; then d; else e; fi", []string{"a", "b", "c", "d", "e"}},
		{"while a; do b; done; until c; do d; done", []string{"a", "b", "c", "d"}},
		{"for x in $(a); do b; done", []string{"a", "b"}},
		{"for ((i=$(a); i<3; i++)); do b; done", []string{"a", "b"}},
		{"case $(a) in x) b;; $(c)) d;; esac", []string{"a", "b", "c", "d"}},
		{"echo `a` $(b $(c))", []string{"a", "c", "b", "echo"}},
		{"diff <(a) >(b)", []string{"a", "b", "diff"}},
		{"X=$(a) b", []string{"a", "b"}},
		{"echo > $(a)", []string{"a", "echo"}},
		{"(( $(a) + 1 ))", []string{"a"}},
		{"[[ -f $(a) && $(b) == x ]]", []string{"a", "b"}},
		{"coproc a", []string{"a"}},
		{"time a | b", []string{"a", "b"}},
		{"export X=$(a); local Y=`b`; declare -r Z=$(c)", []string{"a", "export", "b", "local", "c", "declare"}},
		{"echo ${X:-$(a)} ${Y/$(b)/c}", []string{"a", "b", "echo"}},
		{"f() { a; }; f", []string{"a", "f"}},
		{"cat <<EOF\n$(a)\nEOF", []string{"a", "cat"}},
		{"printf SAFE # x; reboot", []string{"printf"}},
		{"printf 'a;reboot'", []string{"printf"}},
		{`echo "it's \"fine\"; reboot"`, []string{"echo"}},
		{`echo it\'s; b`, []string{"echo", "b"}},
		{"let x=$(a)+1", []string{"a", "let"}},
		{"> /dev/sda", []string{""}},
		{"X=1", []string{""}},
	}
	for _, tc := range cases {
		t.Run(tc.src, func(t *testing.T) {
			t.Parallel()
			s := mustParse(t, tc.src)
			assert.Equal(t, tc.want, programs(s))
		})
	}
}

func TestProgramNormalisation(t *testing.T) {
	t.Parallel()
	cases := []struct {
		src, program, spelling string
	}{
		{`rm -rf /`, "rm", "rm"},
		{`r\m -rf /`, "rm", "rm"},
		{`'r'm -rf /`, "rm", "rm"},
		{`"r"m -rf /`, "rm", "rm"},
		{`r''m -rf /`, "rm", "rm"},
		{`r""m -rf /`, "rm", "rm"},
		{`$'\x72\x6d' -rf /`, "rm", "rm"},
		{`$'\162m' -rf /`, "rm", "rm"},
		{`/usr/bin/rm -rf /`, "rm", "/usr/bin/rm"},
		{`./rm -rf /`, "rm", "./rm"},
		{`"/bin/r"m x`, "rm", "/bin/rm"},
		{"ｒｍ -rf /", "ｒｍ", "ｒｍ"},
	}
	for _, tc := range cases {
		t.Run(tc.src, func(t *testing.T) {
			t.Parallel()
			s := mustParse(t, tc.src)
			require.Len(t, s.Commands, 1)
			c := s.Commands[0]
			assert.Equal(t, tc.program, c.Program)
			assert.Equal(t, tc.spelling, c.Spelling)
			assert.Empty(t, s.Opaque)
			assert.Equal(t, tc.src, c.Text)
		})
	}
	s := mustParse(t, "ｒｍ -rf /")
	assert.True(t, s.Commands[0].NonASCII)
	assert.False(t, mustParse(t, "rm -rf /").Commands[0].NonASCII)
}

func TestDynamicProgram(t *testing.T) {
	t.Parallel()
	cases := []struct {
		src    string
		subs   []string // programs found inside the substitutions
		static []string // programs of the static expansions (progword.go)
	}{
		{`$(cat x) -rf /`, []string{"cat"}, nil},
		{"`cat x` -rf /", []string{"cat"}, nil},
		{`"$CMD" -rf /`, nil, nil},
		{`$CMD -rf /`, nil, nil},
		{`${X}rm -rf /`, nil, nil},
		{`r${IFS}m`, nil, nil},
		{`{rm,-rf,/}`, nil, []string{"rm"}},
		{`{reboot,}`, nil, []string{"reboot"}},
		{`/bin/r? -rf /`, nil, []string{"rc", "rg", "rm", "rr"}},
		{`/s*/reboot`, nil, []string{"reboot"}},
		{`sudo $CMD -rf /`, nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.src, func(t *testing.T) {
			t.Parallel()
			s := mustParse(t, tc.src)
			require.Len(t, s.Opaque, 1)
			assert.Equal(t, OpaqueDynamicProgram, s.Opaque[0].Kind)
			assert.Equal(t, tc.src, s.Opaque[0].Text)
			assert.Equal(t, Span{0, len(tc.src)}, s.Opaque[0].Span)
			want := append(append(append([]string{}, tc.subs...), ""), tc.static...)
			assert.Equal(t, want, programs(s))
		})
	}
	s := mustParse(t, `rm -rf ${IFS}/`)
	require.Len(t, s.Commands, 1)
	assert.False(t, s.Commands[0].Args[1].Literal)
	assert.Equal(t, "${IFS}/", s.Commands[0].Args[1].Value)
}

func TestWords(t *testing.T) {
	t.Parallel()
	cases := []struct {
		src   string
		value string
		lit   bool
		glob  bool
	}{
		{`x "a b"`, "a b", true, false},
		{`x 'a $b'`, "a $b", true, false},
		{`x a\ b`, "a b", true, false},
		{`x "a\"b\$c\d"`, `a"b$c\d`, true, false},
		{`x "$HOME/.aws"`, "$HOME/.aws", false, false},
		{`x ${HOME}/.aws`, "${HOME}/.aws", false, false},
		{`x ~/.ssh`, "~/.ssh", false, false},
		{`x "~/.ssh"`, "~/.ssh", true, false},
		{`x /*`, "/*", false, true},
		{`x '/*'`, "/*", true, false},
		{`x {a,b}`, "{a,b}", false, true},
		{`x {}`, "{}", true, false},
		{`x $(date)`, "$(date)", false, false},
		{`x of=~/disk.img`, "of=~/disk.img", false, false},
		{`x PATH=/a:~/bin`, "PATH=/a:~/bin", false, false},
		{`x --dir=~/x`, "--dir=~/x", true, false},
		{`x a\`, `a\`, true, false},
	}
	for _, tc := range cases {
		t.Run(tc.src, func(t *testing.T) {
			t.Parallel()
			s := mustParse(t, tc.src)
			a := s.Commands[len(s.Commands)-1].Args[0]
			assert.Equal(t, tc.value, a.Value)
			assert.Equal(t, tc.lit, a.Literal)
			assert.Equal(t, tc.glob, a.Glob)
			assert.Equal(t, tc.src[2:], a.Raw)
		})
	}
}

func TestWrappers(t *testing.T) {
	t.Parallel()
	cases := []struct {
		src      string
		program  string
		args     []string
		wrappers []string
	}{
		{"sudo rm -rf /", "rm", []string{"-rf", "/"}, []string{"sudo"}},
		{"sudo -u bob -g adm -- rm x", "rm", []string{"x"}, []string{"sudo"}},
		{"sudo -nu bob rm x", "rm", []string{"x"}, []string{"sudo"}},
		{"sudo -S -p '' rm x", "rm", []string{"x"}, []string{"sudo"}},
		{"sudo -l rm", "sudo", []string{"-l", "rm"}, nil},
		{"sudo -s", "sudo", []string{"-s"}, nil},
		{"/usr/bin/sudo -n id", "id", nil, []string{"sudo"}},
		{"doas -u root rm x", "rm", []string{"x"}, []string{"doas"}},
		{"env -i -u HOME X=1 rm x", "rm", []string{"x"}, []string{"env"}},
		{"env", "env", nil, nil},
		{"nice -n 5 rm x", "rm", []string{"x"}, []string{"nice"}},
		{"nice -10 rm x", "rm", []string{"x"}, []string{"nice"}},
		{"nohup rm x &", "rm", []string{"x"}, []string{"nohup"}},
		{"setsid -f rm x", "rm", []string{"x"}, []string{"setsid"}},
		{"timeout -s KILL -k 5 10 rm x", "rm", []string{"x"}, []string{"timeout"}},
		{"timeout --signal=KILL 10s rm x", "rm", []string{"x"}, []string{"timeout"}},
		{"time -p rm x", "rm", []string{"x"}, []string{"time"}},
		{"/usr/bin/time -f %e -o out rm x", "rm", []string{"x"}, []string{"time"}},
		{"stdbuf -oL -e 0 rm x", "rm", []string{"x"}, []string{"stdbuf"}},
		{"ionice -c 3 -n 7 rm x", "rm", []string{"x"}, []string{"ionice"}},
		{"ionice -p 42", "ionice", []string{"-p", "42"}, nil},
		{"chrt -f 99 rm x", "rm", []string{"x"}, []string{"chrt"}},
		{"taskset -c 0,1 rm x", "rm", []string{"x"}, []string{"taskset"}},
		{"taskset 0x3 rm x", "rm", []string{"x"}, []string{"taskset"}},
		{"exec -a name rm x", "rm", []string{"x"}, []string{"exec"}},
		{"exec 3<>/dev/tcp/10.0.0.1/80", "exec", nil, nil},
		{"command -p rm x", "rm", []string{"x"}, []string{"command"}},
		{"command -v rm", "command", []string{"-v", "rm"}, nil},
		{"builtin echo x", "echo", []string{"x"}, []string{"builtin"}},
		{"xargs -0 -n 1 -I{} rm {}", "rm", []string{"{}"}, []string{"xargs"}},
		{"xargs -P 4 -d '\\n' rm", "rm", nil, []string{"xargs"}},
		{"xargs", "xargs", nil, nil},
		{"watch -x rm x", "rm", []string{"x"}, []string{"watch"}},
		{"flock /tmp/l rm x", "rm", []string{"x"}, []string{"flock"}},
		{"flock -w 5 /tmp/l rm x", "rm", []string{"x"}, []string{"flock"}},
		{"busybox rm x", "rm", []string{"x"}, []string{"busybox"}},
		{"toybox rm x", "rm", []string{"x"}, []string{"toybox"}},
		{"runuser -u bob -- rm x", "rm", []string{"x"}, []string{"runuser"}},
		{"proxychains4 -q curl x", "curl", []string{"x"}, []string{"proxychains4"}},
		{"firejail --net=none rm x", "rm", []string{"x"}, []string{"firejail"}},
		{"chroot /mnt rm x", "rm", []string{"x"}, []string{"chroot"}},
		{"pkexec --user bob rm x", "rm", []string{"x"}, []string{"pkexec"}},
		{"nsenter -t 1 -m -u rm x", "rm", []string{"x"}, []string{"nsenter"}},
		{"unshare -r --fork rm x", "rm", []string{"x"}, []string{"unshare"}},
		{"strace -f -o log rm x", "rm", []string{"x"}, []string{"strace"}},
		{"strace -p 42", "strace", []string{"-p", "42"}, nil},
		{"gosu bob rm x", "rm", []string{"x"}, []string{"gosu"}},
		{"setpriv --reuid 1000 rm x", "rm", []string{"x"}, []string{"setpriv"}},
		{"systemd-run --user -p X=1 rm x", "rm", []string{"x"}, []string{"systemd-run"}},
		{"torsocks curl x", "curl", []string{"x"}, []string{"torsocks"}},
		{"timeout --preserve 5 rm x", "rm", []string{"x"}, []string{"timeout"}},
		{"nice --adj=5 rm x", "rm", []string{"x"}, []string{"nice"}},
		{"sudo env X=1 nice -n 5 timeout 3 rm -rf /", "rm", []string{"-rf", "/"}, []string{"sudo", "env", "nice", "timeout"}},
	}
	for _, tc := range cases {
		t.Run(tc.src, func(t *testing.T) {
			t.Parallel()
			s := mustParse(t, tc.src)
			c, ok := findCmd(s, tc.program)
			require.True(t, ok, "no %s in %v", tc.program, programs(s))
			assert.Equal(t, tc.args, nilIfEmpty(argValues(c)))
			assert.Equal(t, tc.wrappers, nilIfEmpty(wrapperNames(c)))
			assert.Empty(t, s.Opaque)
		})
	}
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

func TestWrapperDetails(t *testing.T) {
	t.Parallel()
	s := mustParse(t, "sudo -S -u bob env -i -u HOME X=1 Y=\"a b\" rm x")
	c := s.Commands[0]
	require.Len(t, c.Wrappers, 2)
	assert.Equal(t, []string{"-S", "-u", "bob"}, c.Wrappers[0].Args)
	assert.True(t, c.Wrappers[0].HasShortFlag('S'))
	assert.False(t, c.Wrappers[0].HasShortFlag('s'))
	assert.Equal(t, []string{"-i", "-u HOME"}, c.EnvFlags)
	require.Len(t, c.Env, 2)
	assert.Equal(t, "X", c.Env[0].Name)
	assert.Equal(t, "1", c.Env[0].Value.Value)
	assert.Equal(t, "a b", c.Env[1].Value.Value)

	s = mustParse(t, "Z=2 sudo X=1 rm x")
	c = s.Commands[0]
	require.Len(t, c.Env, 2)
	assert.Equal(t, "Z", c.Env[0].Name)
	assert.Equal(t, "X", c.Env[1].Name)

	s = mustParse(t, "ls | xargs rm")
	c, _ = findCmd(s, "rm")
	assert.True(t, c.Context.ExtraArgs)
	assert.Equal(t, 2, c.Context.Pipeline)
}

func TestFindExec(t *testing.T) {
	t.Parallel()
	s := mustParse(t, `find / -name x -exec rm -rf {} \; -execdir sudo shred {} + -ok mv {} y ';'`)
	assert.Equal(t, []string{"find", "rm", "shred", "mv"}, programs(s))
	assert.Equal(t, []string{"-rf", "{}"}, argValues(s.Commands[1]))
	assert.Equal(t, []string{"find"}, wrapperNames(s.Commands[1]))
	assert.Equal(t, []string{"/", "-name", "x"}, s.Commands[1].Wrappers[0].Args)
	assert.Equal(t, []string{"find", "sudo"}, wrapperNames(s.Commands[2]))
	assert.True(t, s.Commands[2].Context.ExtraArgs)
	assert.False(t, s.Commands[1].Context.ExtraArgs)

	s = mustParse(t, `find . -exec sh -c 'rm -rf "$1"' _ {} \;`)
	assert.Equal(t, []string{"find", "rm"}, programs(s))
	assert.Equal(t, 1, s.Commands[1].Context.Payload)
}

func TestPayloads(t *testing.T) {
	t.Parallel()
	cases := []struct {
		src      string
		programs []string
		wrappers []string // of the last command
		depth    int      // payload depth of the last command
	}{
		{`bash -c 'rm -rf /'`, []string{"rm"}, []string{"bash"}, 1},
		{`sh -lc "ls; rm x"`, []string{"ls", "rm"}, []string{"sh"}, 1},
		{`bash -xec 'rm x'`, []string{"rm"}, []string{"bash"}, 1},
		{`bash -o pipefail -c 'rm x'`, []string{"rm"}, []string{"bash"}, 1},
		{`zsh -ic 'rm x'`, []string{"rm"}, []string{"zsh"}, 1},
		{`busybox sh -c 'rm x'`, []string{"rm"}, []string{"busybox", "sh"}, 1},
		{`sudo bash -c "sh -c 'rm x'"`, []string{"rm"}, []string{"sudo", "bash", "sh"}, 2},
		{`su -c 'rm x' root`, []string{"rm"}, []string{"su"}, 1},
		{`su - root -c 'rm x'`, []string{"rm"}, []string{"su"}, 1},
		{`runuser -l bob -c 'rm x'`, []string{"rm"}, []string{"runuser"}, 1},
		{`env -S 'rm -rf /'`, []string{"rm"}, []string{"env", "env"}, 1},
		{`env -S 'rm -rf' /tmp`, []string{"rm"}, []string{"env", "env"}, 1},
		{`env -iS 'reboot'`, []string{"reboot"}, []string{"env", "env"}, 1},
		{`env -S 'kill -9 -1' --null --split-string='rm -rf ~'`, []string{"kill"}, []string{"env", "env"}, 1},
		{`env -S 'reboot' --null`, []string{"reboot"}, []string{"env", "env"}, 1},
		{`env --s''='sh -c reboot'`, []string{"reboot"}, []string{"env", "env", "sh"}, 2},
		{`env --split-str=sh\ -c\ reboot`, []string{"reboot"}, []string{"env", "env", "sh"}, 2},
		{`env -S "sh\_-c\_reboot"`, []string{"reboot"}, []string{"env", "env", "sh"}, 2},
		{`env -vS/bin/sh -c 'rm -rf /'`, []string{"rm"}, []string{"env", "env", "sh"}, 2},
		{`env -S '-i sh -c reboot'`, []string{"reboot"}, []string{"env", "env", "sh"}, 2},
		{`env --argv0 custom -S 'sh -c reboot'`, []string{"reboot"}, []string{"env", "env", "sh"}, 2},
		{`su --comm 'reboot' root`, []string{"reboot"}, []string{"su"}, 1},
		{`watch -n 1 'ls | wc -l'`, []string{"ls", "wc"}, []string{"watch"}, 1},
		{`watch rm -rf /`, []string{"rm"}, []string{"watch"}, 1},
		{`flock /tmp/l -c 'rm x'`, []string{"rm"}, []string{"flock"}, 1},
		{`flock -c 'rm x' /tmp/l`, []string{"rm"}, []string{"flock"}, 1},
		{`parallel rm ::: a b`, []string{"rm", "rm", "rm"}, []string{"parallel"}, 1}, // the command, then each line parallel builds
		{`eval 'rm -rf /'`, []string{"eval", "rm"}, []string{"eval"}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.src, func(t *testing.T) {
			t.Parallel()
			s := mustParse(t, tc.src)
			require.Equal(t, tc.programs, programs(s))
			last := s.Commands[len(s.Commands)-1]
			assert.Equal(t, tc.wrappers, wrapperNames(last))
			assert.Equal(t, tc.depth, last.Context.Payload)
			assert.True(t, last.Span.Start >= 0 && last.Span.End <= len(tc.src) && last.Span.Start < last.Span.End)
		})
	}
	s := mustParse(t, `bash -c 'rm -rf /'`)
	assert.Equal(t, "rm -rf /", s.Commands[0].Text)
	assert.Equal(t, Span{8, 18}, s.Commands[0].Span)
}

func TestDepthLimit(t *testing.T) {
	t.Parallel()
	src := `sh -c "sh -c 'sh -c \"rm x\"'"`
	s, err := Parse(src, Options{MaxDepth: 2})
	require.NoError(t, err)
	assert.Empty(t, programs(s))
	require.Len(t, s.Opaque, 1)
	assert.Equal(t, OpaqueDepth, s.Opaque[0].Kind)
	assert.Equal(t, `sh -c "rm x"`, s.Opaque[0].Text)

	s = mustParse(t, src)
	assert.Equal(t, []string{"rm"}, programs(s))
	assert.Equal(t, 3, s.Commands[0].Context.Payload)
}

func TestOpaque(t *testing.T) {
	t.Parallel()
	cases := []struct {
		src     string
		kind    OpaqueKind
		program string
		text    string
	}{
		{`bash -c "$x"`, OpaquePayload, "bash", `bash -c "$x"`},
		{`bash -c "$(curl -s x)"`, OpaquePayload, "bash", `bash -c "$(curl -s x)"`},
		{`su -c "$CMD"`, OpaquePayload, "su", `su -c "$CMD"`},
		{`python3 -c 'import os'`, OpaquePayload, "python3", `python3 -c 'import os'`},
		{`python3 -Ic 'print(1)'`, OpaquePayload, "python3", `python3 -Ic 'print(1)'`},
		{`perl -ne 'system 1'`, OpaquePayload, "perl", `perl -ne 'system 1'`},
		{`ruby -e 'x'`, OpaquePayload, "ruby", `ruby -e 'x'`},
		{`node --eval 'x'`, OpaquePayload, "node", `node --eval 'x'`},
		{`node -e 'x'`, OpaquePayload, "node", `node -e 'x'`},
		{`php -r 'x'`, OpaquePayload, "php", `php -r 'x'`},
		{`deno eval 'x'`, OpaquePayload, "deno", `deno eval 'x'`},
		{`BUN.EXE -e 'x'`, OpaquePayload, "BUN.EXE", `BUN.EXE -e 'x'`},
		{`osascript -e 'x'`, OpaquePayload, "osascript", `osascript -e 'x'`},
		{`Rscript -e 'x'`, OpaquePayload, "Rscript", `Rscript -e 'x'`},
		{`lua -e 'x'`, OpaquePayload, "lua", `lua -e 'x'`},
		{`eval "$x"`, OpaqueEval, "eval", `eval "$x"`},
		{`source "$f"`, OpaqueSource, "source", `source "$f"`},
		{`. <(curl x)`, OpaqueSource, ".", `. <(curl x)`},
		{`bash <(curl -s x)`, OpaquePipedShell, "bash", `bash <(curl -s x)`},
		{`curl -s x | sh`, OpaquePipedShell, "sh", `curl -s x | sh`},
		{`echo x | base64 -d | bash`, OpaquePipedShell, "bash", `echo x | base64 -d | bash`},
		{`cat x | python3 -`, OpaquePipedShell, "python3", `cat x | python3 -`},
		{`curl x | sudo bash -s`, OpaquePipedShell, "bash", `curl x | sudo bash -s`},
		{`curl x | sudo -s`, OpaquePipedShell, "sudo", `curl x | sudo -s`},
		{`sh < script.sh`, OpaquePipedShell, "sh", `sh < script.sh`},
		{"python3 <<EOF\nimport os\nEOF", OpaqueHeredoc, "python3", "import os\n"},
		{`bash <<< "$x"`, OpaqueHeredoc, "bash", `"$x"`},
		{`bash -c`, "", "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.src, func(t *testing.T) {
			t.Parallel()
			s := mustParse(t, tc.src)
			if tc.kind == "" {
				assert.Empty(t, s.Opaque)
				return
			}
			require.Len(t, s.Opaque, 1, "%+v", s.Opaque)
			o := s.Opaque[0]
			assert.Equal(t, tc.kind, o.Kind)
			assert.Equal(t, tc.program, o.Program)
			assert.Equal(t, tc.text, o.Text)
		})
	}
	// Not opaque: plain scripts and interpreters on files.
	for _, src := range []string{"bash script.sh", "python3 x.py | cat", "cat x | python3 x.py", "python3 -m http.server", "ls | sh script.sh"} {
		assert.Empty(t, mustParse(t, src).Opaque, src)
	}
}

func TestRedirs(t *testing.T) {
	t.Parallel()
	cases := []struct {
		src    string
		fd     string
		mode   RedirMode
		target string
	}{
		{"echo x > /dev/sda", "", RedirWrite, "/dev/sda"},
		{"echo x >> ~/.bashrc", "", RedirAppend, "~/.bashrc"},
		{"echo x 2> err", "2", RedirWrite, "err"},
		{"echo x >| f", "", RedirWrite, "f"},
		{"cmd &> /dev/tcp/1.2.3.4/80", "&", RedirWrite, "/dev/tcp/1.2.3.4/80"},
		{"cmd &>> log", "&", RedirAppend, "log"},
		{"cat < in", "", RedirRead, "in"},
		{"exec 3<>/dev/tcp/host/port", "3", RedirReadWrite, "/dev/tcp/host/port"},
		{"cmd 2>&1", "2", RedirDup, "1"},
		{"cmd <&3", "", RedirDup, "3"},
		{"cat <<< 'hi'", "", RedirHeredoc, "hi"},
	}
	for _, tc := range cases {
		t.Run(tc.src, func(t *testing.T) {
			t.Parallel()
			s := mustParse(t, tc.src)
			require.Len(t, s.Commands, 1)
			require.Len(t, s.Commands[0].Redirs, 1)
			r := s.Commands[0].Redirs[0]
			assert.Equal(t, tc.fd, r.Fd)
			assert.Equal(t, tc.mode, r.Mode)
			assert.Equal(t, tc.target, r.Target.Value)
		})
	}
	s := mustParse(t, "cat <<'EOF' > out\nrm -rf /\nEOF\n")
	require.Equal(t, []string{"cat"}, programs(s))
	require.Len(t, s.Commands[0].Redirs, 2)
	assert.Equal(t, "rm -rf /\n", s.Commands[0].Redirs[0].Body)
	assert.Equal(t, "cat <<'EOF' > out", s.Commands[0].Text)

	s = mustParse(t, "{ echo a; echo b; } > /dev/sda")
	require.Len(t, s.Commands, 2)
	assert.Equal(t, "/dev/sda", s.Commands[1].Redirs[0].Target.Value)
}

func TestContext(t *testing.T) {
	t.Parallel()
	s := mustParse(t, "a | b | c; d & (e); f() { g; }; for x in y; do h; done; echo $(i) <(j); { k; } &")
	byProg := map[string]Context{}
	for _, c := range s.Commands {
		byProg[c.Program] = c.Context
	}
	assert.Equal(t, Context{Pipeline: 1, PipelineLen: 3}, byProg["a"])
	assert.Equal(t, Context{Pipeline: 3, PipelineLen: 3}, byProg["c"])
	assert.Equal(t, Context{Background: true}, byProg["d"])
	assert.Equal(t, Context{Subshell: true}, byProg["e"])
	assert.Equal(t, Context{Function: "f"}, byProg["g"])
	assert.Equal(t, Context{Loop: true}, byProg["h"])
	assert.Equal(t, Context{Substitution: true}, byProg["i"])
	assert.Equal(t, Context{Substitution: true}, byProg["j"])
	assert.Equal(t, Context{}, byProg["echo"])
	assert.Equal(t, Context{Background: true}, byProg["k"])
}

func TestFunctions(t *testing.T) {
	t.Parallel()
	cases := []struct {
		src  string
		want Function
	}{
		{":(){ :|:& };:", Function{Name: ":", SelfPipe: true, SelfBackground: true, Recursive: true, Invoked: true}},
		{"bomb(){ bomb|bomb& }; bomb", Function{Name: "bomb", SelfPipe: true, SelfBackground: true, Recursive: true, Invoked: true}},
		{"f(){ f & f; }; f", Function{Name: "f", SelfBackground: true, SelfSpawn: true, Recursive: true, Invoked: true}},
		{"function g { g | g; }", Function{Name: "g", SelfPipe: true, Recursive: true}},
		{"h() { ls; }; h", Function{Name: "h", Invoked: true}},
		{"h; h() { ls; }", Function{Name: "h"}},
		{"h() { ls; }; g() { h; }", Function{Name: "h"}},
		{"bash -c ':(){ :|:& };:'", Function{Name: ":", SelfPipe: true, SelfBackground: true, Recursive: true, Invoked: true}},
		{"f() { f; }", Function{Name: "f", Recursive: true}},
		// $FUNCNAME in a body is the function's name.
		{"f(){ $FUNCNAME | $FUNCNAME & }; f", Function{Name: "f", SelfPipe: true, SelfBackground: true, Recursive: true, Invoked: true}},
		{`f(){ "${FUNCNAME}" | "$FUNCNAME" & }`, Function{Name: "f", SelfPipe: true, SelfBackground: true, Recursive: true}},
	}
	for _, tc := range cases {
		t.Run(tc.src, func(t *testing.T) {
			t.Parallel()
			s := mustParse(t, tc.src)
			require.NotEmpty(t, s.Functions)
			got := s.Functions[0]
			got.Span = Span{}
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	_, err := Parse("echo 'unterminated", Options{})
	require.Error(t, err)
	var pe syntax.ParseError
	assert.True(t, errors.As(err, &pe), "%T %v", err, err)

	_, err = Parse(strings.Repeat("a", 100), Options{MaxBytes: 99})
	require.ErrorIs(t, err, ErrTooLarge)
	_, err = Parse(strings.Repeat("a", DefaultMaxBytes+1), Options{})
	require.ErrorIs(t, err, ErrTooLarge)
	_, err = Parse(strings.Repeat("a", 100), Options{MaxBytes: 100})
	require.NoError(t, err)

	_, err = Parse(strings.Repeat("$(", 5000)+"x"+strings.Repeat(")", 5000), Options{})
	require.ErrorIs(t, err, ErrTooDeep)
}

func TestDeepNesting(t *testing.T) {
	t.Parallel()
	// Within the parse limit but past the walk limit: the inner part is an
	// opaque depth-limit segment, the outer commands are still reported.
	src := "echo " + strings.Repeat("$(a ", 400) + strings.Repeat(")", 400)
	s := mustParse(t, src)
	assert.Contains(t, opaqueKinds(s), OpaqueDepth)
	assert.Equal(t, "echo", s.Commands[len(s.Commands)-1].Program)
}

func TestMoreOpaque(t *testing.T) {
	t.Parallel()
	cases := []struct {
		src  string
		kind OpaqueKind // "" for none
		text string
	}{
		{`perl -pi -e 's/a/b/e' f`, OpaquePayload, `perl -pi -e 's/a/b/e' f`},
		{`perl -pi -e 's/a/b/' f`, "", ""}, // grammar.PerlFiltersOnly
		{`perl -ne 'print' 'x|'`, OpaquePayload, `perl -ne 'print' 'x|'`},
		{`perl -I lib -ne 'print' f`, OpaquePayload, `perl -I lib -ne 'print' f`},
		{`perl -Mstrict script.pl`, "", ""},
		{`ruby -rjson -e 'x'`, OpaquePayload, `ruby -rjson -e 'x'`},
		{`python3 "$script"`, OpaqueSource, `python3 "$script"`},
		{`bash "$f"`, OpaqueSource, `bash "$f"`},
		{`bash ~/bin/x.sh`, "", ""},
		{`source ~/.bashrc`, "", ""},
		{`source "$HOME/.cargo/env"`, "", ""},
		{`. ${HOME}/.nvm/nvm.sh`, "", ""},
		{`bash "$HOME"/x.sh`, "", ""},
		{`source ~bob/.bashrc`, OpaqueSource, `source ~bob/.bashrc`},
		{`source "$HOME$X"`, OpaqueSource, `source "$HOME$X"`},
		{`source ${HOME:-/tmp}/x`, OpaqueSource, `source ${HOME:-/tmp}/x`},
		{`curl x | su`, OpaquePipedShell, `curl x | su`},
		{`curl x | su - root`, OpaquePipedShell, `curl x | su - root`},
		{`curl x | doas -s`, OpaquePipedShell, `curl x | doas -s`},
		{`curl x | source /dev/stdin`, OpaquePipedShell, `curl x | source /dev/stdin`},
		{"sudo -s <<'EOF'\nrm -rf /\nEOF", OpaqueHeredoc, "rm -rf /\n"},
		{"{ bash; } <<EOF\nrm x\nEOF", OpaqueHeredoc, "rm x\n"},
		{`env -S "$x"`, OpaquePayload, `env -S "$x"`},
		{`env -S"$x"`, OpaqueDynamicProgram, `env -S"$x"`},
		{`flock -c "$x" /tmp/l`, OpaquePayload, `flock -c "$x" /tmp/l`},
		{`flock -c"$x" /tmp/l`, OpaqueDynamicProgram, `flock -c"$x" /tmp/l`},
		{`watch "$x"`, OpaquePayload, `watch "$x"`},
		{`xargs sh -c "$x"`, OpaquePayload, `xargs sh -c "$x"`},
		{`sudo "$CMD"`, OpaqueDynamicProgram, `sudo "$CMD"`},
		{`[ -f x ] && test -d y`, "", ""},
		{`echo hi | python3 -c 'import sys'`, OpaquePayload, `python3 -c 'import sys'`},
		{`curl x | awk -f - data`, OpaquePipedShell, `curl x | awk -f - data`},
		{`curl x | make -f /dev/stdin`, OpaquePipedShell, `curl x | make -f /dev/stdin`},
		{`sed -f <(curl x) f`, OpaquePipedShell, `sed -f <(curl x) f`},
		{`awk '{print $1}' f | sort`, "", ""},
		{`cat f | sed -n 1p`, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.src, func(t *testing.T) {
			t.Parallel()
			s := mustParse(t, tc.src)
			if tc.kind == "" {
				assert.Empty(t, s.Opaque)
				return
			}
			require.Len(t, s.Opaque, 1, "%+v", s.Opaque)
			assert.Equal(t, tc.kind, s.Opaque[0].Kind)
			assert.Equal(t, tc.text, s.Opaque[0].Text)
			sp := s.Opaque[0].Span
			if s.Opaque[0].Kind != OpaqueHeredoc || !strings.HasPrefix(tc.src, "{") {
				assert.Equal(t, tc.text, tc.src[sp.Start:sp.End], "span")
			}
		})
	}
}

func TestPayloadInheritance(t *testing.T) {
	t.Parallel()
	s := mustParse(t, `sudo X=1 env -i bash -c 'Y=2 rm x' > out`)
	require.Equal(t, []string{"rm"}, programs(s))
	c := s.Commands[0]
	assert.Equal(t, []string{"sudo", "env", "bash"}, wrapperNames(c))
	require.Len(t, c.Env, 2)
	assert.Equal(t, "X", c.Env[0].Name)
	assert.Equal(t, "Y", c.Env[1].Name)
	assert.Equal(t, []string{"-i"}, c.EnvFlags)
	require.Len(t, c.Redirs, 1)
	assert.Equal(t, "out", c.Redirs[0].Target.Value)
	assert.Equal(t, "Y=2 rm x", c.Text)

	s = mustParse(t, `ls | xargs -I{} sh -c 'rm {}'`)
	c, ok := findCmd(s, "rm")
	require.True(t, ok)
	assert.True(t, c.Context.ExtraArgs)
	assert.Equal(t, 1, c.Context.Payload)
}

func TestLongChains(t *testing.T) {
	t.Parallel()
	// Long lists and pipelines are flat: no depth-limit segment, every
	// command reported in order.
	for _, sep := range []string{" && ", " || ", " | ", "; "} {
		src := strings.TrimSuffix(strings.Repeat("a"+sep, 2000), sep)
		s := mustParse(t, src)
		assert.Empty(t, s.Opaque, sep)
		assert.Len(t, s.Commands, 2000, sep)
	}
	s := mustParse(t, "a && b | c || d")
	assert.Equal(t, []string{"a", "b", "c", "d"}, programs(s))
	assert.Equal(t, 1, s.Commands[1].Context.Pipeline)
	assert.Equal(t, 0, s.Commands[3].Context.Pipeline)
}

func TestCarriageReturn(t *testing.T) {
	t.Parallel()
	// Bash reads \r as a word character: "#x" is not a comment here.
	s := mustParse(t, "printf SAFE\r#x; reboot")
	assert.Equal(t, []string{"printf", "reboot"}, programs(s))
	assert.Equal(t, "SAFE\r#x", s.Commands[0].Args[0].Value)
	assert.Equal(t, "printf SAFE\r#x;", s.Commands[0].Text+";")

	s = mustParse(t, "ls\r\nrm x\r\n")
	assert.Equal(t, []string{"ls\r", "rm"}, programs(s))
	assert.True(t, s.Commands[0].NonASCII)
	assert.Equal(t, "x\r", s.Commands[1].Args[0].Value)

	s = mustParse(t, "bash -c $'a\\r#x; reboot'")
	assert.Equal(t, []string{"a\r#x", "reboot"}, programs(s))
}

func TestSuForms(t *testing.T) {
	t.Parallel()
	cases := []struct {
		src  string
		want []string
	}{
		{"su root -c reboot", []string{"reboot"}},
		{"su -l root -c 'rm x'", []string{"rm"}},
		{"su -creboot root", []string{"reboot"}},
		{"su --session-command=reboot", []string{"reboot"}},
		{"runuser -- root --session-command reboot", []string{"sh"}}, // words after the user go to the shell, which refuses them
		{"su -wFOO,creboot root", []string{"su"}},
		{"runuser --whitelist-environment=FOO,creboot root", []string{"runuser"}},
		{"su - bob", []string{"su"}},
		{"runuser -u bob -- ls -la", []string{"ls"}},
	}
	for _, tc := range cases {
		t.Run(tc.src, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.want, programs(mustParse(t, tc.src)))
		})
	}
	s := mustParse(t, "runuser -u bob -- ls -la")
	assert.Equal(t, []string{"-la"}, argValues(s.Commands[0]))
}

func TestPathologicalNesting(t *testing.T) {
	t.Parallel()
	// Each input nests thousands deep within the size limit. Parse must
	// refuse it (ErrTooDeep) or report the part past the limit as a
	// depth-limit segment; BenchmarkPathological measures the cost.
	for _, src := range pathological() {
		s, err := Parse(src, Options{})
		if err != nil {
			assert.ErrorIs(t, err, ErrTooDeep, src[:20])
			continue
		}
		assert.Contains(t, opaqueKinds(s), OpaqueDepth, src[:20])
	}
}

func pathological() []string {
	var out []string
	for _, pat := range [][2]string{{"if a; then ", "; fi"}, {"while a; do ", "; done"},
		{"for x in y; do ", "; done"}, {"case x in y) ", ";; esac"}, {"time ", ""}, {"coproc ", ""},
		{"{ ", "; }"}, {"x=$(", ")"}, {"[[ ", " ]]"}, {"f() ", ""}, {"echo ${x:-", "}"}} {
		n := 120000 / (len(pat[0]) + len(pat[1]))
		out = append(out, strings.Repeat(pat[0], n)+"a"+strings.Repeat(pat[1], n))
	}
	return out
}

func TestMorePayloadHosts(t *testing.T) {
	t.Parallel()
	cases := []struct {
		src      string
		programs []string
		opaque   []OpaqueKind
	}{
		{`trap 'rm -rf /tmp/x' EXIT`, []string{"rm"}, nil},
		{`trap "rm -f $tmp" EXIT`, nil, []OpaqueKind{OpaquePayload}},
		{`trap - EXIT; trap -l`, []string{"trap", "trap"}, nil},
		{`tmux new-session -d -s dev 'npm run dev'`, []string{"npm"}, nil},
		{`tmux -L sock new -d "rm -rf /"`, []string{"rm"}, nil},
		{`tmux ls`, []string{"tmux"}, nil},
		// read with package grammar's tables (one grammar): values,
		// abbreviations, command sequences, a value that is not literal
		{`tmux -L new new-session -d -c /tmp -n w 'make test'`, []string{"make"}, nil},
		{`tmux new -d 'ls' \; split-window -h -t 0 'reboot' \; attach`, []string{"ls", "reboot"}, nil},
		{`tmux send-keys -t 0 'rm -rf x' Enter`, []string{"rm"}, nil},
		{`tmux -c "$x"`, nil, []OpaqueKind{OpaquePayload}},
		{`watch -n 5 --differences=cumulative 'df -h'`, []string{"df"}, nil},
		{`watch --int 2 -x rm x`, []string{"rm"}, nil},
		{`flock -w 5 /tmp/l -c 'rm x'`, []string{"rm"}, nil},
		{`flock --timeout 5 /tmp/l rm x`, []string{"rm"}, nil},
		{`flock --comm 'rm x' /tmp/l`, []string{"rm"}, nil},
		{`script --comm 'rm x' -q /dev/null`, []string{"rm"}, nil},
		{`script -c "$x" /dev/null`, nil, []OpaqueKind{OpaquePayload}},
		{`nix-shell --pure --command 'reboot'`, []string{"reboot"}, nil},
		{`parallel -j 4 --joblog j.log rm ::: a b`, []string{"rm", "rm", "rm"}, nil},
		{`alias x='rm -rf /' ll='ls -la'`, []string{"alias", "rm", "ls"}, nil},
		{`alias x="rm $y"`, []string{"alias"}, []OpaqueKind{OpaquePayload}},
		{`alias`, []string{"alias"}, nil},
		{`tmux -c 'rm x'`, []string{"rm"}, nil},
		{`script -q -c 'rm x' /dev/null`, []string{"rm"}, nil},
		{`nix-shell -p hello --run 'rm x'`, []string{"rm"}, nil},
		{`screen -dmS name bash -c 'rm x'`, []string{"rm"}, nil},
		{`screen -ls`, []string{"screen"}, nil},
		{`sudo -s rm -rf /`, []string{"rm"}, nil},
		{`sudo -i 'rm -rf /; reboot'`, []string{"rm", "reboot"}, nil},
		{`parallel ::: 'rm x' 'reboot'`, []string{"rm", "reboot"}, nil},
		{`echo 'rm -rf /' | at now`, []string{"echo", "at", "rm"}, []OpaqueKind{OpaquePipedShell}},
		{`at -f job.sh now`, []string{"at"}, nil},
		{`echo '* * * * * rm' | crontab -`, []string{"echo", "crontab"}, []OpaqueKind{OpaquePipedShell}},
		{`crontab -l | cat`, []string{"crontab", "cat"}, nil},
		{`echo x | crontab -u bob -`, []string{"echo", "crontab"}, []OpaqueKind{OpaquePipedShell}},
	}
	for _, tc := range cases {
		t.Run(tc.src, func(t *testing.T) {
			t.Parallel()
			s := mustParse(t, tc.src)
			assert.Equal(t, tc.programs, nilIfEmpty(programs(s)))
			assert.Equal(t, tc.opaque, nilKinds(opaqueKinds(s)))
		})
	}
	s := mustParse(t, `trap 'rm -rf /tmp/x' EXIT`)
	assert.Equal(t, []string{"trap"}, wrapperNames(s.Commands[0]))
}

func nilKinds(k []OpaqueKind) []OpaqueKind {
	if len(k) == 0 {
		return nil
	}
	return k
}

func TestDupToFile(t *testing.T) {
	t.Parallel()
	r := mustParse(t, "echo x >& file").Commands[0].Redirs[0]
	assert.Equal(t, Redir{Fd: "&", Mode: RedirWrite, Target: Word{Value: "file", Literal: true, Raw: "file"}}, r)
	for _, src := range []string{"echo x >&2", "echo x 2>&1", "echo x >&-", "echo x 3>&1-"} {
		assert.Equal(t, RedirDup, mustParse(t, src).Commands[0].Redirs[0].Mode, src)
	}
}

func TestMutualRecursion(t *testing.T) {
	t.Parallel()
	s := mustParse(t, "a(){ b|b& }; b(){ a; }; c(){ a; }; a")
	require.Len(t, s.Functions, 3)
	for _, f := range s.Functions[:2] {
		assert.True(t, f.Recursive && f.SelfPipe && f.SelfBackground, "%+v", f)
	}
	assert.True(t, s.Functions[0].Invoked)
	assert.True(t, s.Functions[1].Invoked, "b is called by a, which is invoked")
	c := s.Functions[2]
	assert.False(t, c.Recursive || c.SelfPipe || c.SelfBackground || c.Invoked, "%+v", c)
}

func TestManyFunctions(t *testing.T) {
	t.Parallel()
	// Thousands of (re)definitions calling each other: the call-graph work
	// stays linear (BenchmarkManyFunctions).
	src := manyFunctions()
	s := mustParse(t, src)
	assert.Len(t, s.Functions, 2*4000)
	for _, f := range s.Functions {
		assert.True(t, f.Recursive && f.SelfPipe && f.Invoked, "%+v", f)
	}
}

func manyFunctions() string {
	return strings.Repeat("f(){ g|f; }; g(){ f; }; ", 4000) + "f"
}

func TestManyBackquotesAndBrackets(t *testing.T) {
	t.Parallel()
	// Markdown with code fences in a heredoc, and balanced brackets, are
	// not "deep".
	src := "cat <<'EOF' > notes.md\n" + strings.Repeat("```go\nf(x[1]) { }\n```\n", 2000) + "EOF\n"
	s := mustParse(t, src)
	assert.Equal(t, []string{"cat"}, programs(s))
}

func TestDataSplicedIntoScript(t *testing.T) {
	t.Parallel()
	// extra: rm receives run-time arguments. They come from xargs, or
	// follow the script as its $0, $1 … and are not bound whole: find
	// -exec fills {}, and past $1 "$@" is more than one word. A known $0
	// and $1 are bound values, not run-time data.
	cases := []struct {
		src           string
		opaque, extra bool
	}{
		{`ls | xargs -I{} sh -c 'rm {}'`, true, true},
		{`ls | xargs -I % sh -c 'rm %'`, true, true},
		{`ls | xargs -i sh -c 'rm {}'`, true, true},
		{`find . -exec sh -c 'rm {}' \;`, true, false},
		{`ls | xargs sh -c 'rm "$@"' _`, false, true},
		{`find . -exec sh -c 'rm "$1"' _ {} \;`, false, true},
		{`ls | xargs -I{} rm {}`, false, true},
		{`sh -c 'rm "$1"' _ x`, false, false},
		{`sh -c 'rm "$1" "$2"' _ x y`, false, true},
		{`sh -c 'rm x'`, false, false},
	}
	for _, tc := range cases {
		s := mustParse(t, tc.src)
		if tc.opaque {
			assert.Equal(t, []OpaqueKind{OpaquePayload}, opaqueKinds(s), tc.src)
		} else {
			assert.Empty(t, s.Opaque, tc.src)
		}
		c, ok := findCmd(s, "rm")
		assert.True(t, ok && c.Context.ExtraArgs == tc.extra, tc.src)
	}
}

func TestEnvSplit(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		want []string
		ok   bool
	}{
		{`sh -c reboot`, []string{"sh", "-c", "reboot"}, true},
		{`sh\_-c\_reboot`, []string{"sh", "-c", "reboot"}, true},
		{`"a\_b" 'c d' e\\f`, []string{"a b", "c d", `e\f`}, true},
		{`'it\'s' "q\"q"`, []string{"it's", `q"q`}, true},
		{`a\tb\nc`, []string{"a\tb\nc"}, true},
		{`a #comment rest`, []string{"a"}, true},
		{`a b\c ignored`, []string{"a", "b"}, true},
		{`a${HOME}b`, nil, false},
		{`a \$HOME`, []string{"a", "$HOME"}, true},
		{`""`, []string{""}, true},
	}
	for _, tc := range cases {
		got, ok := envSplit(tc.in)
		assert.Equal(t, tc.ok, ok, tc.in)
		if tc.ok {
			assert.Equal(t, tc.want, got, tc.in)
		}
	}
}

func TestANSIC(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		`\x72\x6d`:       "rm",
		`\162\155`:       "rm",
		`\u0072m`:        "rm",
		`\U0000ff52`:     "ｒ",
		`a\tb\n`:         "a\tb\n",
		`\e[0m`:          "\x1b[0m",
		`\cA`:            "\x01",
		`it\'s \"q\" \\`: `it's "q" \`,
		`\q \x`:          `\q \x`,
	}
	for in, want := range cases {
		assert.Equal(t, want, ansiC(in), in)
	}
}

func TestHeredocScripts(t *testing.T) {
	t.Parallel()
	cases := []struct {
		src      string
		programs []string
	}{
		{"bash <<'EOF'\nrm -rf /\nEOF", []string{"bash", "rm"}},
		{"sh <<EOF\nrm -rf /tmp/x\nreboot\nEOF", []string{"sh", "rm", "reboot"}},
		{"sudo -s <<'EOF'\nrm -rf /\nEOF", []string{"sudo", "rm"}},
		{"bash <<< 'rm -rf /'", []string{"bash", "rm"}},
		{"bash <<EOF\nrm $x\nEOF", []string{"bash"}},
		{"bash <<EOF\nrm \\$x\nEOF", []string{"bash"}},
		{"bash <<< \"$x\"", []string{"bash"}},
		{"python3 <<'EOF'\nimport os\nEOF", []string{"python3"}},
	}
	for _, tc := range cases {
		t.Run(tc.src, func(t *testing.T) {
			t.Parallel()
			s := mustParse(t, tc.src)
			assert.Equal(t, tc.programs, programs(s))
			assert.Equal(t, []OpaqueKind{OpaqueHeredoc}, opaqueKinds(s))
			if len(s.Commands) > 1 {
				c := s.Commands[1]
				assert.Equal(t, 1, c.Context.Payload)
				assert.Empty(t, c.Redirs)
				assert.Equal(t, s.Commands[0].Program, c.Wrappers[len(c.Wrappers)-1].Program)
				assert.Equal(t, s.Opaque[0].Span, c.Span)
			}
		})
	}
}

// TestEnvNullRefusesCommand: GNU env refuses --null (-0) together with a
// command and runs nothing, so env is the program and nothing is peeled.
func TestEnvNullRefusesCommand(t *testing.T) {
	for _, src := range []string{"env -0S reboot", "env -0 reboot", "env --null X=1 reboot", "env -i0 -S 'reboot now'"} {
		s, err := Parse(src, Options{})
		require.NoError(t, err, src)
		require.Len(t, s.Commands, 1, src)
		assert.Equal(t, "env", s.Commands[0].Program, src)
	}
	// Without -0 the command is peeled as usual.
	s, err := Parse("env -S reboot", Options{})
	require.NoError(t, err)
	assert.Equal(t, "reboot", s.Commands[len(s.Commands)-1].Program)
}
