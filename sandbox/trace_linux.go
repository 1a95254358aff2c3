package sandbox

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// Launch tracing, for finding where a call's time goes
// (scripts/bench-trace.sh): with TETHER_TRACE set to a file, every process
// of this binary (client, daemon) appends one line per stage it passes,
// "MONOTONIC_NS PID STAGE", with one write on an O_APPEND descriptor, so
// the lines of processes tracing into one file interleave whole and their
// times compare (CLOCK_MONOTONIC is the machine's). Unset, Trace costs a
// nil check. The file is opened once, at package init, before main runs;
// a process that cannot open it (a sandbox's init, which does not see the
// host path) traces nothing.
var traceFile = openTrace()

func openTrace() *os.File {
	path := os.Getenv("TETHER_TRACE")
	if path == "" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil
	}
	return f
}

// Trace records that this process reached stage, when TETHER_TRACE is set.
func Trace(stage string) {
	if traceFile == nil {
		return
	}
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts) != nil {
		return
	}
	line := strconv.AppendInt(nil, ts.Nano(), 10)
	line = append(line, ' ')
	line = strconv.AppendInt(line, int64(os.Getpid()), 10)
	line = append(line, ' ')
	line = append(line, stage...)
	line = append(line, '\n')
	_, _ = traceFile.Write(line)
}
