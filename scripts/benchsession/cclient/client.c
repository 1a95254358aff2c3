/*
 * client SOCKET PROGRAM [ARG...]: sends one command to "benchsession serve"
 * and exits with its status, like ../client, in C: a static C binary starts
 * as fast as /bin/true does, so the warm-session row of
 * scripts/bench-launch.sh times the round trip and the command in the
 * session, not the start-up of a Go runtime (about 2 ms more per launch
 * on this project's machines; ../client is the fallback without a C
 * compiler). Protocol: the NUL-separated argv and a newline; the reply is
 * the exit status as a decimal line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static void fail(const char *what) {
	perror(what);
	exit(125);
}

int main(int argc, char **argv) {
	if (argc < 3) {
		fputs("usage: client SOCKET PROGRAM [ARG...]\n", stderr);
		return 2;
	}
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	if (strlen(argv[1]) >= sizeof(addr.sun_path)) {
		fputs("benchsession client: socket path too long\n", stderr);
		return 125;
	}
	strcpy(addr.sun_path, argv[1]);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0)
		fail("benchsession client: socket");
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0)
		fail("benchsession client: connect");
	char req[65536];
	size_t n = 0;
	for (int i = 2; i < argc; i++) {
		size_t l = strlen(argv[i]);
		if (n + l + 2 > sizeof(req)) {
			fputs("benchsession client: command too long\n", stderr);
			return 125;
		}
		memcpy(req + n, argv[i], l);
		n += l;
		req[n++] = i + 1 < argc ? '\0' : '\n';
	}
	for (size_t off = 0; off < n;) {
		ssize_t w = write(fd, req + off, n - off);
		if (w <= 0)
			fail("benchsession client: write");
		off += (size_t)w;
	}
	char buf[16];
	size_t got = 0;
	while (got < sizeof(buf) - 1) {
		ssize_t r = read(fd, buf + got, sizeof(buf) - 1 - got);
		if (r < 0)
			fail("benchsession client: read");
		if (r == 0)
			break;
		got += (size_t)r;
	}
	buf[got] = '\0';
	char *end;
	long code = strtol(buf, &end, 10);
	if (end == buf || (*end != '\n' && *end != '\0') || code < 0 || code > 255) {
		fputs("benchsession client: bad reply\n", stderr);
		return 125;
	}
	return (int)code;
}
