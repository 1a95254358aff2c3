package sandbox

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/opencontainers/runc/libcontainer/configs"
	"golang.org/x/sys/unix"

	"github.com/tether-dev/tether/rootfs"
	"github.com/tether-dev/tether/sandbox/seccompexec"
)

// trampoline is the parent's side of package seccompexec: a sandbox's
// compiled filter and the descriptors its process starts with when it
// loads that filter itself before executing the program. It is prepared
// (compiled filter, this binary's descriptor, error pipe) alongside the
// sandbox's set-up; files adds the command's part.
type trampoline struct {
	cfg   *configs.Seccomp // the filter's rules, as libcontainer takes them
	prog  []byte           // cfg compiled (struct sock_filter[]); nil: gate only
	flags uint32           // seccomp(SECCOMP_SET_MODE_FILTER)'s flags for it
	// landlock is the Landlock section (encodeLandlock) the trampoline
	// applies first; nil for none.
	landlock []byte

	exe, progFile *os.File // the trampoline's descriptors 3 and 4
	errR, errW    *os.File // the error pipe; the trampoline has errW as 5
	// The exec gate's socket: the trampoline has gateChild as 6 and sends
	// the listener through it to gateHost. Nil when no gate is wanted.
	gateHost, gateChild *os.File
	// observe asks the gate's filter to notify the observed calls too
	// (seccompexec.Observe), create the creating ones (seccompexec.Create),
	// noExec not execs (seccompexec.NoExec), sealed the calls the mount
	// plan refuses unreported (seccompexec.Sealed); set by startExecGate.
	observe, create, noExec, sealed bool
}

// sockFilterSize is the size of one instruction, struct sock_filter.
const sockFilterSize = int(unsafe.Sizeof(unix.SockFilter{}))

// trampolinePrep is a trampoline being prepared in the background.
type trampolinePrep struct {
	done chan struct{}
	t    *trampoline
}

// selfInterp is this binary's ELF interpreter (its dynamic loader), ""
// when it is statically linked, as `make build` makes tether.
var selfInterp = sync.OnceValues(func() (string, error) { return rootfs.Interpreter("/proc/self/exe") })

// selfIsStatic reports whether this binary is statically linked. Only then
// can it be the trampoline in any root: a dynamically linked one (a test
// binary, a plain `go build`) needs its loader and libraries, which only
// the host layout has (read-only, from the host; the trampoline starts
// without the program's environment, so no LD_PRELOAD or LD_LIBRARY_PATH
// of the command's applies).
func selfIsStatic() bool {
	interp, err := selfInterp()
	return err == nil && interp == ""
}

// prepareTrampoline starts preparing the trampoline of a sandbox under
// stateRoot, whose root is the host layout when hostLayout; filter asks
// for the compiled seccomp filter (sandboxFilters(tcpOnly)), gate for the exec gate, landlock for a
// Landlock ruleset (its section is added later). Its result is
// nil when this binary cannot be the trampoline in that root, or the
// descriptors cannot be made, or the filter cannot be compiled here (the
// compiler needs root's ptrace) and neither a gate nor a ruleset is
// wanted: libcontainer then loads the filter as usual. With a gate or a
// ruleset and no compiled filter the trampoline applies those only.
func prepareTrampoline(stateRoot string, hostLayout, filter, tcpOnly, gate, landlock bool) *trampolinePrep {
	p := &trampolinePrep{done: make(chan struct{})}
	go func() {
		defer close(p.done)
		if !hostLayout && !selfIsStatic() {
			return
		}
		t := &trampoline{}
		if filter {
			if f, err := sandboxFilters(tcpOnly); err == nil {
				if prog, flags, err := compiledSeccomp(stateRoot, f.lc); err == nil {
					t.cfg, t.prog, t.flags = f.lc, prog, flags
				}
			}
		}
		if t.prog == nil && !gate && !landlock {
			return
		}
		if err := t.open(gate); err != nil {
			t.close()
			return
		}
		p.t = t
	}()
	return p
}

// wait returns the prepared trampoline, or nil.
func (p *trampolinePrep) wait() *trampoline {
	<-p.done
	return p.t
}

// loads reports whether the trampoline loads exactly lc's filter, the way
// libcontainer would (which needs no_new_privs).
func (t *trampoline) loads(lc *configs.Config) bool {
	return t.prog != nil && lc.Seccomp == t.cfg && lc.NoNewPrivileges
}

// open makes the descriptors that do not depend on the command.
func (t *trampoline) open(gate bool) error {
	var err error
	// The binary itself, by an O_PATH descriptor to /proc/self/exe. Unlike
	// libcontainer's init, which gets a sealed copy (CVE-2019-5736), the
	// trampoline needs none: it is the only process of a new sandbox (its
	// pid 1; nothing joins one-shot sandboxes), it closes the descriptor
	// before it does anything else, and the command executed next finds
	// neither the descriptor nor this binary behind /proc/1/exe. Making the
	// copy (an overlay mount, torn down again) cost ~3 ms per launch.
	if t.exe, err = os.OpenFile("/proc/self/exe", unix.O_PATH|unix.O_CLOEXEC, 0); err != nil {
		return fmt.Errorf("seccomp trampoline: %w", err)
	}
	if t.errR, t.errW, err = os.Pipe(); err != nil {
		return fmt.Errorf("seccomp trampoline: %w", err)
	}
	if gate {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("exec gate socket: %w", err)
		}
		t.gateHost, t.gateChild = os.NewFile(uintptr(fds[0]), "exec-gate"), os.NewFile(uintptr(fds[1]), "exec-gate-child")
	}
	return nil
}

// files returns the process's ExtraFiles, exactly the trampoline's 3, 4
// and 5, with env, the program's environment, in the program descriptor
// (see seccompexec.h): the process itself gets an empty one.
func (t *trampoline) files(env []string) ([]*os.File, error) {
	data := make([]byte, seccompexec.Header, seccompexec.Header+len(t.prog)+len(t.landlock)+256)
	flags := t.flags
	if t.observe {
		flags |= seccompexec.Observe
	}
	if t.create {
		flags |= seccompexec.Create
	}
	if t.noExec {
		flags |= seccompexec.NoExec
	}
	if t.sealed {
		flags |= seccompexec.Sealed
	}
	binary.NativeEndian.PutUint32(data, flags)
	binary.NativeEndian.PutUint32(data[4:], uint32(len(t.prog)/sockFilterSize)) // 0: gate only
	binary.NativeEndian.PutUint32(data[8:], uint32(len(t.landlock)))
	data = append(data, t.prog...)
	data = append(data, t.landlock...)
	for _, kv := range env {
		if strings.IndexByte(kv, 0) >= 0 {
			return nil, fmt.Errorf("environment entry %q holds a NUL byte", kv)
		}
		data = append(append(data, kv...), 0)
	}
	var err error
	if t.progFile, err = sealedMemfd("tether-seccomp", data); err != nil {
		return nil, fmt.Errorf("seccomp program: %w", err)
	}
	files := []*os.File{t.exe, t.progFile, t.errW}
	if t.gateChild != nil {
		files = append(files, t.gateChild)
	}
	return files, nil
}

// started closes this process's copies of what the container now holds:
// the error pipe reads end-of-file once the trampoline has executed the
// program or exited, and the gate socket once it has sent the listener.
func (t *trampoline) started() {
	for _, f := range []*os.File{t.exe, t.progFile, t.errW, t.gateChild} {
		if f != nil {
			_ = f.Close()
		}
	}
}

// execError returns what the trampoline reported, if anything: a program
// it could not find or execute, or a filter it could not load. Call it once
// the container's process has exited; it does not wait for more.
func (t *trampoline) execError() error {
	_ = t.errR.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	var msg []byte
	buf := make([]byte, 512)
	for len(msg) < 8192 {
		n, err := t.errR.Read(buf)
		msg = append(msg, buf[:n]...)
		if err != nil {
			break
		}
	}
	if len(msg) == 0 {
		return nil
	}
	return errors.New(string(msg))
}

// sealedMemfd returns a memfd holding data, sealed against any change: a
// descriptor the sandbox's process reads but cannot alter.
func sealedMemfd(name string, data []byte) (*os.File, error) {
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, fmt.Errorf("creating %s: %w", name, err)
	}
	f := os.NewFile(uintptr(fd), name)
	if _, err := f.Write(data); err != nil {
		f.Close()
		return nil, fmt.Errorf("writing %s: %w", name, err)
	}
	seals := unix.F_SEAL_SEAL | unix.F_SEAL_SHRINK | unix.F_SEAL_GROW | unix.F_SEAL_WRITE
	if _, err := unix.FcntlInt(f.Fd(), unix.F_ADD_SEALS, seals); err != nil {
		f.Close()
		return nil, fmt.Errorf("sealing %s: %w", name, err)
	}
	return f, nil
}

// close releases every descriptor; it is safe after started, and twice.
func (t *trampoline) close() {
	for _, f := range []*os.File{t.exe, t.progFile, t.errR, t.errW, t.gateHost, t.gateChild} {
		if f != nil {
			_ = f.Close()
		}
	}
}
