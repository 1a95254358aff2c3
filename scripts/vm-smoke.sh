#!/usr/bin/env bash
# scripts/vm-smoke.sh TETHER — `scripts/vm-test.sh --smoke` runs this inside
# the cgroup v2 guest (as root): one sandboxed command with memory, pids and
# cpu limits, whose cgroup v2 files are read back from the guest while it
# runs; an OOM kill reported from memory.events; and no cgroup left behind.
set -euo pipefail
tether=$1
fail() { echo "vm-smoke: FAIL: $*" >&2; exit 1; }
export TETHER_STATE_ROOT=/run/tether-smoke TETHER_CGROUP_PREFIX=tether-smoke
profile=/sys/fs/cgroup/tether-smoke/default
ws=$(mktemp -d)
cd "$ws"

# --yolo: nobody can answer an approval prompt here (python3 -c needs one).
# The command says it runs (its limits are set before it starts), then waits
# in the sandbox until they are read (the workspace, the current directory,
# is shared with it).
"$tether" run --json --yolo --memory 64M --pids 32 --cpus 0.5 --timeout 120s \
	-c 'touch started; while [ ! -e go ]; do sleep 0.1; done; echo done' >run.json &
pid=$!
cg=""
for _ in $(seq 1200); do
	kill -0 "$pid" 2>/dev/null || break
	if [ ! -e started ]; then
		sleep 0.1
		continue
	fi
	for d in "$profile"/*/; do
		# cgroup files have no size: read them.
		if [ -n "$(cat "$d/cgroup.procs" 2>/dev/null)" ]; then
			cg=${d%/}
			break 2
		fi
	done
	sleep 0.1
done
if [ -z "$cg" ]; then
	find /sys/fs/cgroup -maxdepth 3 -type d >&2
	cat run.json >&2
	fail "no container cgroup with processes under $profile after 120s"
fi
echo "vm-smoke: container cgroup $cg"
for f in memory.max pids.max cpu.max; do echo "vm-smoke: $f = $(cat "$cg/$f")"; done
[ "$(cat "$cg/memory.max")" = 67108864 ] || fail "memory.max is $(cat "$cg/memory.max"), want 67108864"
[ "$(cat "$cg/pids.max")" = 32 ] || fail "pids.max is $(cat "$cg/pids.max"), want 32"
[ "$(cat "$cg/cpu.max")" = "50000 100000" ] || fail "cpu.max is $(cat "$cg/cpu.max"), want 50000 100000"
touch go
wait "$pid" || fail "tether run exited $?: $(cat run.json)"
cat run.json
python3 - run.json <<'PY' || fail "result of the limited command"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["exit_code"] == 0 and r["stdout"] == "done\n", r
assert not r.get("not_enforced"), r["not_enforced"]
assert r["cpu_time_ns"] > 0 and r["peak_memory_bytes"] > 0, r
PY
[ ! -e "$cg" ] || fail "$cg is left behind"

set +e
"$tether" run --json --yolo --memory 32M -- python3 -c 'b = bytearray(256 << 20)' >oom.json
rc=$?
set -e
cat oom.json
python3 - oom.json <<'PY' || fail "the OOM kill (exit $rc) is not reported"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["oom_killed"] is True and r["exit_code"] == 137, r
assert 0 < r["peak_memory_bytes"] <= 32 << 20, r
PY
# The profile's cgroup may be gone already: that is no leftover either.
left=$(find "$profile" -mindepth 1 -type d 2>/dev/null || true)
[ -z "$left" ] || fail "container cgroups left: $left"
"$tether" gc
[ ! -e /sys/fs/cgroup/tether-smoke ] || fail "tether gc left /sys/fs/cgroup/tether-smoke"
echo "vm-smoke: ok"
