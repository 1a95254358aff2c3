#!/usr/bin/env bash
# scripts/bench-trace.sh [-n N] — where one pooled `tether run -- /bin/true`
# and one warm-session command spend their time: a table per path of the
# stages each process passed (sandbox.Trace: TETHER_TRACE), as the median
# time from the launch of the client and the median gap from the stage
# before. The client and the daemon (tether serve, or scripts/benchsession
# for the warm session) trace into one file; scripts/benchtrace launches
# the client N times (default 40), a pause between runs so that the pool
# refills, and writes its own "launch" and "exited" lines around each.
#
# Env: TETHER=path traces that binary instead of building one.
# Needs root (cgroups), Go and a C compiler (the warm session's client, as in
# scripts/bench-launch.sh). Everything it creates is removed on exit.
set -euo pipefail

n=40
while getopts "n:h" opt; do
	case $opt in
	n) n=$OPTARG ;;
	*)
		sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
		exit 2
		;;
	esac
done
case $n in
'' | *[!0-9]* | 0)
	echo "bench-trace: -n wants a positive number, got '$n'" >&2
	exit 2
	;;
esac
if [ "$(id -u)" != 0 ]; then
	echo "bench-trace: needs root (cgroups)" >&2
	exit 1
fi

cd "$(dirname "$0")/.."
work=$(mktemp -d "${TMPDIR:-/tmp}/tether-trace.XXXXXX")
# A sandbox's root (an unprivileged host id) must traverse to the state
# roots under it.
chmod 0711 "$work"
prefix="tether-trace-$$"
pids=()
cleanup() {
	set +e
	# Both servers destroy their sandboxes on SIGTERM.
	local pid
	for pid in "${pids[@]}"; do
		kill -TERM "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	find /sys/fs/cgroup -mindepth 1 -maxdepth 3 -type d -name "$prefix-*" 2>/dev/null |
		sort -r | while read -r cg; do rmdir "$cg" 2>/dev/null; done
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Beside the state roots, not above them (see scripts/bench-launch.sh).
mkdir "$work/bin"
if [ -n "${TETHER:-}" ]; then
	cp "$TETHER" "$work/bin/tether"
else
	echo "bench-trace: building tether" >&2
	make -s build BIN="$work/bin/tether"
fi
tether="$work/bin/tether"
go build -o "$work/benchtrace" ./scripts/benchtrace
go build -tags seccomp -o "$work/benchsession" ./scripts/benchsession
cc -O2 -static -o "$work/cclient" scripts/benchsession/cclient/client.c

wait_for() { # wait_for TEST...: up to 10 s
	local i
	for i in $(seq 100); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}

echo "== tether run (pooled): $n runs, load $(cut -d' ' -f1-3 /proc/loadavg)"
state="$work/pool-state"
TETHER_TRACE="$work/pooled.trace" "$tether" serve --state-root "$state" --cgroup-prefix "$prefix-pool" \
	--socket "$work/daemon.sock" >"$work/serve.log" 2>&1 &
pids+=($!)
wait_for test -S "$state/pool.sock" || {
	echo "bench-trace: tether serve has no pool socket: $(head -n1 "$work/serve.log")" >&2
	exit 1
}
# The first run finds no pool of its placement and starts it.
"$tether" run --state-root "$state" --cgroup-prefix "$prefix-pool" -- /bin/true </dev/null
sleep 1
"$work/benchtrace" -n "$n" -trace "$work/pooled.trace" \
	"$tether" run --state-root "$state" --cgroup-prefix "$prefix-pool" -- /bin/true </dev/null

echo "== tether session (warm): $n runs, load $(cut -d' ' -f1-3 /proc/loadavg)"
TETHER_TRACE="$work/warm.trace" "$work/benchsession" serve -state-root "$work/sessions" \
	-cgroup-prefix "$prefix-session" -parent $$ "$work/session.sock" >"$work/benchsession.out" 2>&1 &
pids+=($!)
wait_for grep -q ready "$work/benchsession.out" || {
	echo "bench-trace: the session did not start: $(head -n1 "$work/benchsession.out")" >&2
	exit 1
}
"$work/benchtrace" -n "$n" -gap 20ms -trace "$work/warm.trace" "$work/cclient" "$work/session.sock" /bin/true
