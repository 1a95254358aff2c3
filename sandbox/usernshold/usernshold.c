// The holder half of package usernshold: see usernshold.go.
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

#include "usernshold.h"

// The constructor runs before the Go runtime starts (a multi-threaded
// process cannot unshare a user namespace) and before libcontainer's
// nsexec. In every process but the holder it returns at once.
__attribute__((constructor(101))) static void usernshold_constructor(int argc, char **argv)
{
	if (argc < 2 || argv == NULL || argv[1] == NULL || strcmp(argv[1], USERNSHOLD_ARG) != 0)
		return;
	char c = 'u';
	if (unshare(CLONE_NEWUSER) < 0)
		c = 'e';
	while (write(1, &c, 1) < 0 && errno == EINTR)
		;
	if (c == 'e')
		_exit(1);
	// Hold the namespace until the parent closes stdin.
	char buf[64];
	for (;;) {
		ssize_t n = read(0, buf, sizeof buf);
		if (n == 0 || (n < 0 && errno != EINTR))
			break;
	}
	_exit(0);
}
