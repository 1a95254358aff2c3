// Command client sends one command to "benchsession serve" and exits with
// its status. It uses raw syscalls only, so that its own launch adds as
// little as possible to the warm-session row of scripts/bench-launch.sh.
//
// Usage: client SOCKET PROGRAM [ARG...]
package main

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

func main() {
	if len(os.Args) < 3 {
		os.Stderr.WriteString("usage: client SOCKET PROGRAM [ARG...]\n")
		os.Exit(2)
	}
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		fail(err)
	}
	if err := syscall.Connect(fd, &syscall.SockaddrUnix{Name: os.Args[1]}); err != nil {
		fail(err)
	}
	req := strings.Join(os.Args[2:], "\x00") + "\n"
	if _, err := syscall.Write(fd, []byte(req)); err != nil {
		fail(err)
	}
	var buf [16]byte
	n := 0
	for n < len(buf) {
		m, err := syscall.Read(fd, buf[n:])
		if err != nil || m == 0 {
			break
		}
		n += m
	}
	code, err := strconv.Atoi(strings.TrimSpace(string(buf[:n])))
	if err != nil {
		fail(err)
	}
	os.Exit(code)
}

func fail(err error) {
	os.Stderr.WriteString("benchsession client: " + err.Error() + "\n")
	os.Exit(125)
}
