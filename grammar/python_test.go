package grammar

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPythonPrintsOnly(t *testing.T) {
	t.Parallel()
	yes := [][]string{
		{"-c", "print(1)"}, {"-c", `print("ok")`}, {"-c", "print('a', 2, 3.5,)"}, {"-c", "print()"},
		{"-c", "print(1); print(2)"}, {"-c", "print(1)\nprint('x')  # done"}, {"-c", "print (1_000)"},
		{"-c", `print('it\'s')`}, {"-c", "print('ünïcode')"}, {"-c", "print(1)", "arg1", "arg2"},
	}
	no := [][]string{
		{"-c", "import os"}, {"-c", `__import__("os").system("reboot")`}, {"-c", "print(open('/etc/shadow').read())"},
		{"-c", `print(f"{__import__('os').system('id')}")`}, {"-c", "print(b'x')"}, {"-c", "print('a'*10**9)"},
		{"-c", "print(1, file=open('x','w'))"}, {"-c", "exec('print(1)')"}, {"-c", "print(x)"}, {"-c", "print((1))"},
		{"-c", "print(1).x"}, {"-c", "print(1)(2)"}, {"-c", "ｐｒｉｎｔ(1)"}, {"-c", "print('''x''')"}, {"-c", "print(1) \\\n"},
		{"-c", "print('x\\\n')"}, {"-c", "print('unterminated)"}, {"-c", ""}, {"-c", ";"}, {"-c", "print(1.2.3)"}, {"-c", "print(1e9)"},
		{"-c", "print(0x1f)"}, {"-c", "print(-1)"}, {"-c", "print(1)\r"}, {"-c", "print"}, {"-c", "print(1"},
		{"-I", "-c", "print(1)"}, {"-ic", "print(1)"}, {"-c", "print(1)", "-i"}, {"-cprint(1)"}, {"-m", "timeit", "print(1)"},
		{"script.py"}, {},
	}
	for _, args := range yes {
		assert.True(t, PythonPrintsOnly(Parse("python3", args)), "%q", args)
	}
	for _, args := range no {
		assert.False(t, PythonPrintsOnly(Parse("python3", args)), "%q", args)
	}
	assert.False(t, PythonPrintsOnly(Parse("perl", []string{"-e", "print(1)"})), "python only")
	assert.True(t, PythonPrintsOnly(Parse("python", []string{"-c", "print(1)"})))
}
