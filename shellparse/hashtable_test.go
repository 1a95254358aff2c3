package shellparse

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestHashTable: a known hash table entry makes the shell's own later
// command NAME a command of the entry's path; wrappers exec from PATH,
// functions win, and an entry only known at run time is a dynamic program.
func TestHashTable(t *testing.T) {
	t.Parallel()
	cases := []struct {
		src  string
		want []string // programs, in order
		dyn  bool
	}{
		{"BASH_CMDS[ls]=/sbin/reboot; ls", []string{"reboot"}, false},
		{"BASH_CMDS=([ls]=/sbin/reboot); ls -la", []string{"reboot"}, false},
		{"declare -A BASH_CMDS=([ls]=/sbin/reboot); ls", []string{"declare", "reboot"}, false},
		{"hash -p /sbin/reboot ls; ls", []string{"hash", "reboot"}, false},
		{"f(){ BASH_CMDS[ls]=/sbin/reboot; }; f; ls", []string{"f", "reboot"}, false},
		{"BASH_CMDS[ls]=/sbin/reboot; sudo ls", []string{"ls"}, false},
		{"BASH_CMDS[ls]=/sbin/reboot; ls(){ :; }; ls", []string{":", "ls"}, false},
		{"BASH_CMDS[$x]=/sbin/reboot; ls", []string{"ls"}, true},
		{"hash -r; ls", []string{"hash", "ls"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.src, func(t *testing.T) {
			t.Parallel()
			s := mustParse(t, tc.src)
			var got []string
			for _, c := range s.Commands {
				if c.Program != "" { // not the bare assignments
					got = append(got, c.Program)
				}
			}
			assert.Equal(t, tc.want, got)
			dyn := false
			for _, o := range s.Opaque {
				dyn = dyn || o.Kind == OpaqueDynamicProgram
			}
			assert.Equal(t, tc.dyn, dyn)
		})
	}
}
