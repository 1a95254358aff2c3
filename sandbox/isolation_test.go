package sandbox

import (
	"crypto/sha256"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// py runs a Python snippet with the host's /usr/bin/python3 inside the sandbox.
func py(code string) string {
	return "/usr/bin/python3 -c '" + strings.ReplaceAll(code, "'", `'\''`) + "'"
}

// sysc calls a raw syscall via ctypes and prints "ret=<r> errno=<e>".
func sysc(nr int, args ...string) string {
	a := ""
	for _, x := range args {
		a += ", " + x
	}
	return py(fmt.Sprintf("import ctypes; l=ctypes.CDLL(None, use_errno=True); r=l.syscall(%d%s); print(\"ret=%%d errno=%%d\" %% (r, ctypes.get_errno()))", nr, a))
}

func fileHash(t *testing.T, p string) string {
	t.Helper()
	f, err := os.Open(p)
	require.NoError(t, err)
	defer f.Close()
	h := sha256.New()
	_, err = io.Copy(h, f)
	require.NoError(t, err)
	return fmt.Sprintf("%x", h.Sum(nil))
}

// TestIsolation runs escape attempts in a host-layout sandbox and asserts,
// for each, that the attempt ran and was contained (its denial is in the
// output) and, where it matters, that the host is unchanged.
func TestIsolation(t *testing.T) {
	r := newTestRunner(t)
	if runtime.GOARCH != "amd64" {
		t.Skip("syscall numbers below are for x86_64")
	}
	secret := fmt.Sprintf("tether-secret-%d-%x", os.Getpid(), testSeq.Add(1)*7919)

	// Host fixtures: marker files outside any bind.
	markers := map[string]string{
		"root": fmt.Sprintf("/root/tether-test-marker-%d", os.Getpid()),
		"home": fmt.Sprintf("/home/tether-test-%d/marker", os.Getpid()),
		"var":  fmt.Sprintf("/var/tmp/tether-test-marker-%d", os.Getpid()),
	}
	for _, p := range markers {
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o700))
		require.NoError(t, os.WriteFile(p, []byte(secret+"\n"), 0o600))
	}
	t.Cleanup(func() {
		for _, p := range markers {
			os.Remove(p)
		}
		os.Remove(filepath.Dir(markers["home"]))
	})

	ws := t.TempDir()
	require.NoError(t, os.Symlink("/etc/shadow", filepath.Join(ws, "shadow-link")))
	require.NoError(t, os.Symlink(markers["root"], filepath.Join(ws, "marker-link")))
	require.NoError(t, os.Symlink("../../../../../../../root", filepath.Join(ws, "up-link")))
	shadow, err := os.ReadFile("/etc/shadow")
	require.NoError(t, err)
	shadowRoot := strings.SplitN(string(shadow), "\n", 2)[0]

	// A host process to look for, signal and trace.
	sleeper := exec.Command("sleep", "600")
	require.NoError(t, sleeper.Start())
	hostPid := sleeper.Process.Pid
	t.Cleanup(func() { _ = sleeper.Process.Kill(); _ = sleeper.Wait() })

	// A listener on the host's loopback that must never see a connection.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	var accepted atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	hostIP := "127.0.0.1"
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil && !ipn.IP.IsLoopback() {
				hostIP = ipn.IP.String()
				break
			}
		}
	}
	ln2, err := net.Listen("tcp", hostIP+":0")
	require.NoError(t, err)
	t.Cleanup(func() { ln2.Close() })
	go func() {
		for {
			c, err := ln2.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	port2 := ln2.Addr().(*net.TCPAddr).Port

	self, err := os.Executable()
	require.NoError(t, err)
	selfHash := fileHash(t, self)
	shHash := fileHash(t, "/usr/bin/dash")
	passwdHash := fileHash(t, "/etc/passwd")
	hostname, _ := os.Hostname()
	corePattern, err := os.ReadFile("/proc/sys/kernel/core_pattern")
	require.NoError(t, err)

	type escape struct {
		name    string
		script  string
		want    []string // evidence the attempt ran and was denied (any one)
		seccomp bool     // containment relies on the seccomp filter
		check   func(t *testing.T, out string)
	}
	denied := []string{"Operation not permitted", "Permission denied", "permission denied", "errno=1"}
	rofs := []string{"Read-only file system"}
	noent := []string{"No such file or directory"}
	escapes := []escape{
		{name: "read /root marker", script: "cat " + markers["root"], want: noent},
		{name: "read /home marker", script: "cat " + markers["home"] + "; ls /home", want: noent},
		{name: "read /var marker", script: "cat " + markers["var"] + "; ls /var", want: noent},
		{name: "read /etc/shadow", script: "cat /etc/shadow", want: noent},
		{name: "read TLS private keys", script: "ls /etc/ssl/private; ls /etc/ssl", want: noent, check: func(t *testing.T, out string) {
			assert.NotContains(t, out, "\nprivate\n")
		}},
		{name: "workspace symlink to /etc/shadow", script: "cat shadow-link", want: noent},
		{name: "workspace symlink to /root marker", script: "cat marker-link; ls up-link", want: noent},
		{name: "write /usr", script: "touch /usr/tether-escape-" + secret, want: rofs, check: func(t *testing.T, _ string) {
			assert.NoFileExists(t, "/usr/tether-escape-"+secret)
		}},
		{name: "write /etc/passwd", script: "echo 'evil::0:0::/:/bin/sh' >> /etc/passwd", want: append([]string{"Permission denied"}, rofs...), check: func(t *testing.T, _ string) {
			assert.Equal(t, passwdHash, fileHash(t, "/etc/passwd"))
		}},
		{name: "write the root", script: "mkdir /escape", want: rofs},
		{name: "remount root read-write", script: "mount -o remount,rw /", want: denied},
		{name: "mount tmpfs", script: "mount -t tmpfs none /tmp", want: denied},
		{name: "umount proc", script: "umount /proc", want: append([]string{"must be superuser"}, denied...)},
		{name: "pivot_root", script: "mkdir -p /tmp/new/old && pivot_root /tmp/new /tmp/new/old", want: denied},
		{name: "chroot escape", script: py(`import os
os.makedirs("/tmp/jail", exist_ok=True)
fd = os.open("/", os.O_RDONLY)
os.chroot("/tmp/jail")
os.fchdir(fd)
for _ in range(64): os.chdir("..")
os.chroot(".")
print(open("` + markers["root"] + `").read())`), want: denied}, // no CAP_SYS_CHROOT
		// core_pattern is global: a writable one runs a program as host root.
		{name: "write /proc/sys", script: "echo '|/tmp/evil' > /proc/sys/kernel/core_pattern", want: rofs, check: func(t *testing.T, _ string) {
			now, _ := os.ReadFile("/proc/sys/kernel/core_pattern")
			assert.Equal(t, string(corePattern), string(now))
		}},
		// Kernels without CONFIG_MAGIC_SYSRQ have no trigger file at all
		// (dash then says "Directory nonexistent").
		{name: "sysrq trigger", script: "echo h > /proc/sysrq-trigger", want: append([]string{"nonexistent"}, rofs...)},
		{name: "read kcore (masked)", script: "n=$(head -c 16 /proc/kcore | wc -c); echo kcore=$n", want: []string{"kcore=0"}},
		{name: "load kernel module", script: sysc(313, "-1", `b""`, "0") + "; " + sysc(175, "0", "0", `b""`), want: []string{"errno=1"}},
		{name: "raw socket", script: py("import socket; socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)"), want: denied},
		{name: "packet socket", script: py("import socket; socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)"), want: denied},
		{name: "egress to host loopback", script: py(fmt.Sprintf("import socket\ntry:\n socket.create_connection((\"127.0.0.1\", %d), 2)\n print(\"CONNECTED\")\nexcept OSError as e: print(\"refused\", e)", port)), want: []string{"refused"}},
		{name: "egress to host address", script: py(fmt.Sprintf("import socket\ntry:\n socket.create_connection((%q, %d), 2)\n print(\"CONNECTED\")\nexcept OSError as e: print(\"failed\", e)", hostIP, port2)), want: []string{"unreachable", "failed"}},
		{name: "see host process", script: fmt.Sprintf("ls /proc/%d/ 2>&1; ls /proc | grep -c '^[0-9]' ", hostPid), want: noent},
		{name: "signal host process", script: fmt.Sprintf("kill -9 %d", hostPid), want: []string{"No such process"}, check: func(t *testing.T, _ string) {
			assert.True(t, pidAlive(hostPid), "host sleep must survive")
		}},
		{name: "ptrace host process", script: sysc(101, "16", fmt.Sprint(hostPid), "0", "0"), want: []string{"errno=3", "errno=1"}, check: func(t *testing.T, _ string) {
			st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", hostPid))
			assert.NotContains(t, string(st), "TracerPid:\t"+"1", "host process must not be traced")
			assert.Contains(t, string(st), "TracerPid:\t0\n")
		}},
		{name: "mknod block device", script: "mknod /tmp/sda b 8 0", want: denied},
		{name: "raw disk absent", script: "ls /dev/sda /dev/vda /dev/nvme0n1 /dev/mem /dev/kmsg; ls /dev", want: noent, check: func(t *testing.T, out string) {
			assert.NotContains(t, out, "\nsda\n")
		}},
		// The sandbox's user namespace has one id: there is no other user
		// to become, and su (setuid root on the host) gains nothing.
		{name: "setuid gains nothing", script: "grep NoNewPrivs /proc/self/status; setpriv --reuid 65534 --regid 65534 --clear-groups -- id -u; su -c 'id -u' nobody </dev/null; echo su=$?",
			want: []string{"NoNewPrivs:\t1", "setresuid failed: Invalid argument"}, check: func(t *testing.T, out string) {
				assert.NotRegexp(t, `(?m)^65534$`, out, "no other uid exists in the sandbox")
				assert.NotContains(t, out, "su=0")
			}},
		// v1: a hierarchy per controller under /sys/fs/cgroup; v2: the
		// sandbox's own cgroup is /sys/fs/cgroup (cgroup namespace).
		{name: "move into parent cgroup", script: "for f in /sys/fs/cgroup/cgroup.procs /sys/fs/cgroup/*/cgroup.procs /sys/fs/cgroup/*/../cgroup.procs; do echo $$ > $f; done; cat /proc/self/cgroup", want: rofs},
		{name: "overwrite /proc/self/exe (CVE-2019-5736)", script: "echo x > /proc/self/exe; for p in /proc/[0-9]*/exe; do echo x > $p; done; " + py(`import os
try:
    os.open("/proc/1/exe", os.O_WRONLY)
except OSError as e: print("denied", e)`),
			want: []string{"Text file busy", "Read-only file system", "denied"}, check: func(t *testing.T, _ string) {
				assert.Equal(t, selfHash, fileHash(t, self), "the host binary (tether/test) must be unchanged")
				assert.Equal(t, shHash, fileHash(t, "/usr/bin/dash"))
			}},
		{name: "leaked fds and cwd (CVE-2024-21626)", script: "echo fds=$(ls /proc/self/fd | sort -n | tr '\\n' ' '); ls -l /proc/self/fd; echo cwd=$(readlink /proc/self/cwd); echo init-cwd=$(readlink /proc/1/cwd)",
			want: []string{"fds=0 1 2 3\n"}, check: func(t *testing.T, out string) {
				assert.Contains(t, out, "cwd="+ws+"\n")
				assert.NotContains(t, out, "/sys/fs/cgroup")
				assert.NotContains(t, out, "/run/")
			}},
		// A 32-bit syscall (int 0x80, getpid) from a 64-bit process: the
		// filter lists only the native ABI, so the caller is killed.
		{name: "32-bit syscall ABI", seccomp: true, script: py(`import ctypes, mmap
m = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
m.write(bytes([0xb8, 0x14, 0, 0, 0, 0xcd, 0x80, 0xc3]))
f = ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(m)))
print("int80 returned", f())`) + "; echo status=$?", want: []string{"status=159"}, check: func(t *testing.T, out string) {
			assert.NotContains(t, out, "int80 returned")
		}},
		{name: "keyctl", seccomp: true, script: sysc(250, "0", "-3", "0"), want: []string{"errno=1"}},
		{name: "bpf", script: sysc(321, "0", "0", "0"), want: []string{"errno=1"}},
		{name: "io_uring", seccomp: true, script: sysc(425, "8", "0"), want: []string{"ret=-1 errno=1"}},
		// Docker's profile allows unshare/clone of namespaces only with
		// CAP_SYS_ADMIN, so a nested user namespace is refused.
		{name: "nested user namespace", seccomp: true, script: "unshare -U -r id", want: denied},
		{name: "hostname change", script: "hostname; hostname evil-host", want: append([]string{"must be root"}, denied...), check: func(t *testing.T, out string) {
			assert.Contains(t, out, DefaultHostname+"\n", "uts namespace with its own name")
			now, _ := os.Hostname()
			assert.Equal(t, hostname, now)
		}},
		{name: "clock change", script: "date -s '2001-01-01 00:00:00'", want: denied},
		{name: "kernel log", script: "dmesg", want: denied},
	}

	cfg := Config{Workspace: ws}
	for _, e := range escapes {
		t.Run(e.name, func(t *testing.T) {
			if e.seccomp && !seccompAvailable {
				t.Skip("contained by the seccomp filter; build with -tags seccomp")
			}
			_, out := run(t, r, cfg, e.script)
			t.Logf("output:\n%s", out)
			found := false
			for _, w := range e.want {
				found = found || strings.Contains(out, w)
			}
			assert.True(t, found, "expected one of %q in output", e.want)
			for _, bad := range []string{secret + "\n", "CONNECTED", shadowRoot} {
				assert.NotContains(t, out, bad)
			}
			if e.check != nil {
				e.check(t, out)
			}
		})
	}
	assert.Zero(t, accepted.Load(), "the host listener must never see a connection")
	assert.True(t, pidAlive(hostPid))
}

// TestIsolationSeesOnlyItsOwnProcesses checks the pid namespace from inside.
func TestIsolationSeesOnlyItsOwnProcesses(t *testing.T) {
	r := newTestRunner(t)
	_, out := run(t, r, Config{}, "sleep 5 & ls /proc | grep '^[0-9]' | sort -n | tr '\\n' ' '; kill $!")
	pids := strings.Fields(out)
	sort.Strings(pids)
	// sh (1), the background sleep, ls/grep/sort/tr of the pipeline.
	assert.LessOrEqual(t, len(pids), 6, "pids: %v", pids)
	assert.Contains(t, pids, "1")
	for _, p := range pids {
		assert.Regexp(t, `^[0-9]+$`, p)
	}
}
