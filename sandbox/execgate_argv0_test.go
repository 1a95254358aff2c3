package sandbox

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestArgv0Runs: what each multi-call program of the table makes of an
// argv, as its source reads argv[0] (systemd's invoked_as, busybox's
// appletlib), and nothing for the names the gate checks already.
func TestArgv0Runs(t *testing.T) {
	cases := []struct {
		argv []string
		want [][]string
	}{
		{[]string{"/usr/bin/ls", "-l"}, nil},
		{[]string{"ls"}, nil},
		{[]string{"reboot"}, nil}, // the name itself: checked as argv
		// systemctl: the first token its last element contains.
		{[]string{"./xreboot", "-f"}, [][]string{{"reboot", "-f"}}},
		{[]string{"/tmp/reboot.sh"}, [][]string{{"reboot"}}},
		{[]string{"a/my-poweroff-now"}, [][]string{{"poweroff"}}},
		{[]string{"xreboot/"}, [][]string{{"reboot"}}},       // last_path_component keeps the slash
		{[]string{"halt-then-reboot"}, [][]string{{"halt"}}}, // systemctl's order
		{[]string{"./initdb", "0"}, [][]string{{"init", "0"}}},
		{[]string{"/reboot/x"}, nil}, // a directory's name is not the program's
		// busybox: a leading "-", and busybox mode by prefix.
		{[]string{"-reboot"}, [][]string{{"reboot"}}},
		{[]string{"-/usr/sbin/reboot"}, [][]string{{"reboot"}}},
		{[]string{"busybox-x", "touch", "f"}, [][]string{{"touch", "f"}}},
		{[]string{"./busybox.static", "/usr/sbin/reboot", "-f"}, [][]string{{"reboot", "-f"}}},
		{[]string{"busybox", "busybox2", "rm", "-rf", "/"}, [][]string{{"rm", "-rf", "/"}}},
		{[]string{"busybox-x"}, nil}, // usage
		{nil, nil},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, argv0Runs(c.argv), "%q", c.argv)
	}
}

// BenchmarkArgv0Runs is what the multi-call table costs a typical exec
// (nothing to add: the common case).
func BenchmarkArgv0Runs(b *testing.B) {
	argv := []string{"/usr/bin/cc", "-c", "-O2", "-o", "main.o", "main.c"}
	for b.Loop() {
		if argv0Runs(argv) != nil {
			b.Fatal("cc is no multi-call program")
		}
	}
}
