// The C half of package cgwarm (see cgwarm.go for why it exists): finding
// this process's cgroup.procs file, the priming write, and the constructor
// that starts that write before the Go runtime does.

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgwarm.h"

// has_token reports whether the comma-separated list s (n bytes) holds tok.
static int has_token(const char *s, size_t n, const char *tok)
{
	size_t tn = strlen(tok);
	const char *end = s + n;
	while (s < end) {
		const char *comma = memchr(s, ',', end - s);
		size_t len = comma ? (size_t)(comma - s) : (size_t)(end - s);
		if (len == tn && memcmp(s, tok, tn) == 0)
			return 1;
		s += len + 1;
	}
	return 0;
}

// candidate writes sysroot + dir + path + "/cgroup.procs" to out and
// reports whether it fitted and the file exists.
static int candidate(char *out, size_t len, const char *sysroot, const char *dir, const char *path)
{
	if (strcmp(path, "/") == 0)
		path = "";
	int n = snprintf(out, len, "%s%s%s/cgroup.procs", sysroot, dir, path);
	return n > 0 && (size_t)n < len && access(out, F_OK) == 0;
}

// cgwarm_procs_file picks, from the text of /proc/self/cgroup, the
// cgroup.procs file of this process's own cgroup: in the v1 pids hierarchy
// on a v1 or hybrid host, else in the v2 tree (the hybrid unified mount, or
// /sys/fs/cgroup itself on a v2 host). Paths are looked up under sysroot
// ("" for the real root). It returns 1 and the path in out, or 0.
int cgwarm_procs_file(const char *proc_cgroup, const char *sysroot, char *out, size_t len)
{
	char v2[1024] = "";
	const char *line = proc_cgroup;
	while (*line) {
		const char *nl = strchr(line, '\n');
		size_t n = nl ? (size_t)(nl - line) : strlen(line);
		// hierarchy-id:controllers:path
		const char *c1 = memchr(line, ':', n);
		const char *c2 = c1 ? memchr(c1 + 1, ':', n - (size_t)(c1 + 1 - line)) : NULL;
		if (c2) {
			const char *path = c2 + 1;
			size_t plen = n - (size_t)(path - line);
			char p[1024];
			if (plen > 0 && plen < sizeof p && path[0] == '/') {
				memcpy(p, path, plen);
				p[plen] = '\0';
				if (strstr(p, "..") == NULL) {
					if (has_token(c1 + 1, (size_t)(c2 - c1 - 1), "pids")) {
						if (candidate(out, len, sysroot, "/sys/fs/cgroup/pids", p))
							return 1;
					} else if (c2 == c1 + 1 && c1 - line == 1 && line[0] == '0') {
						memcpy(v2, p, plen + 1);
					}
				}
			}
		}
		if (!nl)
			break;
		line = nl + 1;
	}
	if (v2[0] && (candidate(out, len, sysroot, "/sys/fs/cgroup/unified", v2) ||
		      candidate(out, len, sysroot, "/sys/fs/cgroup", v2)))
		return 1;
	if (len > 0)
		out[0] = '\0';
	return 0;
}

// cgwarm_prime moves this process into the cgroup it is already in. Best
// effort: without root or cgroupfs nothing happens.
void cgwarm_prime(void)
{
	char text[8192], file[1200], pid[24];
	int fd = open("/proc/self/cgroup", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n = read(fd, text, sizeof text - 1);
	close(fd);
	if (n <= 0)
		return;
	text[n] = '\0';
	if (!cgwarm_procs_file(text, "", file, sizeof file))
		return;
	fd = open(file, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	int len = snprintf(pid, sizeof pid, "%d", (int)getpid());
	if (write(fd, pid, (size_t)len) < 0) {
		// Nothing to do: the move was only ever an optimisation.
	}
	close(fd);
}

static void *prime_thread(void *arg)
{
	(void)arg;
	cgwarm_prime();
	return NULL;
}

// cgwarm_wanted reports whether `tether run` with these arguments (argv[1]
// is "run") builds a sandbox of its own, so that priming helps it. Not when
// it runs in a daemon's session (--session), and not when a daemon serves
// its state root's pool socket (--state-root DIR, else $TETHER_STATE_ROOT,
// else root's default /run/tether): it will most likely take a pooled
// sandbox, and the priming write would only hold up every fork on the host
// (the write takes the cgroup lock that fork takes for reading) while the
// pooled command starts. A run that finds no pool after all primes from Go
// (Runner.RunGated), a little later.
int cgwarm_wanted(int argc, char **argv, const char *env_state_root)
{
	const char *state = NULL;
	for (int i = 2; i < argc && argv[i] != NULL; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--") == 0)
			break;
		if (strcmp(a, "--session") == 0 || strncmp(a, "--session=", 10) == 0)
			return 0;
		if (strcmp(a, "--state-root") == 0 && i + 1 < argc && argv[i + 1] != NULL)
			state = argv[++i];
		else if (strncmp(a, "--state-root=", 13) == 0)
			state = a + 13;
	}
	if (state == NULL || state[0] == '\0')
		state = (env_state_root != NULL && env_state_root[0] != '\0') ? env_state_root : "/run/tether";
	char sock[4096];
	int n = snprintf(sock, sizeof sock, "%s/pool.sock", state);
	if (n > 0 && (size_t)n < sizeof sock && access(sock, F_OK) == 0)
		return 0;
	return 1;
}

// cgwarm_early runs when the binary is loaded, before the Go runtime
// starts. In `tether run` started as root it begins the priming write on a
// thread of its own, ~0.3 ms into the process instead of the ~4 ms a Go
// package initialiser would start it at: the grace period it waits for is
// 5-10 ms, and whatever of it has not passed when libcontainer places the
// container is added to the launch. glibc passes constructors argc and argv.
// The thread blocks every signal, so signals meant for the Go program never
// land on it, and ends once the write returns.
__attribute__((constructor)) static void cgwarm_early(int argc, char **argv)
{
	if (argc < 2 || argv == NULL || argv[0] == NULL || argv[1] == NULL)
		return;
	const char *base = strrchr(argv[0], '/');
	base = base ? base + 1 : argv[0];
	if (strcmp(base, "tether") != 0 || strcmp(argv[1], "run") != 0 || geteuid() != 0)
		return;
	if (!cgwarm_wanted(argc, argv, getenv("TETHER_STATE_ROOT")))
		return;

	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_t attr;
	pthread_t thread;
	if (pthread_attr_init(&attr) == 0) {
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		pthread_create(&thread, &attr, prime_thread, NULL);
		pthread_attr_destroy(&attr);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}
