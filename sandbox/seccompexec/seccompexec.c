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
	// SECCOMPEXEC_OBSERVE, _CREATE and _NOEXEC were set (and are cleared
	// from flags).
	int observe, create, noexec;
	struct sock_fprog prog;
	const char *landlock; // the Landlock section, or NULL
	size_t landlock_len;
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
	uint32_t count, ll;
	memcpy(&sp->flags, buf, sizeof sp->flags);
	memcpy(&count, buf + 4, sizeof count);
	memcpy(&ll, buf + 8, sizeof ll);
	sp->observe = (sp->flags & SECCOMPEXEC_OBSERVE) != 0;
	sp->create = (sp->flags & SECCOMPEXEC_CREATE) != 0;
	sp->noexec = (sp->flags & SECCOMPEXEC_NOEXEC) != 0;
	sp->flags &= ~(SECCOMPEXEC_OBSERVE | SECCOMPEXEC_CREATE | SECCOMPEXEC_NOEXEC);
	size_t insns = (size_t)count * sizeof(struct sock_filter);
	if (count > BPF_MAXINSNS || insns > total - SECCOMPEXEC_HEADER || ll > total - SECCOMPEXEC_HEADER - insns) {
		snprintf(why, size, "reading the filter: %zu bytes is not a program", total);
		return EINVAL;
	}
	sp->prog.len = (unsigned short)count;
	sp->prog.filter = (struct sock_filter *)(buf + SECCOMPEXEC_HEADER);
	sp->landlock = ll > 0 ? buf + SECCOMPEXEC_HEADER + insns : NULL;
	sp->landlock_len = ll;

	char *env = buf + SECCOMPEXEC_HEADER + insns + ll, *end = buf + total;
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

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif

// struct landlock_ruleset_attr and struct landlock_path_beneath_attr as of
// ABI 6: the system's headers may predate them; the kernel takes the
// prefix that the section's attr size says it knows.
struct ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

struct ll_path_beneath_attr {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

#define LL_RULE_PATH_BENEATH 1

int seccompexec_apply_landlock(const char *sec, size_t len, char *why, size_t size)
{
	if (len < SECCOMPEXEC_LANDLOCK_HEADER) {
		snprintf(why, size, "reading the Landlock ruleset: %zu bytes is too short", len);
		return EINVAL;
	}
	struct ll_ruleset_attr attr;
	uint32_t attr_size, flags, count;
	memcpy(&attr.handled_access_fs, sec, 8);
	memcpy(&attr.handled_access_net, sec + 8, 8);
	memcpy(&attr.scoped, sec + 16, 8);
	memcpy(&attr_size, sec + 32, 4);
	memcpy(&flags, sec + 36, 4);
	memcpy(&count, sec + 40, 4);
	if (attr_size == 0 || attr_size > sizeof attr) {
		snprintf(why, size, "reading the Landlock ruleset: attr size %u", attr_size);
		return EINVAL;
	}
	// landlock_restrict_self needs no_new_privs without CAP_SYS_ADMIN;
	// refuse rather than rely on a capability.
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1) {
		snprintf(why, size, "no_new_privs is not set");
		return EPERM;
	}
	int rs = (int)syscall(__NR_landlock_create_ruleset, &attr, (size_t)attr_size, 0U);
	if (rs < 0) {
		snprintf(why, size, "creating the Landlock ruleset");
		return errno;
	}
	size_t off = SECCOMPEXEC_LANDLOCK_HEADER;
	char path[4096];
	for (uint32_t i = 0; i < count; i++) {
		uint64_t dir_access, file_access;
		uint32_t plen;
		if (len - off < 20) {
			snprintf(why, size, "reading the Landlock ruleset: rule %u is cut short", i);
			close(rs);
			return EINVAL;
		}
		memcpy(&dir_access, sec + off, 8);
		memcpy(&file_access, sec + off + 8, 8);
		memcpy(&plen, sec + off + 16, 4);
		off += 20;
		if (plen == 0 || plen >= sizeof path || len - off < plen) {
			snprintf(why, size, "reading the Landlock ruleset: rule %u is cut short", i);
			close(rs);
			return EINVAL;
		}
		memcpy(path, sec + off, plen);
		path[plen] = '\0';
		off += plen;
		int fd = open(path, O_PATH | O_CLOEXEC);
		if (fd < 0) {
			if (errno == ENOENT || errno == ENOTDIR)
				continue; // nothing to allow: the kernel refuses it
			snprintf(why, size, "opening %.3900s for its Landlock rule", path);
			int e = errno;
			close(rs);
			return e;
		}
		struct stat st;
		if (fstat(fd, &st) < 0) {
			int e = errno;
			snprintf(why, size, "opening %.3900s for its Landlock rule", path);
			close(fd);
			close(rs);
			return e;
		}
		// The rights follow what the path is now, inside the sandbox.
		uint64_t access = S_ISDIR(st.st_mode) ? dir_access : file_access;
		struct ll_path_beneath_attr pb = {.allowed_access = access & attr.handled_access_fs, .parent_fd = fd};
		if (pb.allowed_access != 0 && syscall(__NR_landlock_add_rule, rs, LL_RULE_PATH_BENEATH, &pb, 0U) < 0) {
			int e = errno;
			snprintf(why, size, "adding the Landlock rule for %.3900s", path);
			close(fd);
			close(rs);
			return e;
		}
		close(fd);
	}
	if (syscall(__NR_landlock_restrict_self, rs, flags) < 0) {
		int e = errno;
		snprintf(why, size, "landlock_restrict_self(%#x)", flags);
		close(rs);
		return e;
	}
	close(rs);
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

// Room for the gate's filter: 7 instructions of frame, 2 per notified
// system call, 5 per open-like one.
#define GATE_MAX_INSNS 64

struct gate_prog {
	struct sock_filter insns[GATE_MAX_INSNS];
	unsigned short len;
};

static void emit(struct gate_prog *g, struct sock_filter in)
{
	if (g->len < GATE_MAX_INSNS)
		g->insns[g->len] = in;
	g->len++; // an overflow is caught before the filter is loaded
}

// notify_nr makes system call nr wait for tether's answer.
static void notify_nr(struct gate_prog *g, unsigned int nr)
{
	emit(g, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 1));
	emit(g, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF));
}

// notify_creating makes system call nr wait for tether's answer when its
// flags argument (argument number arg) has O_CREAT, and allows it
// otherwise. The accumulator holds the number again after a miss.
static void notify_creating(struct gate_prog *g, unsigned int nr, int arg)
{
	emit(g, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 4));
	// The flags are an int: the low word of the argument (little-endian).
	emit(g, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args) + 8 * arg));
	emit(g, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, O_CREAT, 0, 1));
	emit(g, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF));
	emit(g, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
}

// load_gate installs the gate's filter and sends its listener to the gate
// socket. Of the native ABI, these wait for tether's verdict: execve and
// execveat (unless noexec); with observe, open, openat, creat and connect
// (which tether only records); with create, every system call that can
// name a directory entry (mkdir, mknod, symlink, link, rename in all their
// forms, creat, and open and openat with O_CREAT: the creation gate,
// sandbox/notify_create_linux.go). System calls of another ABI (i386's int
// 0x80, x32) fail with EPERM, so nothing slips past through a second
// system call table (the sandbox's own filter kills those callers anyway).
// The sandbox's filter still decides the notified calls: of two filters'
// verdicts the kernel takes the stronger, and an error beats a
// notification. Returns 0 or an errno.
static int load_gate(int noexec, int observe, int create, char *why, size_t size)
{
#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the gate's filter reads the low word of an argument at its lower address"
#endif
	struct gate_prog g = {.len = 0};
	const struct sock_filter eperm = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA));
	emit(&g, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)));
	emit(&g, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, GATE_ARCH, 1, 0));
	emit(&g, eperm);
	emit(&g, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)));
#if defined(__x86_64__)
	emit(&g, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1)); // x32
	emit(&g, eperm);
#endif
	if (!noexec) {
		notify_nr(&g, __NR_execve);
		notify_nr(&g, __NR_execveat);
	}
	if (observe) {
		notify_nr(&g, __NR_openat);
#ifdef __NR_open
		notify_nr(&g, __NR_open);
#endif
#ifdef __NR_creat
		notify_nr(&g, __NR_creat);
#endif
		notify_nr(&g, __NR_connect);
	}
	if (create) {
		notify_nr(&g, __NR_mkdirat);
		notify_nr(&g, __NR_mknodat);
		notify_nr(&g, __NR_symlinkat);
		notify_nr(&g, __NR_linkat);
		notify_nr(&g, __NR_renameat2);
#ifdef __NR_renameat
		notify_nr(&g, __NR_renameat);
#endif
#ifdef __NR_mkdir
		notify_nr(&g, __NR_mkdir);
		notify_nr(&g, __NR_mknod);
		notify_nr(&g, __NR_symlink);
		notify_nr(&g, __NR_link);
		notify_nr(&g, __NR_rename);
#endif
		if (!observe) { // else notified whatever their flags
#ifdef __NR_creat
			notify_nr(&g, __NR_creat);
#endif
#ifdef __NR_open
			notify_creating(&g, __NR_open, 1);
#endif
			notify_creating(&g, __NR_openat, 2);
		}
	}
	emit(&g, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
	if (g.len > GATE_MAX_INSNS) {
		snprintf(why, size, "building the gate's filter: %u instructions", g.len);
		return E2BIG;
	}
	struct sock_fprog prog = {.len = g.len, .filter = g.insns};
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
	if (e == 0 && sp.prog.len == 0 && !gate && sp.landlock == NULL) {
		snprintf(why, sizeof why, "neither a filter, the exec gate nor a Landlock ruleset was given");
		e = EINVAL;
	}
	// Landlock first: the filter loaded next may refuse its system calls.
	if (e == 0 && sp.landlock != NULL)
		e = seccompexec_apply_landlock(sp.landlock, sp.landlock_len, why, sizeof why);
	if (e == 0)
		e = load_filter(&sp, why, sizeof why);
	if (e == 0 && gate)
		e = load_gate(sp.noexec, sp.observe, sp.create, why, sizeof why);
	if (e != 0) {
		snprintf(msg, sizeof msg, "loading the seccomp filter: %s: %s", why, errtext(e, err, sizeof err));
		report(126, msg);
	}
	run_program(argv + 2, sp.env);
}

// supervisor_landlock confines a session's supervisor, when it was given a
// Landlock section, while it is still the only thread: the Go runtime's
// threads and every command inherit the domain. A failure ends the
// supervisor (status 1, the reason on stderr): the session does not start.
static void supervisor_landlock(void)
{
	const char *v = getenv(SECCOMPEXEC_LANDLOCK_ENV);
	if (v == NULL)
		return;
	char why[4096], err[128], msg[4400];
	char *endp;
	long fd = strtol(v, &endp, 10);
	unsetenv(SECCOMPEXEC_LANDLOCK_ENV);
	struct stat st;
	int e = 0;
	char *buf = NULL;
	if (*v == '\0' || *endp != '\0' || fd < 3 || fd > 1024 || fstat((int)fd, &st) < 0) {
		snprintf(why, sizeof why, "reading the Landlock ruleset: descriptor %s", v);
		e = EBADF;
	} else if (st.st_size <= 0 || st.st_size > SECCOMPEXEC_MAX_DATA) {
		snprintf(why, sizeof why, "reading the Landlock ruleset: %lld bytes", (long long)st.st_size);
		e = EINVAL;
	} else if ((buf = malloc((size_t)st.st_size)) == NULL) {
		snprintf(why, sizeof why, "reading the Landlock ruleset");
		e = ENOMEM;
	} else {
		size_t got = 0, total = (size_t)st.st_size;
		while (e == 0 && got < total) {
			ssize_t n = pread((int)fd, buf + got, total - got, (off_t)got);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				snprintf(why, sizeof why, "reading the Landlock ruleset");
				e = n < 0 ? errno : EIO;
				break;
			}
			got += (size_t)n;
		}
		if (e == 0)
			e = seccompexec_apply_landlock(buf, total, why, sizeof why);
	}
	if (fd >= 3 && fd <= 1024)
		close((int)fd);
	free(buf);
	if (e != 0) {
		snprintf(msg, sizeof msg, "tether supervisor: %s: %s\n", why, errtext(e, err, sizeof err));
		ssize_t n = write(2, msg, strlen(msg));
		(void)n;
		_exit(1);
	}
}

// The constructor runs before the Go runtime starts, and before every
// constructor of default priority: libcontainer's nsexec (which acts on
// _LIBCONTAINER_* variables) never runs in the trampoline. In every process
// but the trampoline it returns at once.
__attribute__((constructor(101))) static void seccompexec_constructor(int argc, char **argv)
{
	if (argc >= 2 && argv != NULL && argv[1] != NULL && strcmp(argv[1], SECCOMPEXEC_ARG) == 0)
		seccompexec_main(argc, argv);
	if (argc >= 2 && argv != NULL && argv[1] != NULL && strcmp(argv[1], SECCOMPEXEC_SUPERVISOR_ARG) == 0)
		supervisor_landlock();
}
