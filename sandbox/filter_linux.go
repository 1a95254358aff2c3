package sandbox

import (
	"slices"
	"sync"

	"github.com/opencontainers/runc/libcontainer/configs"
	"github.com/opencontainers/runc/libcontainer/specconv"
	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// sandboxFilter is the seccomp filter of every sandbox that has one, in the
// runtime spec's form and in libcontainer's.
type sandboxFilter struct {
	spec *specs.LinuxSeccomp
	lc   *configs.Seccomp
}

// sandboxFilters returns the filter of a sandbox with seccomp on: every
// sandbox has the capability set dockerCaps, so there are two, SeccompProfile
// and, for a sandbox whose TCP connects Landlock confines to ports
// (Landlock.RestrictTCPConnect; tcpOnly), SeccompProfile with the
// stream-protocol rule of tcpOnlyRules. Each is built and translated once
// per process; both forms are shared: never modify them.
func sandboxFilters(tcpOnly bool) (sandboxFilter, error) {
	if tcpOnly {
		return tcpOnlyFilters()
	}
	return plainFilters()
}

var (
	plainFilters   = sync.OnceValues(func() (sandboxFilter, error) { return buildFilters(false) })
	tcpOnlyFilters = sync.OnceValues(func() (sandboxFilter, error) { return buildFilters(true) })
)

func buildFilters(tcpOnly bool) (sandboxFilter, error) {
	prof, err := SeccompProfile()
	if err != nil {
		return sandboxFilter{}, err
	}
	if tcpOnly {
		tcpOnlyRules(prof)
	}
	lc, err := specconv.SetupSeccomp(prof)
	if err != nil {
		return sandboxFilter{}, err
	}
	return sandboxFilter{spec: prof, lc: lc}, nil
}

// tcpOnly reports whether c's sandbox gets tcpOnlyRules.
func (c Config) tcpOnly() bool { return c.Landlock != nil && c.Landlock.RestrictTCPConnect }

// tcpOnlyRules adds to prof the rule that keeps Landlock's TCP port rules
// the wall they claim to be: Landlock checks connects of TCP sockets alone
// (sk_type SOCK_STREAM and protocol IPPROTO_TCP), and other stream
// protocols of AF_INET and AF_INET6 reach TCP ports too, unchecked:
// Multipath TCP (IPPROTO_MPTCP) falls back to plain TCP with any peer that
// does not speak it (landlock-lsm/linux#54), SCTP (SOCK_STREAM or
// SOCK_SEQPACKET, landlock-lsm/linux#40) and SMC (IPPROTO_SMC) are other
// kernels' paths. So for either family a SOCK_STREAM socket of any protocol
// but 0 and IPPROTO_TCP, and any SOCK_SEQPACKET or SOCK_DCCP socket, fails
// with EPROTONOSUPPORT, as on a kernel without them, on which programs
// (glibc's and Go's MPTCP users, mptcpize) fall back to TCP. Datagram
// sockets stay (UDP, ICMP: no port rule covers them, docs/landlock.md);
// raw and packet sockets need CAP_NET_RAW, which no sandbox has.
//
// Docker's profile allows socket by family (each an equality, or one
// less-than for a run of families); libseccomp lets an allow under the same
// equality win over these longer rules, so Docker's allow of the family
// equal to AF_INET6 is replaced by allows that never overlap the refusals
// (datagram and raw sockets, and stream sockets of protocol 0 to
// IPPROTO_TCP). AF_INET is in Docker's less-than run, under which the
// refusals hold (TestLandlockTCPConnectOtherProtocols checks both). A
// family with high bits set, which the kernel (reading an int) takes as
// AF_INET, matches none of Docker's rules (EPERM). The type is compared on
// its low 4 bits (the rest are SOCK_NONBLOCK and SOCK_CLOEXEC), the
// protocol as a whole (any high bit makes it greater than IPPROTO_TCP:
// refused).
func tcpOnlyRules(prof *specs.LinuxSeccomp) {
	inet6 := func(a specs.LinuxSeccompArg) bool {
		return a.Index == 0 && a.Op == specs.OpEqualTo && a.Value == unix.AF_INET6
	}
	prof.Syscalls = slices.DeleteFunc(prof.Syscalls, func(sc specs.LinuxSyscall) bool {
		return slices.Equal(sc.Names, []string{"socket"}) && len(sc.Args) == 1 && inet6(sc.Args[0])
	})
	eproto := uint(unix.EPROTONOSUPPORT)
	refuse := func(args ...specs.LinuxSeccompArg) specs.LinuxSyscall {
		return specs.LinuxSyscall{Names: []string{"socket"}, Action: specs.ActErrno, ErrnoRet: &eproto, Args: args}
	}
	kind := func(t uint64) specs.LinuxSeccompArg {
		return specs.LinuxSeccompArg{Index: 1, Value: 0xf, ValueTwo: t, Op: specs.OpMaskedEqual}
	}
	for _, family := range []uint64{unix.AF_INET, unix.AF_INET6} {
		fam := specs.LinuxSeccompArg{Index: 0, Value: family, Op: specs.OpEqualTo}
		prof.Syscalls = append(prof.Syscalls,
			refuse(fam, kind(unix.SOCK_STREAM), specs.LinuxSeccompArg{Index: 2, Value: unix.IPPROTO_TCP, Op: specs.OpGreaterThan}),
			refuse(fam, kind(unix.SOCK_SEQPACKET)),
			refuse(fam, kind(unix.SOCK_DCCP)))
	}
	fam6 := specs.LinuxSeccompArg{Index: 0, Value: unix.AF_INET6, Op: specs.OpEqualTo}
	allow := func(args ...specs.LinuxSeccompArg) specs.LinuxSyscall {
		return specs.LinuxSyscall{Names: []string{"socket"}, Action: specs.ActAllow, Args: args}
	}
	prof.Syscalls = append(prof.Syscalls,
		allow(fam6, kind(unix.SOCK_DGRAM)), allow(fam6, kind(unix.SOCK_RAW)),
		allow(fam6, kind(unix.SOCK_STREAM), specs.LinuxSeccompArg{Index: 2, Value: unix.IPPROTO_TCP, Op: specs.OpLessEqual}))
}
