package sandbox

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tether-dev/tether/rootfs"
)

// PathRefused is one access the sandbox's Landlock ruleset refused, as the
// kernel's audit record gives it: the path as the sandbox names it (the
// kernel resolves it: symlinks followed, /proc/self/fd links to their
// file) and the rights it lacked ("fs.read_file", "fs.write_file", ...).
type PathRefused struct {
	Path string `json:"path"`
	// Op is what the call did, for a refusal of the mount plan's
	// read-only workspace (blocker "mount.read_only"): open, mkdir, mknod,
	// symlink, link, rename (creations), chmod, chown, utimes, setxattr,
	// unlink, rmdir, truncate, open-write. Empty for Landlock's.
	Op string `json:"op,omitempty"`
	// Addr is a refused TCP connect's address, "IP:port" as the kernel
	// gives it (blocker "net.connect_tcp", Landlock.RestrictTCPConnect);
	// Path is then empty.
	Addr     string   `json:"addr,omitempty"`
	Blockers []string `json:"blockers"`
}

// maxPathsRefused bounds the refusals kept per sandbox (or session
// command): a loop retrying the same open is one.
const maxPathsRefused = 128

// landlockVersion is the kernel's Landlock ABI version, 0 without
// Landlock (not built, or not in the LSM list).
var landlockVersion = sync.OnceValue(func() int {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, 1) // LANDLOCK_CREATE_RULESET_VERSION
	if errno != 0 {
		return 0
	}
	return int(v)
})

// landlockFor returns the Landlock section of cfg's ruleset for a sandbox
// placed by p, or nil when cfg asks for none. Without Landlock in the
// kernel, or when the layout cannot be confined (ErrLandlockLayout: a
// workspace or bind under /tmp or inside the system tree), it lists
// "landlock" in notEnforced and returns nil: the sandbox runs as it would
// without the policy (the text gate's checks still hold).
func landlockFor(cfg Config, p Placement, notEnforced *[]string) ([]byte, error) {
	if cfg.Landlock == nil {
		return nil, nil
	}
	abi := landlockABI(landlockVersion())
	if abi.version == 0 {
		*notEnforced = append(*notEnforced, "landlock")
		return nil, nil
	}
	system, err := systemPaths(cfg, p)
	if err != nil {
		return nil, err
	}
	rules, err := landlockRules(cfg, system)
	if errors.Is(err, ErrLandlockLayout) {
		// As without Landlock: said, not pretended; the text gate's
		// checks hold as before.
		*notEnforced = append(*notEnforced, "landlock")
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var net uint64
	if cfg.Landlock.RestrictTCPConnect {
		// The port rules confine TCP connects alone (and the other stream
		// protocols are refused, tcpOnlyRules): UDP and ICMP datagrams
		// still go to any port (docs/landlock.md).
		*notEnforced = append(*notEnforced, "udp_ports")
		if net = abi.net; net == 0 {
			*notEnforced = append(*notEnforced, "landlock_net") // below ABI 4
		}
	}
	return encodeLandlock(abi, net, rules, cfg.Landlock.TCPConnectPorts), nil
}

// hostNetworkScope returns, for a sandbox that shares the host's network
// namespace (NetworkHost) and has no Landlock policy of its own, a
// ruleset that only scopes abstract unix sockets. An abstract name lives
// in the network namespace and has no file: neither the mounts nor the
// creation gate's rule for pathname sockets (notify_socket_linux.go) stand
// between such a sandbox and the host's listeners (an X server's
// @/tmp/.X11-unix/X0, a session bus). Landlock's scope (ABI 6) lets a
// process connect only to abstract sockets made inside its own domain.
// Without it, "abstract-unix-scope" is listed in notEnforced. nil for
// any other sandbox.
func hostNetworkScope(cfg Config, notEnforced *[]string) []byte {
	if cfg.Network != NetworkHost {
		return nil
	}
	abi := landlockABI(landlockVersion())
	if abi.scoped&llScopeAbstractUnix == 0 {
		*notEnforced = append(*notEnforced, "abstract-unix-scope")
		return nil
	}
	return encodeLandlock(llABI{version: abi.version, scoped: llScopeAbstractUnix, attrSize: abi.attrSize}, 0, nil, nil)
}

// systemPaths are the read-only system tree of cfg's root as the sandbox
// sees it: the host layout's binds (and /etc when they are snapshotted
// there), or a prepared root's top-level entries, descending into those
// that hold the workspace or a bind so that their rule covers neither.
func systemPaths(cfg Config, p Placement) ([]string, error) {
	kernel := map[string]bool{"/proc": true, "/sys": true, "/dev": true, "/tmp": true}
	var own []string
	if cfg.Workspace != "" {
		own = append(own, filepath.Clean(cfg.workspaceMount()))
	}
	for _, b := range cfg.Binds {
		own = append(own, filepath.Clean(b.dest()))
	}
	var out []string
	if cfg.Rootfs.Kind != rootfs.KindDir {
		binds := cfg.Rootfs.Binds
		if p.EtcDir != "" {
			_, binds = etcEntries(binds)
			out = append(out, "/etc")
		}
		return append(out, binds...), nil
	}
	var walk func(dir string) error
	walk = func(dir string) error {
		entries, err := os.ReadDir(filepath.Join(cfg.Rootfs.Dir, dir))
		if err != nil {
			return fmt.Errorf("listing the sandbox root's %s for its Landlock rules: %w", dir, err)
		}
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			isOwn, holdsOwn := kernel[p], false
			for _, o := range own {
				isOwn = isOwn || o == p
				holdsOwn = holdsOwn || within(o, p)
			}
			switch {
			case isOwn:
			case holdsOwn:
				if err := walk(p); err != nil {
					return err
				}
			default:
				out = append(out, p)
			}
		}
		return nil
	}
	if err := walk("/"); err != nil {
		return nil, err
	}
	return out, nil
}

// Audit netlink (include/uapi/linux/audit.h).
const (
	auditGet            = 1000
	auditSet            = 1001
	auditUser           = 1005
	auditAddRuleData    = 1011
	auditLandlockAccess = 1423
	auditLandlockDomain = 1424
	auditNlgrpReadlog   = 1
	auditStatusEnabled  = 1
	auditFilterTask     = 1
	auditNever          = 0
)

// ErrLandlockAudit: the kernel's audit records, which name the paths a
// Landlock ruleset refused, cannot be read here (no root, audit locked
// off, no netlink audit). The ruleset still holds.
var ErrLandlockAudit = errors.New("cannot read the kernel's Landlock audit records")

// landlockAudit reads the kernel's Landlock audit records for this
// process's sandboxes. It is started once, on the first sandbox with a
// ruleset; it is safe for concurrent use.
type landlockAudit struct {
	sock int // bound to the read-log multicast group
	ctl  int // for requests (the barrier)
	// readMu is held by whoever reads sock: the background reader between
	// commands, or a barrier's own goroutine, which reads up to its record
	// itself rather than wait to be woken by the reader (one scheduling
	// hop fewer on every command under a ruleset).
	readMu sync.Mutex

	mu sync.Mutex
	// Preconditions: mu held for the fields below.
	byDomain map[uint64]*llDomain // every domain seen since start
	barriers map[string]chan struct{}
}

// llDomain is one Landlock domain's denials.
type llDomain struct {
	pid     int // its creator's host pid; 0 until its record arrives
	refused []PathRefused
	seen    map[string]bool
}

var landlockAuditOnce = sync.OnceValues(startLandlockAudit)

// startLandlockAudit joins the audit read-log group and, when audit is
// off and no audit daemon runs, turns it on: Landlock logs nothing while
// audit is off. It first adds the rule "never,task" (as distributions'
// audit rules do), so that turning audit on adds no system-call auditing
// to the host's tasks; with no audit daemon the kernel also prints each
// record to its log, rate-limited.
func startLandlockAudit() (*landlockAudit, error) {
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("%w: tether runs without root", ErrLandlockAudit)
	}
	sock, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_AUDIT)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrLandlockAudit, err)
	}
	if err := unix.Bind(sock, &unix.SockaddrNetlink{Family: unix.AF_NETLINK, Groups: 1 << (auditNlgrpReadlog - 1)}); err != nil {
		unix.Close(sock)
		return nil, fmt.Errorf("%w: joining the audit read-log group: %w", ErrLandlockAudit, err)
	}
	// Records must not be dropped for want of room: a lost record is a
	// refused path nobody learns of.
	_ = unix.SetsockoptInt(sock, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 4<<20)
	// A barrier's blocking read gives up after this long (take).
	tv := unix.NsecToTimeval(int64(barrierTimeout))
	if err := unix.SetsockoptTimeval(sock, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		unix.Close(sock)
		return nil, fmt.Errorf("%w: %w", ErrLandlockAudit, err)
	}
	ctl, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_AUDIT)
	if err != nil {
		unix.Close(sock)
		return nil, fmt.Errorf("%w: %w", ErrLandlockAudit, err)
	}
	a := &landlockAudit{sock: sock, ctl: ctl, byDomain: map[uint64]*llDomain{}, barriers: map[string]chan struct{}{}}
	enabled, pid, err := a.status()
	if err != nil {
		a.close()
		return nil, err
	}
	if enabled == 0 {
		if pid != 0 {
			a.close()
			return nil, fmt.Errorf("%w: audit is off and managed by the audit daemon (pid %d)", ErrLandlockAudit, pid)
		}
		rule := make([]byte, 1040) // struct audit_rule_data, no fields
		binary.NativeEndian.PutUint32(rule, auditFilterTask)
		binary.NativeEndian.PutUint32(rule[4:], auditNever)
		if err := a.request(auditAddRuleData, rule); err != nil && !errors.Is(err, unix.EEXIST) {
			a.close()
			return nil, fmt.Errorf("%w: adding the audit rule never,task: %w", ErrLandlockAudit, err)
		}
		st := make([]byte, 8)
		binary.NativeEndian.PutUint32(st, auditStatusEnabled)
		binary.NativeEndian.PutUint32(st[4:], 1)
		if err := a.request(auditSet, st); err != nil {
			a.close()
			return nil, fmt.Errorf("%w: turning audit on: %w", ErrLandlockAudit, err)
		}
	}
	go a.read()
	return a, nil
}

func (a *landlockAudit) close() {
	unix.Close(a.sock)
	unix.Close(a.ctl)
}

// request sends one audit request on ctl and waits for its
// acknowledgement.
func (a *landlockAudit) request(typ uint16, payload []byte) error {
	_, err := a.exchange(typ, payload, false)
	return err
}

// status returns audit's enabled state and the audit daemon's pid.
func (a *landlockAudit) status() (enabled, pid uint32, err error) {
	st, err := a.exchange(auditGet, nil, true)
	if err != nil {
		return 0, 0, fmt.Errorf("%w: reading audit's status: %w", ErrLandlockAudit, err)
	}
	if len(st) < 16 {
		return 0, 0, fmt.Errorf("%w: audit's status is %d bytes", ErrLandlockAudit, len(st))
	}
	return binary.NativeEndian.Uint32(st[4:]), binary.NativeEndian.Uint32(st[12:]), nil
}

// exchange sends a request on ctl; with reply it returns the payload of
// the answer of the same type, else it waits for the acknowledgement.
// Only one exchange runs at a time (startLandlockAudit, then barrier
// under barrierMu).
func (a *landlockAudit) exchange(typ uint16, payload []byte, reply bool) ([]byte, error) {
	msg := make([]byte, unix.NLMSG_HDRLEN, unix.NLMSG_HDRLEN+len(payload)+4)
	msg = append(msg, payload...)
	for len(msg)%4 != 0 {
		msg = append(msg, 0)
	}
	binary.NativeEndian.PutUint32(msg, uint32(unix.NLMSG_HDRLEN+len(payload)))
	binary.NativeEndian.PutUint16(msg[4:], typ)
	binary.NativeEndian.PutUint16(msg[6:], unix.NLM_F_REQUEST|unix.NLM_F_ACK)
	binary.NativeEndian.PutUint32(msg[8:], 1)
	if err := unix.Sendto(a.ctl, msg, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return nil, err
	}
	tv := unix.NsecToTimeval(int64(2 * time.Second))
	_ = unix.SetsockoptTimeval(a.ctl, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	buf := make([]byte, 8192)
	var out []byte
	for {
		n, _, err := unix.Recvfrom(a.ctl, buf, 0)
		if err != nil {
			return nil, err
		}
		msgs, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			return nil, err
		}
		for _, m := range msgs {
			switch {
			case m.Header.Type == unix.NLMSG_ERROR && len(m.Data) >= 4:
				if e := int32(binary.NativeEndian.Uint32(m.Data)); e != 0 {
					return nil, unix.Errno(-e)
				}
				if !reply || out != nil {
					return out, nil
				}
			case m.Header.Type == typ:
				out = append([]byte(nil), m.Data...)
				return out, nil
			}
		}
	}
}

// read collects Landlock records between barriers until the socket
// fails: it waits for one to arrive, then takes every record there is
// (unless a barrier is reading them meanwhile).
func (a *landlockAudit) read() {
	buf := make([]byte, 1<<16)
	fds := []unix.PollFd{{Fd: int32(a.sock), Events: unix.POLLIN}}
	for {
		fds[0].Revents = 0
		if _, err := unix.Poll(fds, -1); err != nil {
			if err == unix.EINTR {
				continue
			}
			return
		}
		if fds[0].Revents&(unix.POLLERR|unix.POLLNVAL) != 0 && fds[0].Revents&unix.POLLIN == 0 {
			return
		}
		a.readMu.Lock()
		for {
			if _, err := a.readOne(buf, unix.MSG_DONTWAIT); err != nil {
				break // EAGAIN: all taken
			}
		}
		a.readMu.Unlock()
	}
}

// readOne reads and takes one record from sock, returning its type.
// Preconditions: a.readMu held.
func (a *landlockAudit) readOne(buf []byte, flags int) (uint16, error) {
	for {
		n, _, err := unix.Recvfrom(a.sock, buf, flags)
		if errors.Is(err, unix.EINTR) || errors.Is(err, unix.ENOBUFS) {
			// ENOBUFS: records were dropped; those of a denial cannot be
			// told apart, so the drift is lost, not the refusal.
			continue
		}
		if err != nil {
			return 0, err
		}
		// One record a datagram. The kernel's audit records do not all
		// count the header in nlmsg_len, so the datagram's own length
		// bounds the text.
		if n < unix.NLMSG_HDRLEN {
			continue
		}
		typ := binary.NativeEndian.Uint16(buf[4:])
		a.record(typ, string(bytes.TrimRight(buf[unix.NLMSG_HDRLEN:n], "\x00")))
		return typ, nil
	}
}

// record takes one audit record.
func (a *landlockAudit) record(typ uint16, text string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch typ {
	case auditUser:
		for nonce, ch := range a.barriers {
			if strings.Contains(text, nonce) {
				close(ch)
				delete(a.barriers, nonce)
			}
		}
	case auditLandlockAccess:
		f := auditFields(text)
		id, err := strconv.ParseUint(f["domain"], 16, 64)
		if err != nil {
			return
		}
		d := a.domain(id)
		p, ok := f["path"]
		if !ok {
			p = f["name"] // a denial without a path (scopes) names no file
		}
		// Rights no rule ever grants (device nodes) are missing wherever a
		// rename or link lands: they say nothing about the policy.
		var blockers []string
		for _, b := range strings.Split(f["blockers"], ",") {
			if b != "fs.make_char" && b != "fs.make_block" {
				blockers = append(blockers, b)
			}
		}
		// A refused connect names its destination, no file.
		var addr string
		if p == "" {
			ip, err1 := netip.ParseAddr(f["daddr"])
			port, err2 := strconv.ParseUint(f["dest"], 10, 16)
			if err1 == nil && err2 == nil {
				addr = netip.AddrPortFrom(ip, uint16(port)).String()
			}
		}
		key := p + "\x00" + addr + "\x00" + strings.Join(blockers, ",")
		if p == "" && addr == "" || len(blockers) == 0 || d.seen[key] || len(d.refused) >= maxPathsRefused {
			return
		}
		d.seen[key] = true
		d.refused = append(d.refused, PathRefused{Path: p, Addr: addr, Blockers: blockers})
	case auditLandlockDomain:
		f := auditFields(text)
		id, err := strconv.ParseUint(f["domain"], 16, 64)
		if err != nil {
			return
		}
		switch f["status"] {
		case "allocated":
			if pid, err := strconv.Atoi(f["pid"]); err == nil {
				a.domain(id).pid = pid
			}
		case "deallocated":
			if d := a.byDomain[id]; d != nil && d.pid == 0 {
				delete(a.byDomain, id) // not one of ours: nobody will ask
			}
		}
	}
}

// domain returns domain id's entry, made on first sight.
// Preconditions: a.mu held.
func (a *landlockAudit) domain(id uint64) *llDomain {
	d := a.byDomain[id]
	if d == nil {
		d = &llDomain{seen: map[string]bool{}}
		a.byDomain[id] = d
	}
	return d
}

// barrierMu serialises barriers (they share ctl).
var barrierMu sync.Mutex

// take returns, and forgets, what the domains that pid created refused so
// far. It first waits for a record of its own to come back through the
// kernel's audit queue, behind every record queued before it: the
// refusals of processes that have exited, or are stopped, are all in.
func (a *landlockAudit) take(pid int) ([]PathRefused, error) {
	var b [8]byte
	_, _ = rand.Read(b[:])
	nonce := "tether-landlock-barrier-" + hex.EncodeToString(b[:])
	ch := make(chan struct{})
	a.mu.Lock()
	a.barriers[nonce] = ch
	a.mu.Unlock()
	barrierMu.Lock()
	err := a.request(auditUser, []byte(nonce+"\x00")) // the kernel drops the last byte, a NUL
	barrierMu.Unlock()
	if err == nil {
		err = a.await(ch)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.barriers, nonce)
	var out []PathRefused
	for _, d := range a.byDomain {
		if d.pid == pid {
			out = append(out, d.refused...)
			d.refused, d.seen = nil, map[string]bool{}
		}
	}
	if len(out) > maxPathsRefused {
		out = out[:maxPathsRefused]
	}
	if err != nil {
		return out, fmt.Errorf("%w: %w", ErrLandlockAudit, err)
	}
	return out, nil
}

// barrierTimeout bounds the wait for a barrier's record.
const barrierTimeout = 2 * time.Second

// await reads records until ch is closed (its barrier's record was
// taken, by this goroutine or another reader), or barrierTimeout passes.
func (a *landlockAudit) await(ch chan struct{}) error {
	deadline := time.Now().Add(barrierTimeout)
	a.readMu.Lock()
	defer a.readMu.Unlock()
	var buf []byte
	for {
		select {
		case <-ch:
			return nil
		default:
		}
		if time.Now().After(deadline) {
			return errors.New("the audit barrier did not come back")
		}
		if buf == nil {
			buf = make([]byte, 1<<16)
		}
		// Blocking, up to the socket's SO_RCVTIMEO: the kernel wakes this
		// goroutine's thread itself when the record arrives.
		if _, err := a.readOne(buf, 0); err != nil && !errors.Is(err, unix.EAGAIN) {
			return fmt.Errorf("reading the audit barrier: %w", err)
		}
	}
}

// forget drops the domains pid created.
func (a *landlockAudit) forget(pid int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for id, d := range a.byDomain {
		if d.pid == pid {
			delete(a.byDomain, id)
		}
	}
}

// auditFields parses an audit record's key=value fields. A value is a
// bare word, a double-quoted string, or an even run of hex digits (the
// kernel's form of a string holding spaces, quotes or control bytes).
// Only the fields whose values are strings (path, name, exe, comm) are
// hex-decoded.
func auditFields(text string) map[string]string {
	if _, rest, ok := strings.Cut(text, "): "); ok {
		text = rest
	}
	f := map[string]string{}
	for len(text) > 0 {
		text = strings.TrimLeft(text, " ")
		k, rest, ok := strings.Cut(text, "=")
		if !ok || k == "" || strings.ContainsRune(k, ' ') {
			break
		}
		var v string
		if strings.HasPrefix(rest, `"`) {
			end := strings.IndexByte(rest[1:], '"')
			if end < 0 {
				break
			}
			v, text = rest[1:1+end], rest[2+end:]
		} else {
			end := strings.IndexByte(rest, ' ')
			if end < 0 {
				end = len(rest)
			}
			v, text = rest[:end], rest[end:]
			switch k {
			case "path", "name", "exe", "comm":
				if raw, err := hex.DecodeString(v); err == nil && v != "" {
					v = string(raw)
				} else if v == "(null)" || v == "?" {
					v = ""
				}
			}
		}
		if _, dup := f[k]; !dup {
			f[k] = v
		}
	}
	return f
}
