//go:build seccomp && linux

package sandbox

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/opencontainers/runc/libcontainer/configs"
	"github.com/opencontainers/runc/libcontainer/seccomp"
	"github.com/opencontainers/runtime-spec/specs-go"
	libseccomp "github.com/seccomp/libseccomp-golang"
	"golang.org/x/sys/unix"
)

// A container's seccomp filter is compiled once per filter and binary, not
// in every container's init (see package seccompexec). compiledSeccomp gets
// the program that libcontainer's own seccomp.InitSeccomp builds for a
// config: a helper process (this binary, re-executed with
// seccompCompileArg) installs the filter on one of its threads with
// InitSeccomp, and this process reads the installed program back from the
// kernel with ptrace(PTRACE_SECCOMP_GET_FILTER). The program is therefore
// exactly the one libcontainer would have loaded (rules, the ENOSYS stub,
// everything), with no second compiler to keep in step. It is kept in
// memory and under the state root (seccomp/<key>.bpf; /run is per boot),
// keyed by the config and by the versions of libcontainer and libseccomp
// that compiled it.

// seccompCompileArg and seccompCompileEnv mark the helper process.
const (
	seccompCompileArg = "seccomp-compile"
	seccompCompileEnv = "_TETHER_SECCOMP_COMPILE"
	maxFilterInsns    = 4096 // BPF_MAXINSNS
)

var compiledPrograms sync.Map // cache key → []byte

// isSeccompCompile reports whether this process is the helper.
func isSeccompCompile() bool {
	return len(os.Args) > 1 && os.Args[1] == seccompCompileArg && os.Getenv(seccompCompileEnv) == "1"
}

// seccompCompileMain is the helper: it reads a configs.Seccomp as JSON on
// stdin, installs it on its (locked) thread with no_new_privs, prints that
// thread's id, and waits for stdin to close. It never returns.
func seccompCompileMain() {
	runtime.LockOSThread()
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "seccomp-compile:", err)
		os.Exit(1)
	}
	in := bufio.NewReader(os.Stdin)
	var cfg configs.Seccomp
	if err := json.NewDecoder(in).Decode(&cfg); err != nil {
		fail(err)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		fail(err)
	}
	if _, err := seccomp.InitSeccomp(&cfg); err != nil {
		fail(err)
	}
	fmt.Println(unix.Gettid())
	_, _ = io.Copy(io.Discard, in)
	os.Exit(0)
}

// compiledSeccomp returns cfg's program as an array of struct sock_filter
// and the flags of seccomp(SECCOMP_SET_MODE_FILTER) that load it, from
// memory, the state root's cache, or the helper. It fails for configs the
// trampoline cannot honour (notify listeners, thread sync); the caller then
// lets libcontainer load the filter itself.
func compiledSeccomp(stateRoot string, cfg *configs.Seccomp) (prog []byte, flags uint32, err error) {
	if cfg.ListenerPath != "" {
		return nil, 0, errors.New("seccomp listeners are libcontainer's to load")
	}
	for _, call := range cfg.Syscalls {
		if call.Action == configs.Notify {
			return nil, 0, errors.New("seccomp notify is libcontainer's to load")
		}
	}
	// The flags as libcontainer's patchbpf.filterFlags passes them.
	for _, f := range cfg.Flags {
		switch f {
		case specs.LinuxSeccompFlagLog:
			flags |= unix.SECCOMP_FILTER_FLAG_LOG
		case specs.LinuxSeccompFlagSpecAllow:
			flags |= unix.SECCOMP_FILTER_FLAG_SPEC_ALLOW
		default:
			return nil, 0, fmt.Errorf("seccomp flag %s is libcontainer's to load", f)
		}
	}
	prog, err = cachedSeccomp(stateRoot, cfg)
	return prog, flags, err
}

// cachedSeccomp returns cfg's program from memory, the state root's cache,
// or the helper.
func cachedSeccomp(stateRoot string, cfg *configs.Seccomp) ([]byte, error) {
	key, persist := seccompCacheKey(cfg)
	if prog, ok := compiledPrograms.Load(key); ok {
		return prog.([]byte), nil
	}
	path := filepath.Join(stateRoot, seccompDir, key+".bpf")
	failed := filepath.Join(stateRoot, seccompDir, key+".failed")
	if persist {
		if prog, err := readOwnFile(path); err == nil && validProgram(prog) == nil {
			compiledPrograms.Store(key, prog)
			return prog, nil
		}
		// Where the compiler cannot work (ptrace refused: tether itself
		// under seccomp, Yama's ptrace_scope 3), it is not tried again on
		// every launch; tether gc (the caches) or a reboot clears this.
		if why, err := readOwnFile(failed); err == nil {
			return nil, fmt.Errorf("compiling the seccomp filter failed before: %s", why)
		}
	}
	js, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	prog, err := compileSeccomp(js)
	if err == nil {
		err = validProgram(prog)
	}
	if err != nil {
		if persist {
			_ = writeFileAtomic(failed, []byte(err.Error()))
		}
		return nil, err
	}
	if persist {
		// Best effort: a cache that cannot be written costs the next run
		// a compile, nothing else.
		_ = writeFileAtomic(path, prog)
	}
	compiledPrograms.Store(key, prog)
	return prog, nil
}

// seccompCacheKey names cfg's program; persist is false when the build
// does not say which libcontainer and libseccomp compile it (see
// compilerVersions), and then it is not cached on disk.
func seccompCacheKey(cfg *configs.Seccomp) (key string, persist bool) {
	versions, persist := compilerVersions()
	sum := sha256.Sum256(appendSeccompKey(append(make([]byte, 0, 16<<10), versions...), cfg))
	return hex.EncodeToString(sum[:16]), persist
}

// appendSeccompKey appends every field of cfg, each of which can change
// its program, as text: the cache key (built with strconv, as JSON or fmt
// would cost a cold process a good part of a millisecond on every launch).
// TestSeccompKeyCoversConfig fails when libcontainer adds a field, so that
// it gets written here too.
func appendSeccompKey(b []byte, cfg *configs.Seccomp) []byte {
	uintp := func(b []byte, p *uint) []byte {
		if p == nil {
			return append(b, " -"...)
		}
		return strconv.AppendUint(append(b, ' '), uint64(*p), 10)
	}
	b = strconv.AppendInt(b, int64(cfg.DefaultAction), 10)
	for _, a := range cfg.Architectures {
		b = strconv.AppendQuote(append(b, " a"...), a)
	}
	for _, f := range cfg.Flags {
		b = strconv.AppendQuote(append(b, " f"...), string(f))
	}
	b = uintp(b, cfg.DefaultErrnoRet)
	b = strconv.AppendQuote(append(b, ' '), cfg.ListenerPath)
	b = strconv.AppendQuote(append(b, ' '), cfg.ListenerMetadata)
	for _, c := range cfg.Syscalls {
		b = strconv.AppendQuote(append(b, '\n'), c.Name)
		b = strconv.AppendInt(append(b, ' '), int64(c.Action), 10)
		b = uintp(b, c.ErrnoRet)
		for _, a := range c.Args {
			b = strconv.AppendUint(append(b, ' '), uint64(a.Index), 10)
			b = strconv.AppendUint(append(b, ':'), a.Value, 10)
			b = strconv.AppendUint(append(b, ':'), a.ValueTwo, 10)
			b = strconv.AppendInt(append(b, ':'), int64(a.Op), 10)
		}
	}
	return b
}

// readOwnFile reads a cache file only if it, and the directory holding it,
// belong to this user and nobody else can write them: the program decides
// what a sandbox may do, so one planted in a state root that someone else
// could write to (a careless TETHER_STATE_ROOT) is compiled afresh instead.
func readOwnFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var dir, file unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &file); err != nil {
		return nil, err
	}
	if err := unix.Stat(filepath.Dir(path), &dir); err != nil {
		return nil, err
	}
	euid := uint32(os.Geteuid())
	for _, st := range []*unix.Stat_t{&dir, &file} {
		if st.Uid != euid || st.Mode&0o022 != 0 {
			return nil, fmt.Errorf("%s: not this user's own, or writable by others", path)
		}
	}
	if file.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	return io.ReadAll(f)
}

// compilerVersions names what decides the program besides its config:
// libcontainer (its rule translation and ENOSYS stub) and libseccomp (the
// library and its Go binding). persist is false when the build does not
// say, and then nothing is cached on disk. Read once per process: a daemon
// asks for every sandbox.
var compilerVersions = sync.OnceValues(func() (versions []byte, persist bool) {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return nil, false
	}
	var b strings.Builder
	for _, m := range info.Deps {
		if m.Path == "github.com/opencontainers/runc" || m.Path == "github.com/seccomp/libseccomp-golang" {
			if m.Replace != nil {
				m = m.Replace
			}
			fmt.Fprintf(&b, "%s@%s %s\n", m.Path, m.Version, m.Sum)
		}
	}
	major, minor, micro := libseccomp.GetLibraryVersion()
	fmt.Fprintf(&b, "libseccomp %d.%d.%d\n", major, minor, micro)
	return []byte(b.String()), true
})

// validProgram checks the shape of a program read from disk or the kernel.
func validProgram(prog []byte) error {
	if n := len(prog) / sockFilterSize; len(prog) == 0 || len(prog)%sockFilterSize != 0 || n > maxFilterInsns {
		return fmt.Errorf("seccomp program of %d bytes is not a filter", len(prog))
	}
	return nil
}

// compileSeccomp runs the helper on the JSON of a configs.Seccomp and reads
// back the program it installed.
func compileSeccomp(cfgJSON []byte) (_ []byte, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/proc/self/exe", seccompCompileArg)
	cmd.Env = []string{seccompCompileEnv + "=1"}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the seccomp compiler: %w", err)
	}
	defer func() {
		// Its work is done or failed: end it either way.
		_ = cmd.Process.Kill()
		_ = stdin.Close()
		_ = cmd.Wait()
		if err != nil && stderr.Len() > 0 {
			err = fmt.Errorf("%w (%s)", err, strings.TrimSpace(stderr.String()))
		}
	}()
	if _, err := stdin.Write(cfgJSON); err != nil {
		return nil, fmt.Errorf("compiling the seccomp filter: %w", err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		return nil, fmt.Errorf("compiling the seccomp filter: the compiler stopped: %w", err)
	}
	tid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || tid <= 0 {
		return nil, fmt.Errorf("compiling the seccomp filter: the compiler said %q", line)
	}
	return readFilter(tid)
}

// readFilter reads the newest seccomp filter of thread tid with ptrace
// (which needs CAP_SYS_ADMIN), stopping it meanwhile. Every ptrace request
// must come from the thread that attached.
func readFilter(tid int) ([]byte, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := unix.PtraceSeize(tid); err != nil {
		return nil, fmt.Errorf("reading the seccomp filter: ptrace seize: %w", err)
	}
	if err := unix.PtraceInterrupt(tid); err != nil {
		return nil, fmt.Errorf("reading the seccomp filter: ptrace interrupt: %w", err)
	}
	for i := 0; ; i++ {
		var ws unix.WaitStatus
		if _, err := unix.Wait4(tid, &ws, unix.WALL, nil); err != nil {
			return nil, fmt.Errorf("reading the seccomp filter: wait: %w", err)
		}
		if !ws.Stopped() {
			return nil, fmt.Errorf("reading the seccomp filter: the compiler ended (%v)", ws)
		}
		if int(ws>>16)&0xff == unix.PTRACE_EVENT_STOP {
			break
		}
		// A signal on its way to the tracee (the Go runtime's own): let it
		// through and wait for the interrupt's stop.
		if i == 100 {
			return nil, errors.New("reading the seccomp filter: the compiler does not stop")
		}
		if err := unix.PtraceCont(tid, int(ws.StopSignal())); err != nil {
			return nil, fmt.Errorf("reading the seccomp filter: ptrace cont: %w", err)
		}
	}
	n, _, errno := unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_SECCOMP_GET_FILTER, uintptr(tid), 0, 0, 0, 0)
	if errno != 0 {
		return nil, fmt.Errorf("reading the seccomp filter: %w", errno)
	}
	if n == 0 || n > maxFilterInsns {
		return nil, fmt.Errorf("reading the seccomp filter: %d instructions", n)
	}
	insns := make([]unix.SockFilter, n)
	got, _, errno := unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_SECCOMP_GET_FILTER, uintptr(tid), 0, uintptr(unsafe.Pointer(&insns[0])), 0, 0)
	if errno != 0 {
		return nil, fmt.Errorf("reading the seccomp filter: %w", errno)
	}
	if got != n {
		return nil, fmt.Errorf("reading the seccomp filter: %d instructions, then %d", n, got)
	}
	// Let it go on: the helper is killed anyway, a sandbox (in tests) is not.
	if err := unix.PtraceDetach(tid); err != nil {
		return nil, fmt.Errorf("reading the seccomp filter: ptrace detach: %w", err)
	}
	prog := make([]byte, 0, int(n)*sockFilterSize)
	for _, in := range insns {
		prog = binary.NativeEndian.AppendUint16(prog, in.Code)
		prog = append(prog, in.Jt, in.Jf)
		prog = binary.NativeEndian.AppendUint32(prog, in.K)
	}
	return prog, nil
}

// writeFileAtomic writes data to path (creating its 0700 directory) so that
// readers see the old file or the whole new one.
func writeFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
