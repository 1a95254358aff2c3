// The joining half of package nsjoin: see nsjoin.go.
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "nsjoin.h"

static void nsjoin_fail(const char *what)
{
	char msg[256];
	int n = snprintf(msg, sizeof msg, "nsjoin: %s: %s\n", what, strerror(errno));
	if (n > 0)
		while (write(2, msg, (size_t)n) < 0 && errno == EINTR)
			;
	_exit(1);
}

// The constructor runs before the Go runtime starts: setns(2) into a user
// namespace refuses a multi-threaded process. In every process but the
// joining one it returns at once.
__attribute__((constructor(101))) static void nsjoin_constructor(int argc, char **argv)
{
	if (argc < 2 || argv == NULL || argv[1] == NULL || strcmp(argv[1], NSJOIN_ARG) != 0)
		return;
	// Nothing in the sandbox may read this process's memory or
	// descriptors (it holds full capabilities in the sandbox's user
	// namespace once it has joined).
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		nsjoin_fail("making the process undumpable");
	if (setns(NSJOIN_USERNS_FD, CLONE_NEWUSER) < 0)
		nsjoin_fail("joining the sandbox's user namespace");
	if (setns(NSJOIN_MNTNS_FD, CLONE_NEWNS) < 0)
		nsjoin_fail("joining the sandbox's mount namespace");
	close(NSJOIN_USERNS_FD);
	close(NSJOIN_MNTNS_FD);
}
