#!/usr/bin/env bash
# scripts/bench-launch.sh [-n N] [-j] — how long it takes to launch /bin/true
# in each isolation mechanism, measured in one run on this machine:
#
#   plain exec   fork/exec of /bin/true, the baseline
#   unshare      util-linux unshare: mount, pid (+ /proc), ipc, uts, net namespaces
#   bwrap        bubblewrap: --unshare-all, host root read-only, /dev and /proc
#   runc run     Debian's runc with a `runc spec` bundle on a busybox root
#                (read-only, namespaces pid, net, ipc, uts, mount; no seccomp
#                filter, no resource limits), again with the filter tether
#                applies (scripts/seccompprofile: Docker's default profile),
#                and again with that filter and the default profile's
#                per-sandbox limits (memory 256 MiB, pids 64, one CPU of
#                quota), which is what `tether run` applies: the like-for-like
#                row for it
#   tether run   bin/tether run -- /bin/true (the host layout, the default
#                profile's limits), again with --rootfs on the busybox root
#                that runc uses, and once more without seccomp, as runc's
#                default bundle runs
#   tether run (pooled)
#                the same command next to a `tether serve` of its state root:
#                it takes a pre-started sandbox from the daemon's pool
#                (terminal.pool), runs /bin/true in it, and the sandbox is
#                destroyed; the pool refills in the background
#
# Prints one table: name, median ms, p95 ms and the ratio of each median to the
# plain exec median. Runs are interleaved (run i of every row, then run i+1,
# each round in an order of its own), so load elsewhere on the machine, and
# what a launch leaves behind (a container's teardown, the pool's refill),
# falls on every row alike. A row that cannot
# run here says "not available (reason)" and gets no number.
#
# Options: -n N timed runs per row (default 200); -j prints JSON instead.
# Env: TETHER=path uses that tether binary instead of building one;
# TETHER_BASELINE=path adds the tether rows (the pooled one with its own
# daemon) again for that binary (suffix "(baseline)"), for an A/B comparison of two builds in one run.
# Needs: Go, root for runc and tether run (other rows run unprivileged), the
# packages bubblewrap, runc, util-linux, busybox-static (scripts/provision.sh).
# Everything it creates (a temp dir, runc containers and their cgroups) is
# removed on exit.
set -euo pipefail

n=200
json=()
while getopts "n:jh" opt; do
	case $opt in
	n) n=$OPTARG ;;
	j) json=(-json) ;;
	*)
		sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
		exit 2
		;;
	esac
done
case $n in
'' | *[!0-9]* | 0)
	echo "bench-launch: -n wants a positive number, got '$n'" >&2
	exit 2
	;;
esac

cd "$(dirname "$0")/.."
repo=$PWD
work=$(mktemp -d "${TMPDIR:-/tmp}/tether-bench.XXXXXX")
# A sandbox's root (an unprivileged host id) must traverse to the session's
# state root under it.
chmod 0711 "$work"
prefix="tether-bench-$$"
runc_root="$work/runc-state"

session_pid=""
pool_pids=()
cleanup() {
	set +e
	# The pooled rows' daemons destroy their pools on SIGTERM.
	local pid
	for pid in "${pool_pids[@]}"; do
		kill -TERM "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	# The warm session's server closes its session on SIGTERM; wait for it,
	# so its cgroups and state are gone before ours are checked.
	if [ -n "$session_pid" ]; then
		kill -TERM "$session_pid" 2>/dev/null
		wait "$session_pid" 2>/dev/null
	fi
	# runc run deletes its container when the process exits; anything left
	# (an interrupted run) is ours by the unique prefix.
	if command -v runc >/dev/null 2>&1 && [ -d "$runc_root" ]; then
		for id in $(runc --root "$runc_root" list -q 2>/dev/null | grep "^$prefix-"); do
			runc --root "$runc_root" kill "$id" KILL 2>/dev/null
			runc --root "$runc_root" delete -f "$id" 2>/dev/null
		done
	fi
	# cgroups named after our container ids, in every hierarchy (v1, the
	# hybrid unified tree, v2).
	find /sys/fs/cgroup -mindepth 1 -maxdepth 3 -type d -name "$prefix-*" 2>/dev/null |
		sort -r | while read -r cg; do rmdir "$cg" 2>/dev/null; done
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "bench-launch: building the timing helper" >&2
go build -o "$work/benchlaunch" ./scripts/benchlaunch

# tether: the given binary, or one built from this checkout, in $work/bin:
# beside the state roots, not above them, as an installed one is.
# libcontainer seals the binary for each sandbox's init with an overlay of
# the binary's directory and the sandbox's state directory, which overlayfs
# refuses when one holds the other (ELOOP), and then copies the whole
# binary per sandbox.
mkdir "$work/bin"
tether=""
if [ -n "${TETHER:-}" ]; then
	cp "$TETHER" "$work/bin/tether"
	tether="$work/bin/tether"
fi
baseline=""
if [ -n "${TETHER_BASELINE:-}" ]; then
	cp "$TETHER_BASELINE" "$work/bin/tether-baseline"
	baseline="$work/bin/tether-baseline"
fi
tether_reason=""
if [ -z "$tether" ]; then
	echo "bench-launch: building tether" >&2
	# Built as users build it.
	if make -s build BIN="$work/bin/tether" >"$work/tether-build.log" 2>&1; then
		tether="$work/bin/tether"
	else
		tether_reason="go build ./cmd/tether failed: $(grep -m1 . "$work/tether-build.log" || true)"
	fi
fi

# A busybox root for runc, built by tether when it can, else by the script.
rootfs="$work/rootfs"
rootfs_ok=""
if [ -n "$tether" ] && "$tether" rootfs build --from busybox "$rootfs" >/dev/null 2>"$work/rootfs.log"; then
	rootfs_ok=1
elif rm -rf "$rootfs" && ./scripts/rootfs-busybox.sh "$rootfs" >"$work/rootfs.log" 2>&1; then
	rootfs_ok=1
fi

rows=()
add_row() { rows+=("$@" ";;"); }
unavailable() { rows+=("$1" --unavailable "$2" ";;"); }

add_row "plain exec" /bin/true

if command -v unshare >/dev/null 2>&1 && unshare --mount --pid --fork --mount-proc --ipc --uts --net /bin/true 2>/dev/null; then
	add_row unshare unshare --mount --pid --fork --mount-proc --ipc --uts --net /bin/true
else
	unavailable unshare "unshare failed here (needs root or user namespaces; package util-linux)"
fi

bwrap_args=(--unshare-all --ro-bind / / --dev /dev --proc /proc /bin/true)
if ! command -v bwrap >/dev/null 2>&1; then
	unavailable bwrap "bwrap not installed (package bubblewrap)"
elif err=$(bwrap "${bwrap_args[@]}" 2>&1); then
	add_row bwrap bwrap "${bwrap_args[@]}"
else
	unavailable bwrap "bwrap failed: ${err%%$'\n'*}"
fi

# runc_bundle_row NAME DIR [SECCOMP_JSON [LIMITS]]: a `runc spec` bundle in
# DIR that runs /bin/true on the read-only busybox root (with that seccomp
# filter, when given; with LIMITS "profile", the default profile's
# per-sandbox memory, pids and cpu limits, as tether run applies them); adds
# the row if a probe run works, else says why not.
runc_bundle_row() {
	local name=$1 bundle=$2 seccomp=${3:-} limits=${4:-}
	mkdir -p "$bundle"
	(cd "$bundle" && runc spec)
	python3 - "$bundle/config.json" "$rootfs" "$seccomp" "$limits" <<'EOF'
import json, sys
path, rootfs, seccomp, limits = sys.argv[1:5]
with open(path) as f:
    c = json.load(f)
c["process"]["args"] = ["/bin/true"]
c["process"]["terminal"] = False
c["root"] = {"path": rootfs, "readonly": True}
if seccomp:
    with open(seccomp) as f:
        c["linux"]["seccomp"] = json.load(f)
if limits == "profile":
    # config.DefaultSandboxMemory, DefaultSandboxPids, DefaultCPUs.
    c["linux"].setdefault("resources", {}).update({
        "memory": {"limit": 256 << 20},
        "pids": {"limit": 64},
        "cpu": {"quota": 100000, "period": 100000},
    })
with open(path, "w") as f:
    json.dump(c, f, indent=1)
EOF
	local id err
	id="$prefix-$(basename "$bundle")"
	if ! err=$(runc --root "$runc_root" run --bundle "$bundle" "$id-probe" 2>&1 </dev/null); then
		unavailable "$name" "runc run failed: ${err%%$'\n'*}"
		return
	fi
	add_row "$name" runc --root "$runc_root" run --bundle "$bundle" "$id-{i}"
}

runc_row() {
	if ! command -v runc >/dev/null 2>&1; then
		unavailable "runc run" "runc not installed (package runc)"
		return
	fi
	if [ "$(id -u)" -ne 0 ]; then
		unavailable "runc run" "needs root"
		return
	fi
	if [ -z "$rootfs_ok" ]; then
		unavailable "runc run" "no busybox root: $(tail -n1 "$work/rootfs.log")"
		return
	fi
	runc_bundle_row "runc run" "$work/bundle"

	# The same bundle with the seccomp filter tether applies (Docker's
	# default profile, as Docker runs runc): like for like with `tether run`.
	local name="runc run + tether's seccomp filter"
	if ! go build -tags seccomp -o "$work/seccompprofile" ./scripts/seccompprofile 2>"$work/seccompprofile.log" ||
		! "$work/seccompprofile" >"$work/seccomp.json" 2>>"$work/seccompprofile.log"; then
		unavailable "$name" "printing the filter failed: $(grep -m1 . "$work/seccompprofile.log" || true)"
		return
	fi
	runc_bundle_row "$name" "$work/bundle-seccomp" "$work/seccomp.json"
	# And with the limits tether run applies (the default profile's
	# per-sandbox memory, pids and cpu): the row to compare tether run with.
	runc_bundle_row "runc run + seccomp + the profile's limits" "$work/bundle-limits" "$work/seccomp.json" profile
}
runc_row

# tether_row BINARY SUFFIX: the tether rows for one binary.
tether_row() {
	local tether=$1 suffix=$2
	if [ -z "$tether" ]; then
		unavailable "tether run$suffix" "$tether_reason"
		return
	fi
	if ! "$tether" run --help >/dev/null 2>&1; then
		unavailable "tether run$suffix" "this tether has no run command yet"
		return
	fi
	local err
	if ! err=$("$tether" run -- /bin/true 2>&1 </dev/null); then
		unavailable "tether run$suffix" "tether run -- /bin/true failed: ${err%%$'\n'*}"
		return
	fi
	add_row "tether run$suffix" "$tether" run -- /bin/true
	# The same root as the runc row, for a like-for-like comparison.
	if [ -n "$rootfs_ok" ] && "$tether" run --rootfs "$rootfs" -- /bin/true >/dev/null 2>&1 </dev/null; then
		add_row "tether run --rootfs busybox$suffix" "$tether" run --rootfs "$rootfs" -- /bin/true
		# runc's `runc spec` bundle has no seccomp filter; tether applies
		# Docker's by default. This row compares like with like.
		add_row "tether run --rootfs busybox --seccomp off$suffix" "$tether" run --rootfs "$rootfs" --seccomp off -- /bin/true
	fi
}
tether_row "$tether" ""

# pooled_row BINARY SUFFIX: tether run next to a daemon (of the same
# binary) for its state root: a pooled sandbox.
pooled_row() {
	local tether=$1 suffix=$2
	local row="tether run (pooled)$suffix"
	if [ -z "$tether" ]; then
		unavailable "$row" "$tether_reason"
		return
	fi
	if [ "$(id -u)" != 0 ]; then
		unavailable "$row" "needs root (cgroups)"
		return
	fi
	if ! "$tether" serve --help 2>/dev/null | grep -q state-root; then
		unavailable "$row" "this tether has no tether serve --state-root"
		return
	fi
	local tag=${#pool_pids[@]}
	local state="$work/pool-state$tag" pprefix="$prefix-pool$tag" log="$work/pool-serve$tag.log"
	"$tether" serve --state-root "$state" --cgroup-prefix "$pprefix" --socket "$work/pool-daemon$tag.sock" \
		>"$log" 2>&1 &
	pool_pids+=($!)
	local i
	for i in $(seq 100); do
		[ -S "$state/pool.sock" ] && break
		sleep 0.1
	done
	if [ ! -S "$state/pool.sock" ]; then
		unavailable "$row" "tether serve has no pool socket: $(grep -m1 . "$log" || true)"
		return
	fi
	# The first run finds no pool of its placement and starts it.
	local err
	if ! err=$("$tether" run --state-root "$state" --cgroup-prefix "$pprefix" -- /bin/true 2>&1 </dev/null); then
		unavailable "$row" "tether run failed next to the daemon: ${err%%$'\n'*}"
		return
	fi
	add_row "$row" "$tether" run --state-root "$state" --cgroup-prefix "$pprefix" -- /bin/true
}
pooled_row "$tether" ""
if [ -n "$baseline" ]; then
	tether_row "$baseline" " (baseline)"
	pooled_row "$baseline" " (baseline)"
fi

# A warm session (DESIGN.md §5: "commands in a warm session should cost
# little more than a plain fork/exec").
warm_session_row() {
	# scripts/benchsession serves one warm session (as the daemon will);
	# its tiny client (C, else raw-syscall Go) is what gets launched and
	# timed. cleanup
	# stops the server (it would also exit once this script is gone).
	local row="tether session (warm)"
	if [ "$(id -u)" != 0 ]; then
		unavailable "$row" "needs root (cgroups)"
		return
	fi
	if ! go build -tags seccomp -o "$work/benchsession" ./scripts/benchsession 2>"$work/benchsession-build.log" ||
		! go build -o "$work/benchsession-client" ./scripts/benchsession/client 2>>"$work/benchsession-build.log"; then
		unavailable "$row" "building scripts/benchsession failed: $(head -n1 "$work/benchsession-build.log")"
		return
	fi
	# The C client starts as fast as /bin/true does; the Go one pays the
	# Go runtime's start-up (~2 ms) on every launch, which is the
	# benchmark's, not the session's. The Go client stays the fallback.
	if command -v cc >/dev/null 2>&1 &&
		cc -O2 -static -o "$work/benchsession-cclient" scripts/benchsession/cclient/client.c 2>>"$work/benchsession-build.log"; then
		mv "$work/benchsession-cclient" "$work/benchsession-client"
	fi
	"$work/benchsession" serve -state-root "$work/sessions" -cgroup-prefix "$prefix-session" \
		-parent $$ "$work/session.sock" >"$work/benchsession.out" 2>&1 &
	session_pid=$!
	local i
	for i in $(seq 100); do
		grep -q ready "$work/benchsession.out" 2>/dev/null && break
		sleep 0.1
	done
	if ! grep -q ready "$work/benchsession.out"; then
		unavailable "$row" "the session did not start: $(head -n1 "$work/benchsession.out")"
		return
	fi
	add_row "$row" "$work/benchsession-client" "$work/session.sock" /bin/true
}
warm_session_row

echo "bench-launch: timing /bin/true, $n runs per row (interleaved), $(nproc) CPUs, kernel $(uname -r)" >&2
"$work/benchlaunch" -n "$n" "${json[@]}" "${rows[@]}"
