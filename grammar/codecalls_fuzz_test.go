package grammar

import "testing"

// FuzzCodeCommands feeds arbitrary code to every language's reader: it
// must not panic, what it reads ends its last line, and a second reading
// gives the same commands (python's bindings are a map).
func FuzzCodeCommands(f *testing.F) {
	for _, s := range []string{
		`__import__('os').system('reboot')`, `import os as o; o.execvp('rm', ['rm', '-rf', '/'])`,
		`qx{reboot}`, `%x(reboot)`, `system { "/bin/rm" } "rm", "-rf"`, `open(F, "|-", "x")`,
		"execSync(`reboot`)", `os.spawnlp(os.P_WAIT, 'rm', 'rm')`, `exec("exec('x')")`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, code string) {
		for lang := range processFuncs {
			out := CodeCommands(lang, code)
			if out != "" && out[len(out)-1] != '\n' {
				t.Fatalf("%s %q: output %q does not end a line", lang, code, out)
			}
			if again := CodeCommands(lang, code); again != out {
				t.Fatalf("%s %q: read %q, then %q", lang, code, out, again)
			}
		}
	})
}
