// The trampoline half of package seccompexec: see seccompexec.go.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/fsuid.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
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
	// SECCOMPEXEC_OBSERVE, _CREATE, _NOEXEC and _SEALED were set (and are
	// cleared from flags).
	int observe, create, noexec, sealed;
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
	sp->sealed = (sp->flags & SECCOMPEXEC_SEALED) != 0;
	sp->flags &= ~(SECCOMPEXEC_OBSERVE | SECCOMPEXEC_CREATE | SECCOMPEXEC_NOEXEC | SECCOMPEXEC_SEALED);
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

// struct landlock_net_port_attr (ABI 4).
struct ll_net_port_attr {
	uint64_t allowed_access;
	uint64_t port;
} __attribute__((packed));

#define LL_RULE_NET_PORT 2

// open_rule_path opens a Landlock rule's path (O_PATH): its first follow
// bytes as usual (tether's own mount point, "/", or the whole path), the
// rest one component at a time with O_NOFOLLOW from the previous
// component's descriptor, so that no component there is a symbolic link
// (a link is opened as itself and refused). Not openat2
// RESOLVE_NO_SYMLINKS: the sandbox's seccomp profile may make openat2
// fail with ENOSYS (seccomp_files_on.go), and a session's supervisor runs
// under it. Each step holds the directory it came from, so a link swapped
// in meanwhile is seen, not followed. Returns the descriptor or -errno;
// -ELOOP when a link is on the path.
static int open_rule_path(char *path, uint32_t follow)
{
	size_t plen = strlen(path);
	if (follow >= plen) {
		int fd = open(path, O_PATH | O_CLOEXEC);
		return fd < 0 ? -errno : fd;
	}
	// The mount's own path ends at a component boundary (landlock.go):
	// "/" alone, or a prefix followed by '/'.
	if (follow > 1 && path[follow] != '/')
		return -EINVAL;
	char saved = path[follow];
	path[follow] = '\0';
	int cur = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	path[follow] = saved;
	if (cur < 0)
		return -errno;
	char comp[256];
	const char *p = path + follow;
	for (;;) {
		while (*p == '/')
			p++;
		if (*p == '\0')
			return cur;
		size_t n = strcspn(p, "/");
		// The path is clean (filepath.Clean): "." or ".." is hostile.
		if (n >= sizeof comp || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.')) {
			close(cur);
			return -EINVAL;
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		p += n;
		int next = openat(cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		int e = errno;
		close(cur);
		if (next < 0)
			return -e;
		struct stat st;
		if (fstat(next, &st) < 0) {
			e = errno;
			close(next);
			return -e;
		}
		if (S_ISLNK(st.st_mode)) {
			close(next);
			return -ELOOP;
		}
		cur = next;
	}
}

int seccompexec_apply_landlock(const char *sec, size_t len, char *why, size_t size)
{
	if (len < SECCOMPEXEC_LANDLOCK_HEADER) {
		snprintf(why, size, "reading the Landlock ruleset: %zu bytes is too short", len);
		return EINVAL;
	}
	struct ll_ruleset_attr attr;
	uint32_t attr_size, flags, count, nports;
	memcpy(&attr.handled_access_fs, sec, 8);
	memcpy(&attr.handled_access_net, sec + 8, 8);
	memcpy(&attr.scoped, sec + 16, 8);
	memcpy(&attr_size, sec + 32, 4);
	memcpy(&flags, sec + 36, 4);
	memcpy(&count, sec + 40, 4);
	memcpy(&nports, sec + 44, 4);
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
		uint32_t plen, follow;
		if (len - off < 24) {
			snprintf(why, size, "reading the Landlock ruleset: rule %u is cut short", i);
			close(rs);
			return EINVAL;
		}
		memcpy(&dir_access, sec + off, 8);
		memcpy(&file_access, sec + off + 8, 8);
		memcpy(&plen, sec + off + 16, 4);
		memcpy(&follow, sec + off + 20, 4);
		off += 24;
		if (plen == 0 || plen >= sizeof path || len - off < plen || follow == 0 || follow > plen) {
			snprintf(why, size, "reading the Landlock ruleset: rule %u is cut short", i);
			close(rs);
			return EINVAL;
		}
		memcpy(path, sec + off, plen);
		path[plen] = '\0';
		off += plen;
		int fd = open_rule_path(path, follow);
		if (fd == -ELOOP) {
			// A symlink where the rule's path must have none: refused,
			// never followed; the kernel then refuses what it would
			// have granted, and the command is told why (its stderr).
			dprintf(2, "tether: Landlock rule for %.3900s left out: a symbolic link is on its path\n", path);
			continue;
		}
		if (fd < 0) {
			if (fd == -ENOENT || fd == -ENOTDIR)
				continue; // nothing to allow: the kernel refuses it
			snprintf(why, size, "opening %.3900s for its Landlock rule", path);
			close(rs);
			return -fd;
		}
		struct stat st;
		if (fstat(fd, &st) < 0) {
			int e = errno;
			snprintf(why, size, "opening %.3900s for its Landlock rule", path);
			close(fd);
			close(rs);
			return e;
		}
		if (S_ISLNK(st.st_mode)) {
			dprintf(2, "tether: Landlock rule for %.3900s left out: a symbolic link is on its path\n", path);
			close(fd);
			continue;
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
	for (uint32_t i = 0; i < nports; i++) {
		if (len - off < 8) {
			snprintf(why, size, "reading the Landlock ruleset: port %u is cut short", i);
			close(rs);
			return EINVAL;
		}
		struct ll_net_port_attr np = {.allowed_access = attr.handled_access_net};
		memcpy(&np.port, sec + off, 8);
		off += 8;
		if (np.allowed_access != 0 && syscall(__NR_landlock_add_rule, rs, LL_RULE_NET_PORT, &np, 0U) < 0) {
			int e = errno;
			snprintf(why, size, "adding the Landlock rule for TCP port %llu", (unsigned long long)np.port);
			close(rs);
			return e;
		}
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


#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif
#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif

// The creation helper (seccompexec.h). It performs, on tether's behalf and
// with the names tether checked, the creating system calls the gate
// received, as the caller would: tether never lets the kernel go on with
// a name the caller can still rewrite in its memory.

// creator_self is the helper's own identity, taken back after each call.
struct creator_self {
	uid_t fsuid;
	gid_t fsgid;
	mode_t umask;
	int ngroups;
	gid_t groups[SECCOMPEXEC_CREATE_MAX_GROUPS];
	struct __user_cap_data_struct caps[2];
};

static int caps_get(struct __user_cap_data_struct caps[2])
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	return (int)syscall(SYS_capget, &h, caps);
}

// caps_set_effective makes eff (masked by what is permitted) the
// effective set.
static int caps_set_effective(const struct __user_cap_data_struct own[2], uint64_t eff)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	struct __user_cap_data_struct d[2];
	memcpy(d, own, sizeof d);
	d[0].effective = (uint32_t)eff & own[0].permitted;
	d[1].effective = (uint32_t)(eff >> 32) & own[1].permitted;
	return (int)syscall(SYS_capset, &h, d);
}

static uint64_t caps_effective(const struct __user_cap_data_struct caps[2])
{
	return (uint64_t)caps[0].effective | (uint64_t)caps[1].effective << 32;
}

// creator_restore takes the helper's own identity back after
// creator_become changed it (changed); a helper that cannot ends, as it
// would act as the wrong identity next.
static void creator_restore(const struct creator_self *self, int changed)
{
	umask(self->umask);
	if (!changed)
		return;
	if (caps_set_effective(self->caps, caps_effective(self->caps)) < 0)
		_exit(1);
	setfsuid(self->fsuid);
	setfsgid(self->fsgid);
	if ((uid_t)setfsuid((uid_t)-1) != self->fsuid || (gid_t)setfsgid((gid_t)-1) != self->fsgid)
		_exit(1);
	if (syscall(SYS_setgroups, (size_t)self->ngroups, self->groups) < 0) {
		gid_t now[SECCOMPEXEC_CREATE_MAX_GROUPS];
		int n = getgroups(SECCOMPEXEC_CREATE_MAX_GROUPS, now);
		if (n != self->ngroups || memcmp(now, self->groups, sizeof(gid_t) * (size_t)n) != 0)
			_exit(1);
	}
}

// creator_become takes the caller's umask, groups, fsgid, fsuid and
// effective capabilities (those the helper has: never more); *changed
// says whether anything but the umask had to change (each change commits
// new credentials: the usual caller, the sandbox's root, needs none).
// Returns 0, or -EPERM when the helper cannot be that identity.
static int creator_become(const struct creator_self *self, const struct seccompexec_create_req *rq, const uint32_t *groups,
                          int *changed)
{
	umask((mode_t)(rq->umask & 0777));
	int same = (int)rq->ngroups == self->ngroups;
	for (uint32_t i = 0; same && i < rq->ngroups; i++)
		same = groups[i] == self->groups[i];
	*changed = !same || rq->fsuid != self->fsuid || rq->fsgid != self->fsgid || rq->cap_effective != caps_effective(self->caps);
	if (!*changed)
		return 0;
	if (!same) {
		gid_t g[SECCOMPEXEC_CREATE_MAX_GROUPS];
		for (uint32_t i = 0; i < rq->ngroups; i++)
			g[i] = groups[i];
		if (syscall(SYS_setgroups, (size_t)rq->ngroups, g) < 0)
			return -EPERM;
	}
	setfsgid(rq->fsgid);
	setfsuid(rq->fsuid);
	if ((gid_t)setfsgid((gid_t)-1) != rq->fsgid || (uid_t)setfsuid((uid_t)-1) != rq->fsuid)
		return -EPERM;
	// Last: setfsuid already dropped the file system capabilities of an
	// fsuid other than 0; the caller's own set is what counts.
	if (caps_set_effective(self->caps, rq->cap_effective) < 0)
		return -EPERM;
	return 0;
}

// hex_digit is the value of the lowercase hex digit c, or -1.
static int hex_digit(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

// creator_call performs the request. Returns the call's result or -errno;
// *newfd is an open's descriptor.
static int64_t creator_call(const struct seccompexec_create_req *rq, const char *n0, const char *n1, const char *target,
                            const int *fds, int nfds, int *newfd)
{
	int dir[2] = {AT_FDCWD, AT_FDCWD};
	const char *names[2] = {n0, n1};
	int used = rq->op == SECCOMPEXEC_CREATE_LINK || rq->op == SECCOMPEXEC_CREATE_RENAME ? 2 : 1;
	for (int i = 0; i < used; i++) {
		if (rq->dirfd[i] >= nfds)
			return -EBADF;
		if (rq->dirfd[i] >= 0)
			dir[i] = fds[rq->dirfd[i]];
		else if (names[i][0] != '/')
			return -EBADF; // never the helper's own working directory
	}
	long r;
	switch (rq->op) {
	case SECCOMPEXEC_CREATE_MKDIR:
		r = mkdirat(dir[0], n0, (mode_t)rq->mode);
		break;
	case SECCOMPEXEC_CREATE_MKNOD:
		r = mknodat(dir[0], n0, (mode_t)rq->mode, (dev_t)rq->dev);
		break;
	case SECCOMPEXEC_CREATE_SYMLINK:
		r = symlinkat(target, dir[0], n0);
		break;
	case SECCOMPEXEC_CREATE_LINK:
		if (rq->flags & SECCOMPEXEC_LINK_DESCRIPTOR) {
			if (n0[0] != '\0' || dir[0] == AT_FDCWD)
				return -EINVAL;
			char self[32];
			snprintf(self, sizeof self, "/proc/self/fd/%d", dir[0]);
			r = linkat(AT_FDCWD, self, dir[1], n1, AT_SYMLINK_FOLLOW);
			break;
		}
		r = linkat(dir[0], n0, dir[1], n1, (int)rq->flags);
		break;
	case SECCOMPEXEC_CREATE_RENAME:
		r = syscall(SYS_renameat2, dir[0], n0, dir[1], n1, (unsigned int)rq->flags);
		break;
	case SECCOMPEXEC_CREATE_OPEN:
		// Close-on-exec is the caller's descriptor's flag, which tether
		// sets; the helper has no terminal to take.
		if (rq->flags & SECCOMPEXEC_OPEN_DESCRIPTOR) {
			if (n0[0] != '\0' || dir[0] == AT_FDCWD)
				return -EINVAL;
			char self[32];
			snprintf(self, sizeof self, "/proc/self/fd/%d", dir[0]);
			r = open(self, (int)(uint32_t)rq->flags | O_CLOEXEC | O_NOCTTY, (mode_t)rq->mode);
		} else
			r = openat(dir[0], n0, (int)rq->flags | O_CLOEXEC | O_NOCTTY, (mode_t)rq->mode);
		if (r >= 0)
			*newfd = (int)r;
		break;
	case SECCOMPEXEC_CREATE_TRUNCATE: {
		// Opened as a path first: a FIFO or device is neither opened
		// (which could block, or be a terminal's open) nor truncated.
		int p = rq->flags & SECCOMPEXEC_OPEN_DESCRIPTOR ? (n0[0] == '\0' && dir[0] != AT_FDCWD ? fcntl(dir[0], F_DUPFD_CLOEXEC, 0) : (errno = EINVAL, -1))
		                                                : openat(dir[0], n0, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (p < 0)
			return -(int64_t)errno;
		struct stat st;
		int e = fstat(p, &st) < 0 ? errno : S_ISDIR(st.st_mode) ? EISDIR : S_ISLNK(st.st_mode) ? ELOOP : !S_ISREG(st.st_mode) ? EINVAL : 0;
		// truncate(2) itself, through the pinned file's magic link (not an
		// open for writing and ftruncate): the kernel then checks what the
		// caller's truncate would have been checked for, Landlock's
		// truncate right included, and reports that right when it refuses.
		if (e == 0) {
			char self[32];
			snprintf(self, sizeof self, "/proc/self/fd/%d", p);
			if (truncate(self, (off_t)rq->dev) < 0)
				e = errno;
		}
		close(p);
		if (e != 0)
			return -(int64_t)e;
		r = 0;
		break;
	}
	case SECCOMPEXEC_CREATE_BIND: {
		// bind takes no directory: the helper moves into the checked one
		// for the call and back to its root after it.
		if (rq->dirfd[0] < 0 || rq->dirfd[1] < 0 || rq->dirfd[1] >= nfds)
			return -EBADF;
		struct sockaddr_un a = {.sun_family = AF_UNIX};
		size_t l = rq->len[0];
		if (l == 0 || l >= sizeof a.sun_path || memchr(n0, '/', l) != NULL)
			return -EINVAL;
		memcpy(a.sun_path, n0, l);
		if (fchdir(dir[0]) < 0)
			return -(int64_t)errno;
		r = bind(fds[rq->dirfd[1]], (struct sockaddr *)&a, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + l + 1));
		int e = errno;
		if (chdir("/") < 0)
			_exit(1); // it would act in the wrong directory next
		errno = e;
		break;
	}
	case SECCOMPEXEC_CREATE_CONNECT: {
		if (rq->dirfd[0] < 0 || rq->dirfd[1] >= nfds)
			return -EBADF;
		union {
			struct sockaddr_un un;
			unsigned char raw[sizeof(struct sockaddr_un)];
		} a = {.un = {.sun_family = AF_UNIX}};
		socklen_t alen;
		if (rq->dirfd[1] >= 0) {
			int k = snprintf(a.un.sun_path, sizeof a.un.sun_path, "/proc/self/fd/%d", fds[rq->dirfd[1]]);
			alen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + (size_t)k + 1);
		} else {
			size_t l = rq->len[0];
			if (l % 2 != 0 || l / 2 > sizeof a.raw)
				return -EINVAL;
			for (size_t i = 0; i < l / 2; i++) {
				int hi = hex_digit(n0[2 * i]), lo = hex_digit(n0[2 * i + 1]);
				if (hi < 0 || lo < 0)
					return -EINVAL;
				a.raw[i] = (unsigned char)(hi << 4 | lo);
			}
			alen = (socklen_t)(l / 2);
		}
		int fl = fcntl(dir[0], F_GETFL);
		if (fl < 0)
			return -(int64_t)errno;
		if (!(fl & O_NONBLOCK) && fcntl(dir[0], F_SETFL, fl | O_NONBLOCK) < 0)
			return -(int64_t)errno;
		r = connect(dir[0], (struct sockaddr *)&a, alen);
		int e = errno;
		if (!(fl & O_NONBLOCK))
			fcntl(dir[0], F_SETFL, fl);
		errno = e;
		break;
	}
	case SECCOMPEXEC_CREATE_CHMOD: {
		char self[32];
		snprintf(self, sizeof self, "/proc/self/fd/%d", dir[0]);
		r = chmod(self, (mode_t)rq->mode);
		break;
	}
	default:
		return -EINVAL;
	}
	return r < 0 ? -(int64_t)errno : (int64_t)r;
}

// creator_reply sends the result, with fd when it is one.
static void creator_reply(int sock, int64_t r, int fd)
{
	struct iovec iov = {.iov_base = &r, .iov_len = sizeof r};
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	memset(&ctl, 0, sizeof ctl);
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
	if (fd >= 0) {
		msg.msg_control = ctl.buf;
		msg.msg_controllen = sizeof ctl.buf;
		struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	ssize_t n;
	do
		n = sendmsg(sock, &msg, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		_exit(0); // tether is gone
}

#define CREATOR_MAX_REQ (sizeof(struct seccompexec_create_req) + 4 * SECCOMPEXEC_CREATE_MAX_GROUPS + 3 * 4097)

// creator_main is the helper: it serves sock until it closes.
static void creator_main(int sock)
{
	// Nothing of the sandbox may read or change its memory (ptrace,
	// process_vm_writev, /proc/PID/mem need it dumpable, or CAP_SYS_PTRACE,
	// which the sandbox lacks), or stop it from its terminal: it leaves
	// the command's process group, and signals meant for the command's
	// group or a terminal pass it by.
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		_exit(1);
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	setpgid(0, 0);
	int ignored[] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU, SIGUSR1, SIGUSR2, SIGALRM};
	for (size_t i = 0; i < sizeof ignored / sizeof ignored[0]; i++)
		signal(ignored[i], SIG_IGN);
	// Only the socket: the helper must hold none of the command's pipes
	// (their readers wait for end-of-file) or terminal.
	for (int fd = 0; fd < 1024; fd++)
		if (fd != sock)
			close(fd);
	if (chdir("/") < 0)
		_exit(1);
	static struct creator_self self;
	self.fsuid = (uid_t)setfsuid((uid_t)-1);
	self.fsgid = (gid_t)setfsgid((gid_t)-1);
	self.umask = umask(022);
	umask(self.umask);
	self.ngroups = getgroups(SECCOMPEXEC_CREATE_MAX_GROUPS, self.groups);
	if (self.ngroups < 0 || caps_get(self.caps) < 0)
		_exit(1);
	static char buf[CREATOR_MAX_REQ + 1];
	for (;;) {
		struct iovec iov = {.iov_base = buf, .iov_len = CREATOR_MAX_REQ + 1};
		union {
			char buf[CMSG_SPACE(2 * sizeof(int))];
			struct cmsghdr align;
		} ctl;
		struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof ctl.buf};
		ssize_t n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(0); // tether closed the gate
		int fds[2], nfds = 0;
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c != NULL; c = CMSG_NXTHDR(&msg, c)) {
			if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
				continue;
			size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			for (size_t i = 0; i < k; i++) {
				int fd;
				memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
				if (nfds < 2)
					fds[nfds++] = fd;
				else
					close(fd);
			}
		}
		int64_t r = -EINVAL;
		int newfd = -1;
		struct seccompexec_create_req rq;
		size_t hdr = sizeof rq;
		if ((size_t)n >= hdr && !(msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
			memcpy(&rq, buf, hdr);
			size_t want = hdr + 4 * (size_t)rq.ngroups;
			int ok = rq.ngroups <= SECCOMPEXEC_CREATE_MAX_GROUPS;
			const char *str[3];
			for (int i = 0; ok && i < 3; i++) {
				ok = rq.len[i] <= 4096 && want + rq.len[i] + 1 <= (size_t)n && buf[want + rq.len[i]] == '\0' &&
				     memchr(buf + want, '\0', rq.len[i]) == NULL;
				str[i] = buf + want;
				want += rq.len[i] + 1;
			}
			if (ok && want == (size_t)n) {
				uint32_t groups[SECCOMPEXEC_CREATE_MAX_GROUPS];
				memcpy(groups, buf + hdr, 4 * (size_t)rq.ngroups);
				int changed = 1;
				r = creator_become(&self, &rq, groups, &changed);
				if (r == 0)
					r = creator_call(&rq, str[0], str[1], str[2], fds, nfds, &newfd);
				creator_restore(&self, changed);
			}
		}
		for (int i = 0; i < nfds; i++)
			close(fds[i]);
		creator_reply(sock, r, newfd);
		if (newfd >= 0)
			close(newfd);
	}
}

// send_fds sends one byte with n descriptors on sock. Returns 1, or -1
// with errno.
static ssize_t send_fds(int sock, char byte, const int *fds, int n)
{
	struct iovec iov = {.iov_base = &byte, .iov_len = 1};
	union {
		char buf[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} ctl;
	memset(&ctl, 0, sizeof ctl);
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = CMSG_SPACE((size_t)n * sizeof(int))};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN((size_t)n * sizeof(int));
	memcpy(CMSG_DATA(c), fds, (size_t)n * sizeof(int));
	ssize_t r;
	do
		r = sendmsg(sock, &msg, MSG_NOSIGNAL);
	while (r < 0 && errno == EINTR);
	if (r == 0) {
		errno = EIO;
		return -1;
	}
	return r;
}

// start_creator forks the helper on sock and returns its pidfd, or -1
// with errno. The helper's exit raises no signal and no wait() without
// __WALL reaps it, so the command (its parent) never meets it.
static int start_creator(int sock)
{
	int pidfd = -1;
	long pid = syscall(SYS_clone, (unsigned long)CLONE_PIDFD, NULL, &pidfd, NULL, NULL);
	if (pid < 0)
		return -1;
	if (pid == 0)
		creator_main(sock);
	return pidfd;
}

#if defined(__x86_64__)
#define GATE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define GATE_ARCH AUDIT_ARCH_AARCH64
#else
#error "the exec gate knows no audit architecture for this target"
#endif

// Room for the gate's filter: 7 instructions of frame, 2 per notified
// system call, up to 7 per open-like one.
#define GATE_MAX_INSNS 160

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

// notify_gated makes system call nr wait for tether's answer when its
// flags argument (argument number arg) can create a name (O_CREAT) or
// write an existing file (an access mode but O_RDONLY, or O_TRUNC) and is
// no O_TMPFILE (which names no entry), and allows it otherwise: the
// creation gate's opens (gatedOpen in sandbox/notify_create_linux.go).
static void notify_gated(struct gate_prog *g, unsigned int nr, int arg)
{
	emit(g, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 6));
	// The flags are an int: the low word of the argument (little-endian).
	emit(g, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args) + 8 * arg));
	emit(g, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, O_CREAT, 2, 0));
	emit(g, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, O_TMPFILE & ~O_DIRECTORY, 2, 0));
	emit(g, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, O_ACCMODE | O_TRUNC, 0, 1));
	emit(g, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF));
	emit(g, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
}

// notify_writing makes system call nr wait for tether's answer when its
// flags argument (argument number arg) opens for writing (an access mode
// but O_RDONLY, or O_TRUNC), and goes on to the next rule otherwise, with
// the number in the accumulator again.
static void notify_writing(struct gate_prog *g, unsigned int nr, int arg)
{
	emit(g, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 4));
	emit(g, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args) + 8 * arg));
	emit(g, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, O_ACCMODE | O_TRUNC, 0, 1));
	emit(g, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF));
	emit(g, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)));
}

#ifndef __NR_fchmodat2
#define __NR_fchmodat2 452 // Linux 6.6; the same number on every architecture
#endif

// notify_mode_bit makes system call nr wait for tether's answer when its
// mode argument (argument number arg) has bit, and goes on to the next
// rule otherwise, with the number in the accumulator again.
static void notify_mode_bit(struct gate_prog *g, unsigned int nr, int arg, unsigned int bit)
{
	emit(g, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 4));
	emit(g, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args) + 8 * arg));
	emit(g, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, bit, 0, 1));
	emit(g, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF));
	emit(g, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)));
}
#ifndef __NR_setxattrat
#define __NR_setxattrat 463 // Linux 6.13; likewise
#endif
#ifndef __NR_removexattrat
#define __NR_removexattrat 466
#endif

// sealed_nrs are the system calls the mount plan's report notifies
// whatever their arguments, and create_open_nrs (below) those it notifies
// when they open for writing: what the read-only workspace refuses with
// EROFS before Landlock looks. sandbox/notify_sealed_linux.go has the same
// table (sealedCalls).
static const int sealed_nrs[] = {
	__NR_fchmodat, __NR_fchmodat2, __NR_fchownat, __NR_utimensat, __NR_setxattr, __NR_lsetxattr,
	__NR_removexattr, __NR_lremovexattr, __NR_unlinkat, __NR_truncate, __NR_setxattrat, __NR_removexattrat,
	__NR_fchmod, __NR_fchown, __NR_fsetxattr, __NR_fremovexattr,
#ifdef __NR_chmod
	__NR_chmod, __NR_chown, __NR_lchown, __NR_utimes, __NR_utime, __NR_futimesat, __NR_unlink, __NR_rmdir,
#endif
};

// create_nrs are the system calls the creation gate's filter notifies
// whatever their arguments, create_open_nrs those (with the argument
// number of their flags) it notifies with O_CREAT or when they open for
// writing (notify_gated): every system call that can name a directory
// entry or write an existing file through a name. sandbox/notify_create_*.go has the same
// table (TestCreateCallsMatchFilter).
static const int create_nrs[] = {
	__NR_mkdirat, __NR_mknodat, __NR_symlinkat, __NR_linkat, __NR_renameat2, __NR_bind, __NR_connect, __NR_truncate,
#ifdef __NR_renameat
	__NR_renameat,
#endif
#ifdef __NR_mkdir
	__NR_mkdir, __NR_mknod, __NR_symlink, __NR_link, __NR_rename,
#endif
#ifdef __NR_creat
	__NR_creat,
#endif
};
static const int create_open_nrs[][2] = {
	{__NR_openat, 2},
#ifdef __NR_open
	{__NR_open, 1},
#endif
};

// create_mode_nrs are the system calls (with the argument number of their
// mode) the creation gate's filter notifies when the mode gives the group
// write (notify_mode_bit): chmod in every form. The sandbox's own filter
// has refused write for others and the set-id bits already; tether takes
// group write off (sandbox/notify_chmod_linux.go).
static const int create_mode_nrs[][2] = {
	{__NR_fchmod, 1},
	{__NR_fchmodat, 2},
	{__NR_fchmodat2, 2},
#ifdef __NR_chmod
	{__NR_chmod, 1},
#endif
};

int seccompexec_create_syscalls(int *nrs, int *flags_arg, int max)
{
	int n = 0;
	for (size_t i = 0; i < sizeof create_nrs / sizeof create_nrs[0] && n < max; i++, n++) {
		nrs[n] = create_nrs[i];
		flags_arg[n] = -1;
	}
	for (size_t i = 0; i < sizeof create_open_nrs / sizeof create_open_nrs[0] && n < max; i++, n++) {
		nrs[n] = create_open_nrs[i][0];
		flags_arg[n] = create_open_nrs[i][1];
	}
	for (size_t i = 0; i < sizeof create_mode_nrs / sizeof create_mode_nrs[0] && n < max; i++, n++) {
		nrs[n] = create_mode_nrs[i][0];
		flags_arg[n] = create_mode_nrs[i][1];
	}
	return n;
}

int seccompexec_sealed_syscalls(int *nrs, int *flags_arg, int max)
{
	int n = 0;
	for (size_t i = 0; i < sizeof sealed_nrs / sizeof sealed_nrs[0] && n < max; i++, n++) {
		nrs[n] = sealed_nrs[i];
		flags_arg[n] = -1;
	}
	for (size_t i = 0; i < sizeof create_open_nrs / sizeof create_open_nrs[0] && n < max; i++, n++) {
		nrs[n] = create_open_nrs[i][0];
		flags_arg[n] = create_open_nrs[i][1];
	}
	return n;
}

// load_gate installs the gate's filter and sends its listener to the gate
// socket sock, which it closes (with create, after forking the creation
// helper that keeps it, whose pidfd goes with the listener). Of the native ABI, these wait for tether's verdict: execve and
// execveat (unless noexec); with sealed, the calls of sealed_nrs, and open
// and openat for writing (tether records those the mount plan refuses and
// lets the kernel refuse them); with observe, open, openat, creat and connect
// (which tether only records); with create, every system call that can
// name a directory entry (mkdir, mknod, symlink, link, rename in all their
// forms, creat, and open and openat with O_CREAT: the creation gate,
// sandbox/notify_create_linux.go). System calls of another ABI (i386's int
// 0x80, x32) fail with EPERM, so nothing slips past through a second
// system call table (the sandbox's own filter kills those callers anyway).
// The sandbox's filter still decides the notified calls: of two filters'
// verdicts the kernel takes the stronger, and an error beats a
// notification. With create, openat2 (whose flags the filter cannot see)
// fails with ENOSYS and io_uring_setup (io_uring's operations create names
// no filter sees) with EPERM, as the sandbox's own filter makes them (of
// two equal actions the newest filter's errno wins): without the sandbox's
// filter (--seccomp off) they would pass the gate.
// The listener makes a caller wait, once tether has received its call,
// through every signal but a fatal one (WAIT_KILLABLE_RECV): tether may be
// performing it. Returns 0 or an errno.
static int load_gate(int sock, int noexec, int observe, int create, int sealed, char *why, size_t size)
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
	if (sealed) {
		for (size_t i = 0; i < sizeof sealed_nrs / sizeof sealed_nrs[0]; i++)
			notify_nr(&g, (unsigned int)sealed_nrs[i]);
		if (!observe) // else notified whatever their flags
			for (size_t i = 0; i < sizeof create_open_nrs / sizeof create_open_nrs[0]; i++)
				notify_writing(&g, (unsigned int)create_open_nrs[i][0], create_open_nrs[i][1]);
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
		for (size_t i = 0; i < sizeof create_nrs / sizeof create_nrs[0]; i++)
			notify_nr(&g, (unsigned int)create_nrs[i]);
		for (size_t i = 0; i < sizeof create_mode_nrs / sizeof create_mode_nrs[0]; i++)
			notify_mode_bit(&g, (unsigned int)create_mode_nrs[i][0], create_mode_nrs[i][1], S_IWGRP);
		if (!observe) // else notified whatever their flags
			for (size_t i = 0; i < sizeof create_open_nrs / sizeof create_open_nrs[0]; i++)
				notify_gated(&g, (unsigned int)create_open_nrs[i][0], create_open_nrs[i][1]);
		const struct sock_filter enosys = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA));
		emit(&g, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat2, 0, 1));
		emit(&g, enosys);
		emit(&g, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1));
		emit(&g, eperm);
	}
	emit(&g, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
	if (g.len > GATE_MAX_INSNS) {
		snprintf(why, size, "building the gate's filter: %u instructions", g.len);
		return E2BIG;
	}
	struct sock_fprog prog = {.len = g.len, .filter = g.insns};
	int helper = -1;
	if (create && (helper = start_creator(sock)) < 0) {
		snprintf(why, size, "starting the creation helper");
		return errno;
	}
	int listener = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
	                            SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, &prog);
	if (listener < 0 && errno == EINVAL) // a kernel before 5.19
		listener = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
	if (listener < 0) {
		snprintf(why, size, "installing the exec gate");
		return errno;
	}
	int fds[2] = {listener, helper};
	ssize_t n = send_fds(sock, 'g', fds, helper >= 0 ? 2 : 1);
	int e = errno;
	close(listener);
	if (helper >= 0)
		close(helper);
	close(sock);
	if (n < 0) {
		snprintf(why, size, "handing the exec gate to tether");
		return e;
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
		e = load_gate(SECCOMPEXEC_GATE_FD, sp.noexec, sp.observe, sp.create, sp.sealed, why, sizeof why);
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

// supervisor_create starts a session's creation helper when tether asked
// for it (SECCOMPEXEC_CREATE_ENV names the socket), after the Landlock
// ruleset (the helper must be confined too) and before the Go runtime
// starts, and sends its pidfd (SCM_RIGHTS, one byte "h") to tether. The
// helper is under the session's filter like the supervisor (libcontainer
// loaded it, and a second listener cannot be installed beside its own):
// tether lets its calls go on. A failure ends the supervisor.
static void supervisor_create(void)
{
	const char *v = getenv(SECCOMPEXEC_CREATE_ENV);
	if (v == NULL)
		return;
	char why[256], err[128], msg[512];
	char *endp;
	long fd = strtol(v, &endp, 10);
	unsetenv(SECCOMPEXEC_CREATE_ENV);
	struct stat st;
	int e = 0;
	if (*v == '\0' || *endp != '\0' || fd < 3 || fd > 1024 || fstat((int)fd, &st) < 0 || !S_ISSOCK(st.st_mode)) {
		snprintf(why, sizeof why, "the creation gate's socket: descriptor %s", v);
		e = EBADF;
	} else {
		int pidfd = start_creator((int)fd);
		if (pidfd < 0) {
			e = errno;
			snprintf(why, sizeof why, "starting the creation helper");
		} else if (send_fds((int)fd, 'h', &pidfd, 1) < 0) {
			e = errno;
			snprintf(why, sizeof why, "handing the creation helper to tether");
		}
		if (pidfd >= 0)
			close(pidfd);
		close((int)fd);
	}
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
	if (argc >= 2 && argv != NULL && argv[1] != NULL && strcmp(argv[1], SECCOMPEXEC_SUPERVISOR_ARG) == 0) {
		supervisor_landlock();
		supervisor_create();
	}
}
