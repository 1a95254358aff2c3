package grammar

import (
	"testing"
)

// TestScriptCommand checks the command line each program's Script builds
// from text it reads on its input: the text given inline in the place of
// the "-" operand or of the From option naming stdin, or the shell
// commands of the text.
func TestScriptCommand(t *testing.T) {
	for _, tc := range []struct {
		prog string
		args []string
		text string
		want string
	}{
		{"python3", []string{"-u", "-", "a"}, "print(1)", `python3 '-u' '-c' 'print(1)' 'a'`},
		{"python3", nil, "import os", `python3 '-c' 'import os'`},
		{"perl", []string{"-w"}, `system("x")`, `perl '-w' '-e' 'system("x")'`},
		{"gdb", []string{"-p", "1"}, "run\n\nbt\n", `gdb '-p' '1' '-ex' 'run' '-ex' 'bt'`},
		{"gdb", []string{"-batch", "-x", "/dev/stdin", "-p", "1"}, "kill", `gdb '-batch' '-p' '1' '-ex' 'kill'`},
		{"crontab", []string{"-"}, "SHELL=/bin/sh\n# c\n*/5 * * * * rm -rf ~ >/dev/null\n@reboot  reboot\n0 0 1 1 * mail x%body%more\n", "rm -rf ~ >/dev/null\nreboot\nmail x\n"},
		{"at", []string{"now"}, "reboot", "reboot"},
		{"ed", nil, "1p\n!rm -rf ~\nq\n", "rm -rf ~\n"},
		{"vim", []string{"-s", "/dev/stdin"}, ":!reboot\n", "reboot\n"},
		{"sqlite3", nil, "select 1;\n.shell reboot\n", " reboot\n"},
		{"psql", []string{"-f", "-"}, `\! reboot`, " reboot\n"},
		{"cmake", []string{"-P", "-"}, "execute_process(COMMAND echo hi COMMAND reboot OUTPUT_QUIET)\nfile(REMOVE_RECURSE \"$ENV{HOME}\")\n", "'echo' 'hi'\n'reboot'\n'rm' '-rf' '--' \"${HOME}\"\n"},
		{"expect", nil, "spawn ssh h; system rm -rf /tmp/x\nputs [exec -ignorestderr -- reboot now]", "'ssh' 'h'\nrm -rf /tmp/x\n'reboot' 'now'\n"},
		{"tclsh", nil, "exec rm -rf $env(HOME)", `'rm' '-rf' "$HOME"''` + "\n"},
		{"rm", []string{"-"}, "x", ""}, // no Script
	} {
		got := Parse(tc.prog, tc.args).ScriptCommand(tc.text)
		if got != tc.want {
			t.Errorf("%s %q fed %q:\n got %q\nwant %q", tc.prog, tc.args, tc.text, got, tc.want)
		}
	}
}

// TestReadsScriptFromInput checks which invocations read commands from
// their input: the Interactive effect, or a From option naming stdin.
func TestReadsScriptFromInput(t *testing.T) {
	for _, tc := range []struct {
		prog string
		args []string
		want bool
	}{
		{"crontab", nil, true}, {"crontab", []string{"-"}, true}, {"crontab", []string{"-u", "bob", "/dev/stdin"}, true},
		{"crontab", []string{"jobs.txt"}, false}, {"crontab", []string{"-l"}, false}, {"crontab", []string{"-r"}, false},
		{"at", []string{"now"}, true}, {"at", []string{"-f", "/dev/stdin", "now"}, true}, {"at", []string{"-f", "job", "now"}, false},
		{"at", []string{"-l"}, false}, {"batch", nil, true},
		{"gdb", []string{"-p", "1"}, true}, {"gdb", []string{"-batch", "-ex", "bt"}, false}, {"gdb", []string{"-batch", "-x", "-"}, true},
		{"gdb", []string{"--version"}, false},
		{"psql", nil, true}, {"psql", []string{"-c", "select 1"}, false}, {"psql", []string{"-f", "-"}, true}, {"psql", []string{"-f", "q.sql"}, false},
		{"cmake", []string{"-P", "/dev/stdin"}, true}, {"cmake", []string{"-P", "x.cmake"}, false},
		{"vim", []string{"-s", "/dev/stdin"}, true}, {"vim", []string{"-s", "keys"}, false},
		{"expect", nil, true}, {"expect", []string{"-c", "spawn x"}, false}, {"expect", []string{"-f", "-"}, true}, {"expect", []string{"x.exp"}, false},
	} {
		inv := Parse(tc.prog, tc.args)
		got := inv.Script() != nil && (inv.Effects.Has(Interactive) || inv.ScriptFromStdin())
		if got != tc.want {
			t.Errorf("%s %q: reads commands from input %v, want %v", tc.prog, tc.args, got, tc.want)
		}
	}
}

// TestGDBOnInit checks the tier-deciding effects of gdb attached to pid 1:
// attaching alone or inspecting is Kill; any other command is KillAll.
func TestGDBOnInit(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		killAll bool
		kill    bool
	}{
		{[]string{"-p", "1"}, false, true},
		{[]string{"--pid=1", "-batch", "-ex", "bt", "-ex", "info registers", "-ex", "p/x $rip", "-ex", "print a == b"}, false, true},
		{[]string{"-p", "1", "-batch", "-ex", "call exit(0)"}, true, true},
		{[]string{"-p", "01", "-ex", "kill"}, true, true},
		{[]string{"-p", "1", "-ex", "p x=1"}, true, true},
		{[]string{"-p", "1", "-ex", "print getpid()"}, true, true},
		{[]string{"-p", "1", "-iex", "set var v=0"}, true, true},
		{[]string{"/sbin/init", "1", "-ex", "jump *0"}, true, true},
		{[]string{"-p", "1", "-x", "cmds.gdb"}, false, true},
		{[]string{"-p", "1234", "-ex", "call exit(0)"}, false, false},
		{[]string{"--args", "prog", "1", "-ex", "run"}, false, false},
	} {
		inv := Parse("gdb", tc.args)
		if inv.Effects.Has(KillAll) != tc.killAll || inv.Effects.Has(Kill) != tc.kill {
			t.Errorf("gdb %q: KillAll %v Kill %v, want %v %v", tc.args, inv.Effects.Has(KillAll), inv.Effects.Has(Kill), tc.killAll, tc.kill)
		}
	}
}

// TestCodeCommands checks the commands read from literal process calls in
// interpreter code, and that computed or look-alike calls are not read.
func TestCodeCommands(t *testing.T) {
	for _, tc := range []struct {
		lang, code, want string
	}{
		{"python", `import os; os.system("reboot")`, "reboot\n"},
		{"python", `import subprocess as s; subprocess.run(['rm', '-rf', '/'], check=True)`, "'rm' '-rf' '/'\n"},
		{"python", `os.popen('kill -9 -1').read()`, "kill -9 -1\n"},
		{"python", `os.system(cmd)`, ""},
		{"python", `os.system(f"rm {x}")`, ""},
		{"perl", `system "rm -rf ~"`, "rm -rf ~\n"},
		{"perl", `system("rm", "-rf", "/")`, "'rm' '-rf' '/'\n"},
		{"perl", "print `id`", "id\n"},
		{"perl", `mysystem("reboot")`, ""},
		{"perl", `system("rm -rf $dir")`, ""},
		{"ruby", `system('reboot')`, "reboot\n"},
		{"ruby", "x = `reboot`", "reboot\n"},
		{"ruby", `system("rm #{x}")`, ""},
		{"node", `require("child_process").execSync("reboot")`, "reboot\n"},
		{"lua", `os.execute("reboot")`, "reboot\n"},
		{"php", `<?php shell_exec("reboot");`, "reboot\n"},
		// python binds names as it runs: aliases, imports by string, getattr.
		{"python", `__import__('os').system('reboot')`, "reboot\n"},
		{"python", `import os; getattr(os,'system')('reboot')`, "reboot\n"},
		{"python", `import importlib; importlib.import_module("os").popen("reboot")`, "reboot\n"},
		{"python", `import os as o; o.system('reboot')`, "reboot\n"},
		{"python", `from os import system as s; s('reboot')`, "reboot\n"},
		{"python", `from subprocess import run; run('reboot', shell=True)`, "reboot\n"},
		{"python", `from os import *; system('reboot')`, "reboot\n"},
		{"python", `import os; f = os.system; f('reboot')`, "reboot\n"},
		{"python", `import os; os.execvp('rm', ['rm', '-rf', '/'])`, "'rm' '-rf' '/'\n"},
		{"python", `import os; os.execl('/sbin/reboot', 'reboot')`, "'/sbin/reboot'\n"},
		{"python", `import os; os.spawnlp(os.P_WAIT, 'rm', 'rm', '-rf', '/')`, "'rm' '-rf' '/'\n"},
		{"python", `import os; os.posix_spawn('/sbin/reboot', ['reboot'], {})`, "'/sbin/reboot'\n"},
		{"python", `exec("import os; os.system('reboot')")`, "reboot\n"},
		{"python", `import platform; platform.system()`, ""},
		{"python", `import os; os.system(x)`, ""},
		{"python", `import os as o; o.system(cmd)`, ""},
		{"perl", `qx{reboot}`, "reboot\n"},
		{"perl", `my $x = qx(rm -rf /)`, "rm -rf /\n"},
		{"perl", `qx/kill -9 -1/`, "kill -9 -1\n"},
		{"perl", `qx{rm -rf $d}`, ""},
		{"perl", `exec "reboot"`, "reboot\n"},
		{"perl", `system "rm", "-rf", "/"`, "'rm' '-rf' '/'\n"},
		{"perl", `eval "system('reboot')"`, "reboot\n"},
		{"ruby", `%x(reboot)`, "reboot\n"},
		{"ruby", `%x{rm -rf #{d}}`, ""},
		{"ruby", `Kernel.exec("reboot")`, "reboot\n"},
		{"ruby", `IO.popen("reboot")`, "reboot\n"},
		{"ruby", `system({"A" => "1"}, "rm", "-rf", "/")`, "'rm' '-rf' '/'\n"},
		{"node", `require('child_process').spawn('rm', ['-rf', '/'], {stdio: 'inherit'})`, "'rm' '-rf' '/'\n"},
		{"node", `const cp = require('child_process'); cp.execFile('reboot')`, "reboot\n"},
		{"node", `cp.spawn(cmd, ['-rf', '/'])`, ""},
		{"python", `import os; os.system('''reboot''')`, "reboot\n"},
		{"python", `import subprocess; subprocess.run(args=['reboot'])`, "'reboot'\n"},
		{"perl", `open(my $f, "|-", "rm", "-rf", "/")`, "'rm' '-rf' '/'\n"},
		{"perl", `open(F, "reboot |")`, "reboot\n"},
		{"perl", `open F, "| reboot"`, "reboot\n"},
		{"perl", `open(F, "<", "x.txt")`, ""},
		{"ruby", `open("|reboot")`, "reboot\n"},
		{"ruby", `open("x.txt")`, ""},
		{"node", "require('child_process').execSync(`reboot`)", "reboot\n"},
		{"node", "require('child_process').execSync(`rm ${d}`)", ""},
		{"perl", `system { "/bin/rm" } "rm", "-rf", "/"`, "'/bin/rm' '-rf' '/'\n"},
		{"perl", `exec { $prog } "x"`, ""},
		{"python", `import shutil, os; shutil.rmtree(os.path.expanduser("~"))`, "rm -rf -- ~\n"},
		{"python", `import shutil, os; shutil.rmtree(os.path.expanduser('~/.ssh'))`, "rm -rf -- ~/'.ssh'\n"},
		{"python", `import shutil; shutil.rmtree('/etc')`, "rm -rf -- '/etc'\n"},
		{"python", `import shutil; shutil.rmtree('~')`, "rm -rf -- '~'\n"},
		{"python", `import shutil; shutil.rmtree(d)`, ""},
		{"ruby", `require "fileutils"; FileUtils.rm_rf(Dir.home)`, "rm -rf -- ~\n"},
		{"awk", `system("reboot")`, ""}, // awk has its own reader
	} {
		if got := CodeCommands(tc.lang, tc.code); got != tc.want {
			t.Errorf("%s %q: got %q, want %q", tc.lang, tc.code, got, tc.want)
		}
	}
}
