package sandbox

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tether-dev/tether/internal/testenv"
	"github.com/tether-dev/tether/sandbox/seccompexec"
)

// The creation gate performs the calls it lets through in the sandbox's
// helper (creator_linux.go): no name it checked is read again from the
// caller's memory. These tests attack that from inside the sandbox and
// check from the host once the sandbox is gone.

// createMode runs a script in one kind of sandbox with workspace ws.
type createMode struct {
	name string
	run  func(t *testing.T, ws, script string) (*Result, string)
}

func createModes() []createMode {
	oneShot := func(seccomp SeccompMode) func(t *testing.T, ws, script string) (*Result, string) {
		return func(t *testing.T, ws, script string) (*Result, string) {
			r := newTestRunner(t)
			return run(t, r, Config{Workspace: ws, Seccomp: seccomp, Limits: Limits{Pids: 128, Timeout: testenv.Scaled(120 * time.Second)}}, script)
		}
	}
	return []createMode{
		{"one-shot", oneShot("")},
		{"seccomp-off", oneShot(SeccompOff)},
		{"session", func(t *testing.T, ws, script string) (*Result, string) {
			m := newTestSessions(t)
			spec := testSpec()
			spec.Config.Workspace = ws
			s, err := m.Open(t.Context(), "default", "create", spec)
			require.NoError(t, err)
			var out bytes.Buffer
			ctx, cancel := context.WithTimeout(t.Context(), testenv.Scaled(120*time.Second))
			defer cancel()
			res, err := s.Run(ctx, Command{Shell: script, Stdout: &out, Stderr: &out})
			require.NoError(t, err, out.String())
			require.NoError(t, m.CloseSession("default", "create"))
			return res, out.String()
		}},
		{"pooled", func(t *testing.T, ws, script string) (*Result, string) {
			ps := newTestPools(t)
			p := PoolSpec{Profile: "create", Size: 1, Spec: SessionSpec{Config: Config{Workspace: ws, Limits: Limits{Pids: 128}}}}
			ps.Prepare(p)
			res, out := pooledRun(t, ps, p, script)
			require.NoError(t, ps.Close())
			return res, out
		}},
	}
}

// racerSource swaps one byte of each name between a harmless name and a
// refused one (r/xgit, r/.git; r/xEAD, r/HEAD) in a second thread while
// the main thread creates by that name: each of its five calls up to n
// times (n/10 for all but the first), within its share of a deadline of
// argv[2] seconds, so that an emulated CPU ends it in time. It counts the
// refused names that came to exist and each call's attempts.
//
// On one CPU the swapping thread also yields, once with the names refused
// and once harmless, as an attacker there would: the supervisor reads the
// name only while that thread is off the CPU, and under TCG a thread is
// preempted only between translated blocks, here always at the top of the
// loop, where the names are harmless (no refusal was ever seen on the one
// vCPU of the guest). With more CPUs it only swaps, as fast as it can: a
// yield there (on a loaded host, a long wait with the names refused) left
// few harmless creations (1 of 2,800 in a session).
const racerSource = `#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char git[] = "r/xgit", head[] = "r/xEAD";
static int one_cpu;
static void swap(char g, char h) {
	__atomic_store_n(&git[2], g, __ATOMIC_RELAXED);
	__atomic_store_n(&head[2], h, __ATOMIC_RELAXED);
}
static void *flip(void *arg) {
	(void)arg;
	for (;;) {
		for (int i = 0; i < 1024; i++) {
			swap('.', 'H');
			swap('x', 'x');
		}
		if (one_cpu) {
			swap('.', 'H');
			sched_yield();
			swap('x', 'x');
			sched_yield();
		}
	}
	return NULL;
}
static int won(void) {
	struct stat st;
	return lstat("r/.git", &st) == 0 || lstat("r/HEAD", &st) == 0;
}
static double now(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}
int main(int argc, char **argv) {
	int n = atoi(argv[1]), wins = 0, made = 0, tries[5] = {0};
	double start = now(), budget = atof(argv[2]);
	pthread_t t;
	cpu_set_t cpus;
	one_cpu = sched_getaffinity(0, sizeof cpus, &cpus) == 0 && CPU_COUNT(&cpus) == 1;
	mkdir("r", 0755);
	close(open("r/src", O_CREAT | O_WRONLY, 0644));
	pthread_create(&t, NULL, flip, NULL);
	for (int op = 0; op < 5; op++) {
		int times = op == 0 ? n : n / 10;
		/* Half of the time for the first call, an eighth for each other. */
		double until = start + budget * (op == 0 ? 0.5 : 0.5 + op / 8.0);
		for (int i = 0; i < times && (i % 64 || now() < until); i++) {
			int r = -1;
			switch (op) {
			case 0: r = mkdir(git, 0755); if (r == 0) rmdir("r/xgit"); break;
			case 1: r = open(git, O_CREAT | O_WRONLY, 0644); if (r >= 0) { close(r); unlink("r/xgit"); } break;
			case 2: r = symlink("src", git); if (r == 0) unlink("r/xgit"); break;
			case 3: r = link("r/src", head); if (r == 0) unlink("r/xEAD"); break;
			case 4: r = mkdir(head, 0755); if (r == 0) rmdir("r/xEAD"); break;
			}
			tries[op]++;
			made += r >= 0;
			if (won()) wins++;
		}
	}
	printf("made=%d won=%d tries=%d,%d,%d,%d,%d\n", made, wins, tries[0], tries[1], tries[2], tries[3], tries[4]);
	return 0;
}
`

// buildRacer compiles racerSource into dir.
func buildRacer(t *testing.T, dir string) string {
	t.Helper()
	src := filepath.Join(t.TempDir(), "racer.c")
	require.NoError(t, os.WriteFile(src, []byte(racerSource), 0o644))
	bin := filepath.Join(dir, "racer")
	out, err := exec.Command("gcc", "-O2", "-pthread", "-o", bin, src).CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
}

// TestCreateGateRace: a thread that swaps a name between a harmless one
// and .git (or HEAD) while another creates by it made 37 .git of 20,000
// mkdirs when the kernel re-read the name. Now it makes none: 20,000
// mkdirs and 2,000 each of open(O_CREAT), symlink, link and mkdir of HEAD
// in a one-shot sandbox (a tenth of that in a session), fewer where they
// do not fit in the racer's 30 s (TCG), checked from the host after the
// sandbox is gone.
func TestCreateGateRace(t *testing.T) {
	for _, m := range createModes() {
		if m.name == "pooled" || m.name == "seccomp-off" {
			continue // the same helpers as session and one-shot
		}
		t.Run(m.name, func(t *testing.T) {
			ws, markers := poisonWorkspace(t, true)
			buildRacer(t, ws)
			chownWorkspace(t, ws)
			// 20,000 mkdirs in one-shot sandboxes; the session's helper
			// is the same code, asked by the supervisor's filter.
			n := 20000
			if m.name == "session" {
				n = 2000
			}
			res, out := m.run(t, ws, "./racer "+strconv.Itoa(n)+" 30")
			t.Log(out)
			re := regexp.MustCompile(`made=(\d+) won=(\d+) tries=(\d+),(\d+),(\d+),(\d+),(\d+)`).FindStringSubmatch(out)
			require.NotNil(t, re, out)
			made, _ := strconv.Atoi(re[1])
			for op, tries := range re[3:] {
				assert.NotEqual(t, "0", tries, "call %d of the racer was never tried", op)
			}
			assert.Positive(t, made, "the harmless names were created")
			assert.Equal(t, "0", re[2], "a swapped name was created")
			assertNoNewRepo(t, ws, ".git")
			assertHostClean(t, ws, markers, true)
			if len(res.CreateBlocked) == 0 && runtime.NumCPU() == 1 && !t.Failed() {
				// The race needs the swapping thread to run while the
				// supervisor reads the name; on one CPU that is up to
				// the scheduler (and under TCG never happened).
				t.Skipf("one CPU: no refused name was seen in %s attempts, so this run did not race", strings.Join(re[3:], "+"))
			}
			assert.NotEmpty(t, res.CreateBlocked, "the refused names were refused")
		})
	}
}

// TestCreateGateOrdinary: what the helper creates for a caller is what the
// kernel would have made: git work in a frozen repository, tar x, mkdir -p,
// an editor's rename into place, an O_TMPFILE file (unnamed: not
// notified; linking it is TestCreateGateLinkDescriptor's), mkfifo, names relative to a working directory, to a directory
// descriptor, through a symlinked parent and through /proc/self/fd, with
// the caller's umask and mode, owned by the workspace's owner on the host;
// and a caller's own failures (EEXIST, ENOENT, EBADF) are its own. In
// every kind of sandbox.
func TestCreateGateOrdinary(t *testing.T) {
	script := `set -e
umask 027
git -c user.name=t -c user.email=t@t checkout -q -b topic
echo two > two; git add two; git -c user.name=t -c user.email=t@t commit -q -m two
echo dirty >> README; git stash -q; git stash pop -q; git checkout -q README
mkdir -p deep/er/est; echo x > deep/er/est/f
mkdir src; echo a > src/a; echo b > src/b; tar cf /tmp/t.tar -C src .; mkdir untar; tar xf /tmp/t.tar -C untar
cd deep; mkdir rel; echo r > rel/f; cd ..
ln -s deep lnk; mkdir lnk/via-link; echo l > lnk/via-link/f
mkfifo fifo
python3 - <<'PY'
import errno, os
fd = os.open("deep", os.O_RDONLY | os.O_DIRECTORY)
os.mkdir("at-dirfd", dir_fd=fd)
os.mkdir("/proc/self/fd/%d/via-proc" % fd)
with open("editor.tmp", "w") as f: f.write("new\n")
os.replace("editor.tmp", "edited")
t = os.open(".", os.O_TMPFILE | os.O_WRONLY, 0o640)
print("tmpfile", os.write(t, b"tmp\n"))
os.close(os.open("mode600", os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o600))
for f, want in ((lambda: os.mkdir("deep"), errno.EEXIST), (lambda: os.mkdir("no/such"), errno.ENOENT),
                (lambda: os.mkdir("x", dir_fd=999), errno.EBADF), (lambda: os.open("deep", os.O_CREAT | os.O_EXCL), errno.EEXIST)):
    try:
        f(); print("no error")
    except OSError as e:
        print("errno", errno.errorcode[e.errno], "want", errno.errorcode[want])
fl = os.open("flags", os.O_CREAT | os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC, 0o644)
import fcntl
print("cloexec", bool(fcntl.fcntl(fl, fcntl.F_GETFD) & fcntl.FD_CLOEXEC), "append", bool(fcntl.fcntl(fl, fcntl.F_GETFL) & os.O_APPEND))
PY
echo done`
	for _, m := range createModes() {
		t.Run(m.name, func(t *testing.T) {
			ws, markers := poisonWorkspace(t, true)
			res, out := m.run(t, ws, script)
			require.Contains(t, out, "done\n", out)
			assert.Empty(t, res.CreateBlocked)
			assert.NotContains(t, res.NotEnforced, "nested-repos")
			for _, l := range []string{"errno EEXIST want EEXIST", "errno ENOENT want ENOENT", "errno EBADF want EBADF", "cloexec True append True", "tmpfile 4"} {
				assert.Contains(t, out, l)
			}
			assert.NotContains(t, out, "no error")
			assert.Contains(t, hostGit(t, ws, "log", "--oneline", "topic"), "two")
			for f, want := range map[string]os.FileMode{
				"two": 0o640, "deep/er/est/f": 0o640, "deep/er/est": 0o750 | os.ModeDir, "untar/a": 0o640,
				"deep/rel/f": 0o640, "deep/via-link/f": 0o640, "deep/at-dirfd": 0o750 | os.ModeDir,
				"deep/via-proc": 0o750 | os.ModeDir, "edited": 0o640, "mode600": 0o600,
				"fifo": 0o640 | os.ModeNamedPipe, "lnk": 0o777 | os.ModeSymlink,
			} {
				fi, err := os.Lstat(filepath.Join(ws, f))
				if !assert.NoError(t, err, f) {
					continue
				}
				assert.Equal(t, want, fi.Mode(), "%s", f)
				st := fi.Sys().(*syscall.Stat_t)
				assert.Equal(t, [2]uint32{wsOwner, wsOwner}, [2]uint32{st.Uid, st.Gid}, "%s belongs to the workspace's owner", f)
			}
			assertNoNewRepo(t, ws, ".git")
			assertHostClean(t, ws, markers, true)
		})
	}
}

// TestCreateGateActsAsCaller: the helper never has more than its caller.
// A caller that dropped CAP_DAC_OVERRIDE cannot create in a directory it
// may not write; a caller cannot chroot (no CAP_SYS_CHROOT); a killed
// helper gets EPERM, reported; nothing of the sandbox can read or write
// the helper's memory; openat2 and io_uring, whose names no filter sees,
// fail (ENOSYS, EPERM) even without the sandbox's own filter.
func TestCreateGateActsAsCaller(t *testing.T) {
	script := `mkdir ro jail; chmod 555 ro
python3 - <<'PY'
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
def call(what, f):
    r = f()
    print(what, r, errno.errorcode.get(ctypes.get_errno(), "0") if r < 0 else "ok")
call("openat2", lambda: libc.syscall(437, -100, b"o2", None, 24))
call("io_uring_setup", lambda: libc.syscall(425, 8, None))
os.mkdir("ro/as-root")
hdr = (ctypes.c_uint32 * 2)(0x20080522, 0)
data = (ctypes.c_uint32 * 6)()
assert libc.capget(hdr, data) == 0
data[0] &= ~((1 << 1) | (1 << 2))  # effective: CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH
assert libc.capset(hdr, data) == 0
try:
    os.mkdir("ro/without-dac"); print("without-dac made")
except OSError as e:
    print("without-dac", errno.errorcode[e.errno])
PY
python3 -c 'import os
try:
    os.chroot("jail")
except OSError as e:
    print("chroot", e.strerror); raise SystemExit
os.chdir("/")
try:
    os.mkdir("in-jail"); print("jail made")
except OSError as e:
    print("jail", e.strerror)'
h=$(for p in /proc/[0-9]*; do cat $p/environ >/dev/null 2>&1 || echo ${p#/proc/}; done | head -1)
python3 -c "
try:
    open('/proc/$h/mem', 'rb'); print('mem opened')
except OSError as e:
    print('mem', e.strerror)"
kill -9 $h; sleep 0.2
mkdir after-kill; echo after-kill=$?`
	for _, m := range createModes()[:2] {
		t.Run(m.name, func(t *testing.T) {
			ws, markers := poisonWorkspace(t, true)
			res, out := m.run(t, ws, script)
			t.Log(out)
			assert.Contains(t, out, "openat2 -1 ENOSYS")
			assert.Contains(t, out, "io_uring_setup -1 EPERM")
			assert.Contains(t, out, "without-dac EACCES")
			assert.Contains(t, out, "chroot Operation not permitted", "no CAP_SYS_CHROOT")
			assert.Contains(t, out, "mem Permission denied")
			assert.Contains(t, out, "after-kill=1")
			assert.DirExists(t, filepath.Join(ws, "ro/as-root"))
			for _, f := range []string{"o2", "ro/without-dac", "jail/in-jail", "after-kill"} {
				assert.NoFileExists(t, filepath.Join(ws, f))
			}
			var reasons []string
			for _, b := range res.CreateBlocked {
				reasons = append(reasons, b.Reason)
			}
			assert.Contains(t, strings.Join(reasons, "\n"), "creation helper", "the killed helper is reported")
			assertNoNewRepo(t, ws, ".git")
			assertHostClean(t, ws, markers, true)
		})
	}
}

// TestCreateCallsMatchFilter: the trampoline's filter notifies exactly
// the system calls of the creation gate's table, open-like ones when
// their flags have O_CREAT, and libcontainer's rules name them alike.
func TestCreateCallsMatchFilter(t *testing.T) {
	got := map[int32]int{}
	for _, s := range seccompexec.CreateSyscalls() {
		got[int32(s.Nr)] = s.FlagsArg
	}
	want := map[int32]int{}
	for nr, c := range createCalls {
		want[nr] = c.creating
		named, ok := createCallNamed(c.name)
		assert.True(t, ok && named.kind == c.kind && named.creating == c.creating, "%s is found by its name", c.name)
	}
	assert.Equal(t, want, got)
}

// signalledSource creates and removes names n times while a timer
// interrupts it every us µs (SA_RESTART: the kernel restarts a call a
// signal interrupted), and counts calls that failed or opens whose
// descriptor is not the file.
const signalledSource = `#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

static volatile long ticks;
static void tick(int sig) { (void)sig; ticks++; }
int main(int argc, char **argv) {
	int n = atoi(argv[1]), us = atoi(argv[2]), failed = 0;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = tick;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = {{0, us}, {0, us}};
	setitimer(ITIMER_REAL, &it, NULL);
	for (int i = 0; i < n; i++) {
		if (mkdir("d", 0755) < 0) { failed++; fprintf(stderr, "mkdir: %s\n", strerror(errno)); }
		rmdir("d");
		int fd = open("lock", O_CREAT | O_EXCL | O_WRONLY, 0644);
		struct stat st;
		if (fd < 0) { failed++; fprintf(stderr, "open: %s\n", strerror(errno)); }
		else if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) { failed++; fprintf(stderr, "open gave %d: not the file\n", fd); }
		close(fd);
		unlink("lock");
	}
	printf("failed=%d ticks=%ld\n", failed, ticks);
	return 0;
}
`

// TestCreateGateSignalled: a call interrupted by a signal after the helper
// performed it is restarted by the kernel; the restart gets the first
// result instead of a second effect (EEXIST from mkdir or
// open(O_EXCL), which would fail git's lock files), with or without
// WAIT_KILLABLE_RECV on the listener (one-shot: the trampoline's filter
// has it; session: libcontainer's has not).
func TestCreateGateSignalled(t *testing.T) {
	for _, m := range createModes() {
		if m.name != "one-shot" && m.name != "session" {
			continue
		}
		t.Run(m.name, func(t *testing.T) {
			ws, _ := poisonWorkspace(t, false)
			src := filepath.Join(t.TempDir(), "signalled.c")
			require.NoError(t, os.WriteFile(src, []byte(signalledSource), 0o644))
			out, err := exec.Command("gcc", "-O2", "-o", filepath.Join(ws, "signalled"), src).CombinedOutput()
			require.NoError(t, err, "%s", out)
			chownWorkspace(t, ws)
			// Without WAIT_KILLABLE_RECV a signal every 50 µs interrupts
			// nearly every call before tether answers (the kernel then
			// restarts it: slow, but it never fails).
			args := "600 50"
			if m.name == "session" {
				args = "200 1000"
			}
			_, o := m.run(t, ws, "./signalled "+args)
			t.Log(o)
			assert.Contains(t, o, "failed=0 ")
			assert.Regexp(t, `ticks=[1-9]`, o, "the timer interrupted the calls")
		})
	}
}

// TestCreateGateLinkDescriptor: an O_TMPFILE written and then linked into
// place by its descriptor (linkat AT_EMPTY_PATH, relative to the working
// directory and to a directory descriptor, and through /proc/self/fd and
// /proc/thread-self/fd with AT_SYMLINK_FOLLOW; from a thread that is not
// the group's leader too), as atomic file writers do,
// gets its name in every kind of sandbox, with its content, owned by the
// workspace's owner and without write for others or the group (umask 0,
// mode 0666). A named protected file linked by its descriptor is refused
// as a link by its path is, and so is an O_TMPFILE linked onto a
// protected name; from the host none of those names exists afterwards.
func TestCreateGateLinkDescriptor(t *testing.T) {
	script := `umask 0
python3 - <<'PY'
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, O_TMPFILE = -100, 0o20200000
def linkat(what, *a):
    r = libc.syscall(265, *a)
    print(what, "ok" if r == 0 else "refused: " + os.strerror(ctypes.get_errno()), flush=True)
def tmp(d, data):
    fd = os.open(d, O_TMPFILE | os.O_WRONLY, 0o666)
    os.write(fd, data)
    return fd
linkat("empty", tmp(".", b"by-empty\n"), b"", AT_FDCWD, b"by-empty", 0x1000)
linkat("proc", AT_FDCWD, b"/proc/self/fd/%d" % tmp("sub", b"by-proc\n"), AT_FDCWD, b"sub/by-proc", 0x400)
linkat("thread-self", AT_FDCWD, b"/proc/thread-self/fd/%d" % tmp(".", b"by-thread\n"), AT_FDCWD, b"by-thread", 0x400)
dfd = os.open("sub", os.O_RDONLY | os.O_DIRECTORY)
linkat("dirfd", tmp("sub", b"by-dirfd\n"), b"", dfd, b"by-dirfd", 0x1000)
import threading  # a thread that is not the group's leader
w = threading.Thread(target=lambda: linkat("thread", tmp(".", b"by-thread2\n"), b"", AT_FDCWD, b"by-thread2", 0x1000))
w.start(); w.join()
t = tmp(".", b"planted\n")
linkat("tmp-onto-envrc", t, b"", AT_FDCWD, b"sub/.envrc", 0x1000)
linkat("tmp-onto-envrc-proc", AT_FDCWD, b"/proc/self/fd/%d" % t, AT_FDCWD, b"sub2/.envrc", 0x400)
for name in (".envrc", ".git/config", ".git/HEAD"):
    fd = os.open(name, os.O_RDONLY)
    linkat("named-empty " + name, fd, b"", AT_FDCWD, b"copy-empty", 0x1000)
    linkat("named-proc " + name, AT_FDCWD, b"/proc/self/fd/%d" % fd, AT_FDCWD, b"copy-proc", 0x400)
    linkat("named-path " + name, AT_FDCWD, name.encode(), AT_FDCWD, b"copy-path", 0)
linkat("plain", os.open("README", os.O_RDONLY), b"", AT_FDCWD, b"readme-link", 0x1000)
PY
echo done`
	for _, m := range createModes() {
		t.Run(m.name, func(t *testing.T) {
			ws, markers := poisonWorkspace(t, true)
			require.NoError(t, os.Mkdir(filepath.Join(ws, "sub"), 0o755))
			require.NoError(t, os.Mkdir(filepath.Join(ws, "sub2"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(ws, ".envrc"), []byte("export A=1\n"), 0o644))
			chownWorkspace(t, ws)
			res, out := m.run(t, ws, script)
			t.Log(out)
			require.Contains(t, out, "done\n", out)
			out = "\n" + out
			for _, l := range []string{"empty ok", "proc ok", "thread-self ok", "dirfd ok", "thread ok", "plain ok"} {
				assert.Contains(t, out, "\n"+l+"\n", l)
			}
			for _, l := range []string{"tmp-onto-envrc", "tmp-onto-envrc-proc", "named-empty .envrc", "named-proc .envrc", "named-path .envrc",
				"named-empty .git/config", "named-proc .git/config", "named-path .git/config", "named-empty .git/HEAD", "named-proc .git/HEAD", "named-path .git/HEAD"} {
				assert.Contains(t, out, "\n"+l+" refused: ", l)
			}
			assert.NotEmpty(t, res.CreateBlocked)
			for f, want := range map[string]string{"by-empty": "by-empty\n", "sub/by-proc": "by-proc\n", "by-thread": "by-thread\n", "sub/by-dirfd": "by-dirfd\n", "by-thread2": "by-thread2\n", "readme-link": "hello\n"} {
				fi, err := os.Lstat(filepath.Join(ws, f))
				if !assert.NoError(t, err, f) {
					continue
				}
				data, err := os.ReadFile(filepath.Join(ws, f))
				require.NoError(t, err)
				assert.Equal(t, want, string(data), f)
				if f != "readme-link" {
					assert.Equal(t, os.FileMode(0o644), fi.Mode(), "%s: no write for others or the group", f)
				}
				st := fi.Sys().(*syscall.Stat_t)
				assert.Equal(t, [2]uint32{wsOwner, wsOwner}, [2]uint32{st.Uid, st.Gid}, "%s belongs to the workspace's owner", f)
			}
			for _, f := range []string{"sub/.envrc", "sub2/.envrc", "copy-empty", "copy-proc", "copy-path"} {
				assert.NoFileExists(t, filepath.Join(ws, f))
			}
			assertNoNewRepo(t, ws, ".git")
			assertHostClean(t, ws, markers, true)
		})
	}
}
