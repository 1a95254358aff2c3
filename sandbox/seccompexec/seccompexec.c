// The trampoline half of package seccompexec: see seccompexec.go.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "seccompexec.h"

// report writes msg to the error pipe and ends the process with status,
// without running anything.
static void report(int status, const char *msg)
{
	size_t len = strlen(msg);
	while (len > 0) {
		ssize_t n = write(SECCOMPEXEC_ERR_FD, msg, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		msg += n;
		len -= (size_t)n;
	}
	_exit(status);
}

// errtext is strerror as Go spells it (lower-case first letter), so that
// messages read like those of libcontainer's own exec path.
static const char *errtext(int err, char *buf, size_t size)
{
	snprintf(buf, size, "%s", strerror(err));
	if (buf[0] >= 'A' && buf[0] <= 'Z' && !(buf[1] >= 'A' && buf[1] <= 'Z'))
		buf[0] = (char)(buf[0] - 'A' + 'a');
	return buf;
}

// spec is what the program descriptor holds: the layout is
//   uint32 flags, uint32 count, struct sock_filter[count],
//   then the program's environment, each entry NUL-terminated
// (native byte order, written by sandbox/trampoline_linux.go).
struct spec {
	uint32_t flags;
	int observe; // SECCOMPEXEC_OBSERVE was set (and is cleared from flags)
	struct sock_fprog prog;
	char **env;
};

// read_spec reads and checks the program descriptor. Returns 0 or an
// errno, with why saying what was wrong.
static int read_spec(struct spec *sp, char *why, size_t size)
{
	struct stat st;
	if (fstat(SECCOMPEXEC_PROG_FD, &st) < 0) {
		snprintf(why, size, "reading the filter: fd %d", SECCOMPEXEC_PROG_FD);
		return errno;
	}
	size_t total = (size_t)st.st_size;
	if (total < SECCOMPEXEC_HEADER || total > SECCOMPEXEC_MAX_DATA) {
		snprintf(why, size, "reading the filter: %zu bytes is not a program", total);
		return EINVAL;
	}
	char *buf = malloc(total + 1);
	if (buf == NULL) {
		snprintf(why, size, "reading the filter");
		return ENOMEM;
	}
	size_t got = 0;
	while (got < total) {
		ssize_t n = pread(SECCOMPEXEC_PROG_FD, buf + got, total - got, (off_t)got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			snprintf(why, size, "reading the filter");
			return n < 0 ? errno : EIO;
		}
		got += (size_t)n;
	}
	uint32_t count;
	memcpy(&sp->flags, buf, sizeof sp->flags);
	memcpy(&count, buf + sizeof sp->flags, sizeof count);
	sp->observe = (sp->flags & SECCOMPEXEC_OBSERVE) != 0;
	sp->flags &= ~SECCOMPEXEC_OBSERVE;
	size_t insns = (size_t)count * sizeof(struct sock_filter);
	if (count > BPF_MAXINSNS || insns > total - SECCOMPEXEC_HEADER) {
		snprintf(why, size, "reading the filter: %zu bytes is not a program", total);
		return EINVAL;
	}
	sp->prog.len = (unsigned short)count;
	sp->prog.filter = (struct sock_filter *)(buf + SECCOMPEXEC_HEADER);

	char *env = buf + SECCOMPEXEC_HEADER + insns, *end = buf + total;
	if (env < end && end[-1] != '\0') {
		snprintf(why, size, "reading the environment: not NUL-terminated");
		return EINVAL;
	}
	size_t n = 0;
	for (char *e = env; e < end; e += strlen(e) + 1)
		n++;
	sp->env = calloc(n + 2, sizeof(char *));
	if (sp->env == NULL) {
		snprintf(why, size, "reading the environment");
		return ENOMEM;
	}
	n = 0;
	int home = 0;
	for (char *e = env; e < end; e += strlen(e) + 1) {
		home |= strncmp(e, "HOME=", 5) == 0;
		sp->env[n++] = e;
	}
	// libcontainer sets HOME (the user's home) when the environment it was
	// given has none; that is the trampoline's own.
	const char *own = getenv("HOME");
	if (!home && own != NULL) {
		size_t len = strlen(own);
		char *h = malloc(len + 6);
		if (h == NULL) {
			snprintf(why, size, "reading the environment");
			return ENOMEM;
		}
		memcpy(h, "HOME=", 5);
		memcpy(h + 5, own, len + 1);
		sp->env[n++] = h;
	}
	sp->env[n] = NULL;
	return 0;
}

// load_filter installs the program on this (single-threaded) process.
// Returns 0 or an errno.
static int load_filter(struct spec *sp, char *why, size_t size)
{
	// The filter may only be installed without CAP_SYS_ADMIN under
	// no_new_privs, which libcontainer sets; refuse to go on without it
	// rather than rely on a capability.
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1) {
		snprintf(why, size, "no_new_privs is not set");
		return EPERM;
	}
	if (sp->prog.len == 0)
		return 0; // libcontainer loaded the sandbox's filter
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, sp->flags, &sp->prog) < 0) {
		snprintf(why, size, "seccomp(SECCOMP_SET_MODE_FILTER, %#x)", sp->flags);
		return errno;
	}
	return 0;
}

#if defined(__x86_64__)
#define GATE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define GATE_ARCH AUDIT_ARCH_AARCH64
#else
#error "the exec gate knows no audit architecture for this target"
#endif

// load_gate installs the exec gate's filter and sends its listener to the
// gate socket. execve and execveat of the native ABI wait for tether's
// verdict, and with observe so do open, openat, creat and connect (which
// tether only records); system calls of another ABI (i386's int 0x80, x32)
// fail with EPERM, so no exec slips past through a second system call
// table (the sandbox's own filter kills those callers anyway). The
// sandbox's filter still decides the observed calls: of two filters'
// verdicts the kernel takes the stronger, and an error beats a
// notification. Returns 0 or an errno.
static int load_gate(int observe, char *why, size_t size)
{
	// Without observe the four observed comparisons repeat execve's: the
	// filter is the exec-only one in effect.
	uint32_t open_nr = __NR_execve, openat_nr = __NR_execve, creat_nr = __NR_execve, connect_nr = __NR_execve;
	if (observe) {
#ifdef __NR_open
		open_nr = __NR_open;
#endif
#ifdef __NR_creat
		creat_nr = __NR_creat;
#endif
		openat_nr = __NR_openat;
		connect_nr = __NR_connect;
	}
	struct sock_filter insns[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, GATE_ARCH, 0, 10),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_execve, 7, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_execveat, 6, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, openat_nr, 5, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, open_nr, 4, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, creat_nr, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, connect_nr, 2, 0),
#if defined(__x86_64__)
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 2, 0), // x32
#else
		BPF_JUMP(BPF_JMP | BPF_JA, 0, 0, 0),
#endif
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
	};
	struct sock_fprog prog = {.len = sizeof insns / sizeof insns[0], .filter = insns};
	int listener = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
	if (listener < 0) {
		snprintf(why, size, "installing the exec gate");
		return errno;
	}
	char byte = 'g';
	struct iovec iov = {.iov_base = &byte, .iov_len = 1};
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	memset(&ctl, 0, sizeof ctl);
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof ctl.buf};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &listener, sizeof(int));
	ssize_t n;
	do
		n = sendmsg(SECCOMPEXEC_GATE_FD, &msg, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	int e = errno;
	close(listener);
	close(SECCOMPEXEC_GATE_FD);
	if (n != 1) {
		snprintf(why, size, "handing the exec gate to tether");
		return n < 0 ? e : EIO;
	}
	return 0;
}

// gate_wanted reports whether the gate socket was passed.
static int gate_wanted(void)
{
	struct stat st;
	return fstat(SECCOMPEXEC_GATE_FD, &st) == 0 && S_ISSOCK(st.st_mode);
}

// lookup is getenv over env.
static const char *lookup(char **env, const char *name)
{
	size_t len = strlen(name);
	for (; *env != NULL; env++)
		if (strncmp(*env, name, len) == 0 && (*env)[len] == '=')
			return *env + len + 1;
	return NULL;
}

// executable reports whether path names a file this process may execute,
// as Go's exec.LookPath decides: not a directory, some execute bit, and
// execute access. Returns 0 or an errno.
static int executable(const char *path)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return errno;
	if (S_ISDIR(st.st_mode))
		return EISDIR;
	if ((st.st_mode & 0111) == 0)
		return EACCES;
	if (faccessat(AT_FDCWD, path, X_OK, AT_EACCESS) < 0)
		return errno;
	return 0;
}

// run_program looks up and executes argv[0] with environment env the way
// libcontainer's init does (exec.LookPath over env's $PATH, then execve),
// reporting a failure with the message libcontainer would give. Never
// returns.
static void run_program(char **argv, char **env)
{
	char msg[4352], err[128];
	const char *name = argv[0];
	if (strchr(name, '/') != NULL) {
		int e = executable(name);
		if (e == ENOENT || e == ENOTDIR) {
			snprintf(msg, sizeof msg, "exec: \"%s\": stat %s: %s", name, name, errtext(e, err, sizeof err));
			report(127, msg);
		}
		if (e != 0) {
			snprintf(msg, sizeof msg, "exec: \"%s\": %s", name, errtext(e, err, sizeof err));
			report(126, msg);
		}
		execve(name, argv, env);
		e = errno;
		snprintf(msg, sizeof msg, "exec %s: %s", name, errtext(e, err, sizeof err));
		report(e == ENOENT ? 127 : 126, msg);
	}

	const char *path = lookup(env, "PATH");
	const char *dir = path != NULL ? path : "";
	char full[4096];
	while (path != NULL) {
		const char *end = strchr(dir, ':');
		size_t len = end != NULL ? (size_t)(end - dir) : strlen(dir);
		// An empty entry is the working directory, as in Go and POSIX.
		int n = len == 0 ? snprintf(full, sizeof full, "./%s", name)
		                 : snprintf(full, sizeof full, "%.*s/%s", (int)len, dir, name);
		if (n > 0 && (size_t)n < sizeof full) {
			int e = executable(full);
			if (e == 0 && (len == 0 || dir[0] != '/')) {
				// Go's exec.LookPath (so libcontainer) refuses a program
				// found through a relative $PATH entry (exec.ErrDot).
				snprintf(msg, sizeof msg, "exec: \"%s\": cannot run executable found relative to current directory", name);
				report(126, msg);
			}
			if (e == 0) {
				execve(full, argv, env);
				e = errno;
				snprintf(msg, sizeof msg, "exec %s: %s", full, errtext(e, err, sizeof err));
				report(e == ENOENT ? 127 : 126, msg);
			}
		}
		if (end == NULL)
			break;
		dir = end + 1;
	}
	snprintf(msg, sizeof msg, "exec: \"%s\": executable file not found in $PATH", name);
	report(127, msg);
}

// seccompexec_main is the trampoline: argv is
// [/proc/self/fd/N, SECCOMPEXEC_ARG, program, args...].
static void seccompexec_main(int argc, char **argv)
{
	char why[256], err[128], msg[512];
	// The error pipe must not reach the program; the program's own
	// descriptors start after ours.
	if (fcntl(SECCOMPEXEC_ERR_FD, F_SETFD, FD_CLOEXEC) < 0)
		_exit(126);
	if (argc < 3 || argv[2][0] == '\0')
		report(126, "seccompexec: no program given");
	struct spec sp;
	int e = read_spec(&sp, why, sizeof why);
	close(SECCOMPEXEC_EXE_FD);
	close(SECCOMPEXEC_PROG_FD);
	int gate = gate_wanted();
	if (e == 0 && sp.prog.len == 0 && !gate) {
		snprintf(why, sizeof why, "neither a filter nor the exec gate was given");
		e = EINVAL;
	}
	if (e == 0)
		e = load_filter(&sp, why, sizeof why);
	if (e == 0 && gate)
		e = load_gate(sp.observe, why, sizeof why);
	if (e != 0) {
		snprintf(msg, sizeof msg, "loading the seccomp filter: %s: %s", why, errtext(e, err, sizeof err));
		report(126, msg);
	}
	run_program(argv + 2, sp.env);
}

// The constructor runs before the Go runtime starts, and before every
// constructor of default priority: libcontainer's nsexec (which acts on
// _LIBCONTAINER_* variables) never runs in the trampoline. In every process
// but the trampoline it returns at once.
__attribute__((constructor(101))) static void seccompexec_constructor(int argc, char **argv)
{
	if (argc >= 2 && argv != NULL && argv[1] != NULL && strcmp(argv[1], SECCOMPEXEC_ARG) == 0)
		seccompexec_main(argc, argv);
}
