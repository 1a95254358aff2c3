package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tether-dev/tether/rootfs"
)

// TestExecGateSymlinkSwapRace attacks the exec gate's check-to-exec
// window (E1): a process of the sandbox swaps a symlink, without an exec
// of its own, between an allowed program and a refused one while the
// shell executes it 2,000 times. The gate resolves the symlink when it
// checks, the kernel again when it runs it: before Config.NoExec, the
// refused program ran in a few of every thousand execs (8 of 1,000 in
// session 12's red team). The refused "reboot" is a copy of touch(1) in a
// read-only system directory of the test's own; it leaves ws/ran-N
// behind when it really runs. With the file mounted noexec the kernel
// refuses every exec of it (EACCES), whatever the gate decided; checked
// from the host after the sandbox is gone.
func TestExecGateSymlinkSwapRace(t *testing.T) {
	r := newTestRunner(t)
	ws := t.TempDir()
	sys, err := os.MkdirTemp("", "tether-sys-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(sys) })
	require.NoError(t, os.Chmod(sys, 0o755))
	touch, err := os.ReadFile("/usr/bin/touch")
	require.NoError(t, err)
	reboot := filepath.Join(sys, "reboot")
	require.NoError(t, os.WriteFile(reboot, touch, 0o755))

	layout, err := rootfs.HostLayout()
	require.NoError(t, err)
	layout.Binds = append(layout.Binds, sys)
	cfg := Config{Rootfs: layout, Workspace: ws, NoExec: []string{reboot},
		Env: []string{"PATH=/usr/bin:/bin"}}
	g := newRefuse("reboot")
	r.ExecGate = g.gate

	const execs = 2000
	// The swapper renames prepared links over x: no exec, so it swaps
	// as fast as the kernel lets it while the shell loop waits on the gate.
	swapper := `import os
os.chdir(` + strconv.Quote(ws) + `)
a, b = "/usr/bin/true", ` + strconv.Quote(reboot) + `
while True:
    for t in (a, b):
        try:
            os.unlink("x.new")
        except FileNotFoundError:
            pass
        os.symlink(t, "x.new")
        os.rename("x.new", "x")
`
	require.NoError(t, os.WriteFile(filepath.Join(ws, "swap.py"), []byte(swapper), 0o644))
	script := `ln -s /usr/bin/true x
python3 swap.py & swap=$!
i=0; denied=0
while [ $i -lt ` + strconv.Itoa(execs) + ` ]; do
	i=$((i+1))
	./x ran-$i 2>>errs
done
kill $swap
echo "done=$i"
echo "eacces=$(grep -c 'Permission denied' errs)"
echo "eperm=$(grep -c 'Operation not permitted' errs)"
`
	res, out := runWithin(t, r, cfg, script, 5*time.Minute)
	t.Logf("%s", out)
	require.Contains(t, out, "done="+strconv.Itoa(execs))

	// From the host: no exec of the refused program ran.
	ents, err := os.ReadDir(ws)
	require.NoError(t, err)
	var ran []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "ran-") {
			ran = append(ran, e.Name())
		}
	}
	assert.Empty(t, ran, "the refused program ran %d times in %d execs", len(ran), execs)
	// The swap was live: the gate saw the refused program by its name.
	assert.NotEmpty(t, res.ExecBlocked, "the gate never saw the swapped link: the race was not run")
	// And the file is not executable in the sandbox at all.
	_, out = run(t, r, cfg, reboot+" "+filepath.Join(ws, "direct")+"; echo rc=$?")
	assert.NoFileExists(t, filepath.Join(ws, "direct"))
	assert.Contains(t, out, "rc=126", out)
}

// TestExecGateLongArgv (E4): an argv over a terminal call's 128 KiB (a
// long linker line: 100,000 arguments, about 1.4 MiB with their
// pointers) is read whole and let through; one over the kernel's default
// ARG_MAX, which a process that raised its stack limit may pass, is
// refused by the gate, where the kernel alone runs it.
func TestExecGateLongArgv(t *testing.T) {
	r := newTestRunner(t)
	ws := t.TempDir()
	g := newRefuse("reboot")
	script := `set -- $(seq 1 100000); /bin/true "$@"; echo long=$?
ulimit -s unlimited && set -- $(seq 1 300000) && /bin/true "$@"; echo over=$?`
	cfg := Config{Workspace: ws, Env: []string{"PATH=/usr/bin:/bin"}}

	r.ExecGate = nil
	_, out := run(t, r, cfg, script)
	require.Contains(t, out, "long=0", "the kernel runs both: %s", out)
	require.Contains(t, out, "over=0", "the kernel runs both: %s", out)

	r.ExecGate = g.gate
	res, out := run(t, r, cfg, script)
	assert.Contains(t, out, "long=0", "an argv over 128 KiB, under ARG_MAX, runs")
	assert.Contains(t, out, "over=126", "an argv over ARG_MAX is refused")
	var long *ExecEvent
	g.mu.Lock()
	for i, ev := range g.seen {
		if len(ev.Argv) == 100001 {
			long = &g.seen[i]
		}
	}
	g.mu.Unlock()
	require.NotNil(t, long, "the gate saw the long argv whole")
	assert.Equal(t, "100000", long.Argv[100000])
	require.Len(t, res.ExecBlocked, 1, "%v", res.ExecBlocked)
	assert.Contains(t, res.ExecBlocked[0].Reason, "bytes in all")
	assert.Less(t, len(strings.Join(res.ExecBlocked[0].Argv, " ")), 32<<10, "the record keeps the argv's first arguments")
	for _, ev := range res.Execs {
		assert.Less(t, len(strings.Join(ev.Argv, " ")), 32<<10, "the record keeps the argv's first arguments")
	}
}

// TestExecGateMultiCallSwapRace attacks E1 through multi-call programs:
// Debian's reboot, halt, poweroff and shutdown are symlinks to systemctl,
// which acts as reboot when its argv[0]'s last element contains
// "reboot", and busybox acts as any applet its argv[0] (or argv[1], after
// a name starting with "busybox") names. Such a file is no refused
// program the kernel could refuse (Config.NoExec), so the gate must rate
// the exec by the vector the program receives, whatever file it is. The
// stand-in for systemctl, bind-mounted over /usr/bin/systemctl inside the
// sandbox, is a C program that chooses as systemd's invoked_as does and
// leaves ws/ran-TOKEN-ARG behind when it would have powered off. Attacks:
// a link named xreboot swapped 1,000 times between /usr/bin/true and
// /usr/bin/systemctl while the shell executes it; the loader's --argv0; a
// copy named sc-poweroff; copies of busybox run as busybox-x and "-touch"
// (touch is refused for this test). Checked from the host after the
// sandbox is gone: nothing ran. Before the gate read argv[0] as the
// multi-call programs do, every attack left its marker.
func TestExecGateMultiCallSwapRace(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("needs gcc for the systemctl stand-in")
	}
	if _, err := os.Stat("/bin/busybox"); err != nil {
		t.Skip("needs /bin/busybox")
	}
	r := newTestRunner(t)
	ws := t.TempDir()
	dir := t.TempDir()
	src := filepath.Join(dir, "standin.c")
	standin := filepath.Join(dir, "systemctl")
	require.NoError(t, os.WriteFile(src, []byte(`#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char **argv) {
	const char *tok[] = {"halt", "poweroff", "reboot", "shutdown", 0};
	char *last = strrchr(argv[0], '/');
	last = last ? last + 1 : argv[0];
	for (int i = 0; tok[i]; i++) {
		if (strstr(last, tok[i])) {
			char p[4096];
			snprintf(p, sizeof p, "%s/ran-%s-%s", `+strconv.Quote(ws)+`, tok[i], argc > 1 ? argv[1] : "");
			close(open(p, O_CREAT | O_WRONLY, 0644));
			return 0;
		}
	}
	return 0;
}
`), 0o644))
	built, err := exec.Command("gcc", "-O2", "-o", standin, src).CombinedOutput()
	require.NoError(t, err, "%s", built)

	cfg := Config{Workspace: ws, Env: []string{"PATH=/usr/bin:/bin"},
		Binds: []Bind{{Source: standin, Destination: "/usr/bin/systemctl", ReadOnly: true}}}
	g := newRefuse("reboot", "halt", "poweroff", "shutdown", "touch")
	r.ExecGate = g.gate

	const execs = 1000
	swapper := `import os
os.chdir(` + strconv.Quote(ws) + `)
while True:
    for t in ("/usr/bin/true", "/usr/bin/systemctl"):
        try:
            os.unlink("x.new")
        except FileNotFoundError:
            pass
        os.symlink(t, "x.new")
        os.rename("x.new", "xreboot")
`
	require.NoError(t, os.WriteFile(filepath.Join(ws, "swap.py"), []byte(swapper), 0o644))
	script := `ln -s /usr/bin/true xreboot
python3 swap.py & swap=$!
i=0
while [ $i -lt ` + strconv.Itoa(execs) + ` ]; do
	i=$((i+1))
	./xreboot $i 2>/dev/null
done
kill $swap
echo "done=$i"
/lib64/ld-linux-x86-64.so.2 --argv0 reboot /usr/bin/systemctl ldso 2>/dev/null; echo ldso=$?
cp /usr/bin/systemctl sc-poweroff && ./sc-poweroff copy 2>/dev/null; echo copy=$?
cp /bin/busybox busybox-x && ./busybox-x touch bb-mode 2>/dev/null; echo bbmode=$?
python3 -c 'import os; os.execv("./busybox-x", ["-touch", "bb-dash"])' 2>/dev/null; echo bbdash=$?
`
	res, out := runWithin(t, r, cfg, script, 5*time.Minute)
	t.Logf("%s", out)
	require.Contains(t, out, "done="+strconv.Itoa(execs))

	// From the host: the stand-in never acted as a power program, and no
	// busybox applet refused by name ran.
	ents, err := os.ReadDir(ws)
	require.NoError(t, err)
	var ran []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "ran-") || strings.HasPrefix(e.Name(), "bb-") {
			ran = append(ran, e.Name())
		}
	}
	assert.Empty(t, ran, "refused programs ran through multi-call binaries (%d)", len(ran))
	for _, want := range []string{"ldso=126", "copy=126", "bbmode=126"} {
		assert.Contains(t, out, want, "refused at the gate (EPERM: the shell's 126)")
	}
	assert.Contains(t, out, "bbdash=1", "python's execv fails (EPERM)")
	// The swap was live: the gate saw systemctl behind the link.
	sawSystemctl := false
	g.mu.Lock()
	for _, ev := range g.seen {
		if ev.Path == "./xreboot" && slices.ContainsFunc(ev.Runs, func(v []string) bool { return len(v) > 0 && v[0] == "systemctl" }) {
			sawSystemctl = true
		}
	}
	g.mu.Unlock()
	assert.True(t, sawSystemctl, "the gate never saw systemctl behind the link: the race was not run")
	assert.NotEmpty(t, res.ExecBlocked)
}

// TestExecGateArgv0RewriteRace (F6 of session 14's red team): a thread
// rewrites argv[0] in memory between the gate's read and the kernel's,
// flipping an allowed name and "reboot" while the main thread vforks and
// execs the multi-call program 500 times; before the floor took in the
// file behind a refused link, the stand-in acted as reboot 13 times in
// 500. The refused "reboot" is a link to the stand-in "systemctl" (as on
// Debian) in a read-only system directory of the test's own; the stand-in
// leaves ws/ran-reboot-N behind when it acts as reboot. With Config.NoExec
// naming only the link, the kernel refuses every exec of the stand-in;
// checked from the host after the sandbox is gone.
func TestExecGateArgv0RewriteRace(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("needs gcc for the stand-in and the racer")
	}
	r := newTestRunner(t)
	ws := t.TempDir()
	sys, err := os.MkdirTemp("", "tether-sys-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(sys) })
	require.NoError(t, os.Chmod(sys, 0o755))
	standin := filepath.Join(sys, "systemctl")
	cc := func(out, src string) {
		t.Helper()
		require.NoError(t, os.WriteFile(out+".c", []byte(src), 0o644))
		built, err := exec.Command("gcc", "-O0", "-pthread", "-o", out, out+".c").CombinedOutput()
		require.NoError(t, err, "%s", built)
	}
	cc(standin, `#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char **argv) {
	char *last = strrchr(argv[0], '/');
	last = last ? last + 1 : argv[0];
	if (strstr(last, "reboot")) {
		char p[4096];
		snprintf(p, sizeof p, "%s/ran-reboot-%s", `+strconv.Quote(ws)+`, argc > 1 ? argv[1] : "");
		close(open(p, O_CREAT | O_WRONLY, 0644));
	}
	return 0;
}
`)
	require.NoError(t, os.Symlink("systemctl", filepath.Join(sys, "reboot")))
	cc(filepath.Join(ws, "race"), `#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
static volatile char buf[16] = "xtrue";
static volatile int stop;
static void spin(int n) { for (volatile int i = 0; i < n; i++); }
static void *flip(void *a) {
	unsigned r = 1;
	while (!stop) {
		r = r * 1103515245 + 12345;
		memcpy((char *)buf, "reboot", 7); spin(1000 + (r >> 16) % 40000);
		memcpy((char *)buf, "xtrue\0", 7); spin(1000 + (r >> 8) % 40000);
	}
	return 0;
}
int main(void) {
	pthread_t t; pthread_create(&t, 0, flip, 0);
	int refused = 0;
	for (int i = 0; i < 500; i++) {
		char n[16]; snprintf(n, sizeof n, "%d", i);
		char *argv[] = {(char *)buf, n, 0}; char *envp[] = {0};
		pid_t p = vfork();
		if (p == 0) { execve(`+strconv.Quote(standin)+`, argv, envp); _exit(126); }
		int st; waitpid(p, &st, 0);
		if (WIFEXITED(st) && WEXITSTATUS(st) == 126) refused++;
	}
	stop = 1; pthread_join(t, 0);
	printf("refused=%d\n", refused);
	return 0;
}
`)
	layout, err := rootfs.HostLayout()
	require.NoError(t, err)
	layout.Binds = append(layout.Binds, sys)
	cfg := Config{Rootfs: layout, Workspace: ws, NoExec: []string{filepath.Join(sys, "reboot")},
		Env: []string{"PATH=/usr/bin:/bin"}, Limits: Limits{Timeout: 5 * time.Minute}}
	r.ExecGate = newRefuse("reboot").gate
	_, out := runWithin(t, r, cfg, "cd "+ws+" && ./race", 5*time.Minute)
	t.Logf("%s", out)
	require.Contains(t, out, "refused=")

	// From the host: the stand-in never acted as reboot.
	ents, err := os.ReadDir(ws)
	require.NoError(t, err)
	var ran []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "ran-") {
			ran = append(ran, e.Name())
		}
	}
	assert.Empty(t, ran, "the multi-call program acted as reboot %d times in 500 execs", len(ran))
	assert.Contains(t, out, "refused=500", "the kernel refuses every exec of the multi-call file")
}
