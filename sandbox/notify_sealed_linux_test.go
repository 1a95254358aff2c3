//go:build seccomp

package sandbox

import (
	"testing"

	"github.com/opencontainers/runc/libcontainer/configs"
	"github.com/stretchr/testify/assert"
	"golang.org/x/sys/unix"

	"github.com/tether-dev/tether/sandbox/seccompexec"
)

// The trampoline's filter notifies, under the mount plan, exactly the
// calls the gate answers as the plan's (sealedCalls), opens by their
// flags.
func TestSealedCallsMatchFilter(t *testing.T) {
	got := map[int32]int{}
	for _, s := range seccompexec.SealedSyscalls() {
		got[int32(s.Nr)] = s.FlagsArg
	}
	want := map[int32]int{}
	for nr, c := range sealedCalls {
		want[nr] = -1
		if c.op == "open-write" {
			want[nr] = c.flags
		}
	}
	assert.Equal(t, want, got)
}

// libcontainer's filter under the mount plan: the plan's calls notify
// with their conditions kept, an open that cannot create notifies only
// when it writes, and nothing changes without the plan or for a refusal.
func TestWithNotifySealed(t *testing.T) {
	noCreate := []*configs.Arg{{Index: 2, Value: createFlags, ValueTwo: 0, Op: configs.MaskEqualTo}}
	noPriv := []*configs.Arg{{Index: 2, Value: privBits, ValueTwo: 0, Op: configs.MaskEqualTo}}
	base := &configs.Seccomp{Syscalls: []*configs.Syscall{
		{Name: "openat", Action: configs.Allow, Args: noCreate},
		{Name: "fchmodat", Action: configs.Allow, Args: noPriv},
		{Name: "unlinkat", Action: configs.Allow},
		{Name: "truncate", Action: configs.Errno},
		{Name: "read", Action: configs.Allow},
	}}
	plain := withNotify(base, "@x", true, false, false, false)
	for _, s := range plain.Syscalls {
		if s.Name != "execve" && s.Name != "execveat" {
			assert.NotEqual(t, configs.Notify, s.Action, "%s notifies without the plan", s.Name)
		}
	}
	sealed := withNotify(base, "@x", true, false, false, true)
	opens := map[uint64]configs.Action{}
	for _, s := range sealed.Syscalls {
		switch s.Name {
		case "openat":
			if assert.Len(t, s.Args, 1) {
				a := s.Args[0]
				assert.Equal(t, uint64(createFlags|unix.O_ACCMODE|unix.O_TRUNC), a.Value)
				opens[a.ValueTwo] = s.Action
			}
		case "fchmodat":
			assert.Equal(t, configs.Notify, s.Action)
			assert.Equal(t, noPriv, s.Args, "the conditions are kept")
		case "unlinkat":
			assert.Equal(t, configs.Notify, s.Action)
		case "truncate":
			assert.Equal(t, configs.Errno, s.Action, "a refusal stays a refusal")
		case "read":
			assert.Equal(t, configs.Allow, s.Action)
		}
	}
	assert.Equal(t, map[uint64]configs.Action{
		unix.O_RDONLY: configs.Allow, unix.O_RDONLY | unix.O_TRUNC: configs.Notify,
		unix.O_WRONLY: configs.Notify, unix.O_WRONLY | unix.O_TRUNC: configs.Notify,
		unix.O_RDWR: configs.Notify, unix.O_RDWR | unix.O_TRUNC: configs.Notify,
		unix.O_ACCMODE: configs.Notify, unix.O_ACCMODE | unix.O_TRUNC: configs.Notify,
	}, opens)
	// Observed, every open notifies already: the rule is not split.
	obs := withNotify(base, "@x", true, true, false, true)
	assert.Equal(t, configs.Notify, obs.Syscalls[0].Action)
	assert.Equal(t, noCreate, obs.Syscalls[0].Args)
	assert.Equal(t, configs.Allow, base.Syscalls[0].Action, "the shared config is not changed")
}
