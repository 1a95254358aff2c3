// The helper of package memfdnoexec: see memfdnoexec.go.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "memfdnoexec.h"

static void memfdnoexec_fail(const char *what)
{
	char msg[256];
	int n = snprintf(msg, sizeof msg, "memfd_noexec: %s: %s\n", what, strerror(errno));
	if (n > 0)
		while (write(2, msg, (size_t)n) < 0 && errno == EINTR)
			;
	_exit(1);
}

__attribute__((constructor(101))) static void memfdnoexec_constructor(int argc, char **argv)
{
	if (argc < 2 || argv == NULL || argv[1] == NULL || strcmp(argv[1], MEMFDNOEXEC_ARG) != 0)
		return;
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		memfdnoexec_fail("making the process undumpable");
	struct stat want;
	if (fstat(MEMFDNOEXEC_PIDNS_FD, &want) < 0)
		memfdnoexec_fail("reading the sandbox's pid namespace");
	if (setns(MEMFDNOEXEC_PIDNS_FD, CLONE_NEWPID) < 0)
		memfdnoexec_fail("entering the sandbox's pid namespace");
	pid_t pid = fork();
	if (pid < 0)
		memfdnoexec_fail("fork");
	if (pid == 0) {
		// Written for this process's own pid namespace: make sure it is
		// the sandbox's, never the host's.
		struct stat got;
		if (stat("/proc/self/ns/pid", &got) < 0)
			memfdnoexec_fail("reading this process's pid namespace");
		if (got.st_dev != want.st_dev || got.st_ino != want.st_ino) {
			errno = EINVAL;
			memfdnoexec_fail("not in the sandbox's pid namespace");
		}
		int fd = open("/proc/sys/vm/memfd_noexec", O_WRONLY | O_CLOEXEC);
		if (fd < 0)
			memfdnoexec_fail("opening /proc/sys/vm/memfd_noexec");
		if (write(fd, "2", 1) != 1)
			memfdnoexec_fail("writing /proc/sys/vm/memfd_noexec");
		_exit(0);
	}
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			memfdnoexec_fail("waiting for the writer");
	_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}
