// The keeper half of package keeper: see keeper.go.
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "keeper.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

// pair is a (state root, cgroup prefix) with its outstanding sandboxes.
struct pair {
	char *line; // "ROOT\tPREFIX", owned
	long n;
};

static struct pair pairs[KEEPER_MAX_PAIRS];

// hold applies one line of the owner's ("+ROOT\tPREFIX" or "-ROOT\tPREFIX").
// A malformed line is ignored: the owner is tether itself, and a keeper
// that reaps is always safe (the reaper spares what a live owner holds).
static void hold(const char *line)
{
	long delta = line[0] == '+' ? 1 : line[0] == '-' ? -1 : 0;
	const char *key = line + 1;
	if (delta == 0 || strchr(key, '\t') == NULL)
		return;
	int free_slot = -1;
	for (int i = 0; i < KEEPER_MAX_PAIRS; i++) {
		if (pairs[i].line == NULL) {
			if (free_slot < 0)
				free_slot = i;
			continue;
		}
		if (strcmp(pairs[i].line, key) == 0) {
			pairs[i].n += delta;
			if (pairs[i].n <= 0) {
				free(pairs[i].line);
				pairs[i].line = NULL;
				pairs[i].n = 0;
			}
			return;
		}
	}
	if (delta < 0 || free_slot < 0)
		return; // untracked: the next tether's own reaping covers it
	pairs[free_slot].line = strdup(key);
	pairs[free_slot].n = pairs[free_slot].line != NULL;
}

// reap executes the reaping process for every pair with outstanding
// sandboxes; it returns only when there is none or the exec failed.
static void reap(void)
{
	static char *argv[2 + 2 * KEEPER_MAX_PAIRS + 1];
	int argc = 0;
	argv[argc++] = "/proc/self/exe";
	argv[argc++] = KEEPER_REAP_ARG;
	for (int i = 0; i < KEEPER_MAX_PAIRS; i++) {
		if (pairs[i].line == NULL || pairs[i].n <= 0)
			continue;
		char *tab = strchr(pairs[i].line, '\t');
		*tab = '\0';
		argv[argc++] = pairs[i].line;
		argv[argc++] = tab + 1;
	}
	argv[argc] = NULL;
	if (argc == 2)
		return;
	execv(argv[0], argv);
}

// keeper_main never returns: argv is [exe, KEEPER_ARG, owner pid].
static void keeper_main(int argc, char **argv)
{
	// Signals meant for the owner (a terminal's, a service manager's
	// SIGTERM to the whole group) must not end the watch; SIGKILL can.
	int ignored[] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGPIPE, SIGUSR1, SIGUSR2, SIGTSTP, SIGTTIN, SIGTTOU};
	for (size_t i = 0; i < sizeof ignored / sizeof ignored[0]; i++)
		signal(ignored[i], SIG_IGN);
	if (argc < 3)
		_exit(2);
	pid_t owner = (pid_t)atoi(argv[2]);
	// The owner's pidfd, taken while the owner is still our parent (so it
	// is that process, not a reused pid): readable once its exit is
	// complete, every descriptor (and so every lock) closed.
	int pidfd = owner > 0 ? (int)syscall(SYS_pidfd_open, owner, 0) : -1;
	if (pidfd >= 0 && getppid() != owner) {
		close(pidfd); // the owner is already gone
		pidfd = -1;
	}

	static char buf[KEEPER_MAX_LINE + 1];
	size_t len = 0;
	int skipping = 0; // inside an over-long line
	for (;;) {
		ssize_t n = read(0, buf + len, KEEPER_MAX_LINE - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; // end-of-file: the owner's last copy of the pipe closed
		len += (size_t)n;
		char *start = buf, *nl;
		while ((nl = memchr(start, '\n', len - (size_t)(start - buf))) != NULL) {
			*nl = '\0';
			if (!skipping)
				hold(start);
			skipping = 0;
			start = nl + 1;
		}
		len -= (size_t)(start - buf);
		memmove(buf, start, len);
		if (len == KEEPER_MAX_LINE) {
			skipping = 1;
			len = 0;
		}
	}
	if (pidfd >= 0) {
		struct pollfd p = {.fd = pidfd, .events = POLLIN};
		while (poll(&p, 1, -1) < 0 && errno == EINTR)
			;
	}
	reap();
	_exit(0);
}

// The constructor runs before the Go runtime starts and before nsexec's
// (default priority). In every process but a keeper it returns at once.
__attribute__((constructor(102))) static void keeper_constructor(int argc, char **argv)
{
	if (argc >= 2 && argv != NULL && argv[1] != NULL && strcmp(argv[1], KEEPER_ARG) == 0)
		keeper_main(argc, argv);
}
