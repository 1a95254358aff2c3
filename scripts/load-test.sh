#!/usr/bin/env bash
# Load test of tether serve: starts a private daemon on a unix socket in a
# temporary directory (nothing listens on the network), runs
# CLIENTS concurrent clients x CALLS tool calls through it with
# scripts/loadtest, prints calls/s and p50/p99 per call type, and stops the
# daemon. Exit 1 on any error or lost result. Bounded by TIMEOUT.
#
#   scripts/load-test.sh                 # 32 clients x 100 calls
#   CLIENTS=8 CALLS=50 scripts/load-test.sh
#   TETHER=/path/to/tether scripts/load-test.sh   # another build's daemon
#
# Before it stops the daemon it prints the daemon's resident memory (now and
# its peak) and, for the pooled sandboxes waiting then (terminal.pool), the
# memory each one holds: its cgroup's usage and its supervisor's RSS.
#
# Terminal calls run in session sandboxes and need root; without root they
# are left out (and the script says so).
set -euo pipefail
cd "$(dirname "$0")/.."

CLIENTS=${CLIENTS:-32}
CALLS=${CALLS:-100}
TIMEOUT=${TIMEOUT:-300s}

tmp=$(mktemp -d /tmp/tether-load.XXXXXX)
# A sandbox's root (an unprivileged host id) must traverse to the state
# root under it (mktemp makes it 0700).
chmod 0711 "$tmp"
daemon=
cleanup() {
	if [ -n "$daemon" ]; then
		kill -TERM "$daemon" 2>/dev/null || true
		wait "$daemon" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

# The binary lives beside the state, not above it, as an installed one does:
# libcontainer seals the binary for each sandbox's init with an overlay
# whose lower layers are the binary's directory and the sandbox's state
# directory, which overlayfs refuses when one holds the other (ELOOP), and
# then copies the whole binary into memory instead, per sandbox.
mkdir "$tmp/bin"
if [ -n "${TETHER:-}" ]; then
	cp "$TETHER" "$tmp/bin/tether"
else
	go build -tags seccomp -o "$tmp/bin/tether" ./cmd/tether
fi
go build -o "$tmp/loadtest" ./scripts/loadtest

mkdir -p "$tmp/ws/load" "$tmp/state"
cat >"$tmp/config.yaml" <<YAML
state_dir: $tmp/state
profiles:
  default:
    terminal:
      cwd: $tmp/ws
YAML

extra=()
if [ "$(id -u)" != 0 ]; then
	echo "load-test: not root, so no sandbox: terminal calls are left out" >&2
	extra+=(-no-terminal)
fi

sock="$tmp/tether.sock"
"$tmp/bin/tether" serve --config "$tmp/config.yaml" --socket "$sock" \
	--state-root "$tmp/sbx" --cgroup-prefix "tether-load-$$" 2>"$tmp/serve.log" &
daemon=$!
for _ in $(seq 100); do
	[ -S "$sock" ] && break
	sleep 0.1
done
[ -S "$sock" ] || { cat "$tmp/serve.log" >&2; echo "load-test: the daemon did not start" >&2; exit 1; }

echo "load-test: $CLIENTS clients x $CALLS calls through tether serve ($sock)"
status=0
"$tmp/loadtest" -socket "$sock" -clients "$CLIENTS" -calls "$CALLS" -timeout "$TIMEOUT" "${extra[@]}" || status=$?

# Memory: the daemon's, and each pooled sandbox's once the pool has refilled.
sleep 2
grep -E '^(VmRSS|VmHWM)' "/proc/$daemon/status" | sed 's/^/load-test: daemon /'
n=0 usage=0 rss=0
for cg in /sys/fs/cgroup/memory/tether-load-$$/default/*/; do
	[ -f "$cg/memory.usage_in_bytes" ] || continue
	pids=$(cat "$cg/cgroup.procs")
	# A pooled sandbox waiting for its command holds its supervisor only.
	grep -qs tether-supervisor "/proc/${pids%%$'\n'*}/cmdline" || continue
	n=$((n + 1))
	usage=$((usage + $(cat "$cg/memory.usage_in_bytes")))
	for p in $pids; do
		rss=$((rss + $(awk '/^VmRSS/ {print $2}' "/proc/$p/status" 2>/dev/null || echo 0)))
	done
done
if [ "$n" -gt 0 ]; then
	echo "load-test: $n idle pooled sandboxes: $((usage / n / 1024)) KiB of cgroup memory and $((rss / n)) KiB supervisor RSS each"
else
	echo "load-test: no idle pooled sandbox (this tether has no pool, or terminal.pool is 0)"
fi

kill -TERM "$daemon"
wait "$daemon" || { echo "load-test: the daemon did not stop cleanly" >&2; status=1; }
daemon=
exit $status
