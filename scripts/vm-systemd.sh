#!/usr/bin/env bash
# scripts/vm-systemd.sh TETHER — `scripts/vm-test.sh --systemd` runs this
# inside the guest booted with systemd (as root), never on a host. It installs
# contrib/tether.service as documented, starts it, runs a sandboxed call
# through the API and checks from the guest, while the call runs, that its
# cgroup is inside the unit's delegated subtree with the profile's limits;
# then stops the unit and checks that nothing is left behind.
set -euo pipefail
tether=$1
src=$(cd "$(dirname "$0")/.." && pwd)
fail() {
	echo "vm-systemd: FAIL: $*" >&2
	systemctl status tether --no-pager >&2 || true
	journalctl -u tether --no-pager -n 50 >&2 || true
	exit 1
}
unit=/sys/fs/cgroup/system.slice/tether.service
sock=/run/tether/tether.sock
ws=/srv/tether-ws

# The guest booted cleanly: no unit failed on the way to multi-user.target,
# which tether-vm.service (running this) is ordered after. A guest whose
# journald or udevd did not start is not the host the unit is promised for.
failed=$(systemctl list-units --state=failed --no-legend --plain | awk '{ print $1 }')
if [ -n "$failed" ]; then
	for u in $failed; do systemctl status "$u" --no-pager -n 20 >&2 || true; done
	fail "units failed at boot: $(echo $failed)"
fi
# (Not systemd-analyze time: the boot is not finished while this unit runs.)
reached=$(systemctl show -P ActiveEnterTimestampMonotonic multi-user.target)
echo "vm-systemd: booted with no failed unit; multi-user.target reached after $(awk -v u="$reached" 'BEGIN { printf "%.1f", u / 1e6 }')s of uptime"
# The slowest starts, against systemd's deadlines (vm-test.sh stretches
# them under TCG): the evidence when a boot under load fails.
systemd-analyze blame --no-pager 2>&1 | head -n 8 | sed 's/^ */vm-systemd: started in /'

install -m 0755 "$tether" /usr/local/bin/tether
install -m 0644 "$src/contrib/tether.service" /etc/systemd/system/tether.service
install -d -m 0755 /etc/tether "$ws"
cat >/etc/tether/config.yaml <<YAML
profiles:
  default:
    terminal:
      cwd: $ws
      limits: {memory: 512MiB, pids: 512, sandbox_memory: 96MiB, sandbox_pids: 48, cpus: 0.5}
YAML
systemctl daemon-reload
systemctl start tether
for _ in $(seq 600); do [ -S "$sock" ] && break; sleep 0.2; done
[ -S "$sock" ] || fail "no socket $sock after 120s"

main=$(systemctl show -p MainPID --value tether)
echo "vm-systemd: tether serve is pid $main in $(cat /proc/"$main"/cgroup)"
python3 -c 'import os,sys; assert os.getxattr(sys.argv[1], "trusted.delegate") == b"1"' "$unit" ||
	fail "$unit is not marked delegated (trusted.delegate)"
[ "$(cat /proc/"$main"/cgroup)" = "0::/system.slice/tether.service/tether-daemon" ] ||
	fail "tether serve did not move into its leaf: $(cat /proc/"$main"/cgroup)"

api() { curl -sS --fail-with-body --unix-socket "$sock" "$@"; }
session=$(api -X POST http://tether/v1/sessions -d '{"profile":"default"}')
echo "vm-systemd: session $session"
token=$(echo "$session" | python3 -c 'import json,sys; print(json.load(sys.stdin)["client_token"])')
id=$(echo "$session" | python3 -c 'import json,sys; print(json.load(sys.stdin)["session"])')

# The command says it runs, then waits in its sandbox until the limits are
# read from here.
api -X POST "http://tether/v1/sessions/$id/calls" -H "Tether-Client-Token: $token" -d '{"calls": [
  {"id": "c1", "name": "terminal", "arguments": {"command": "touch started; while [ ! -e go ]; do sleep 0.1; done; echo done", "timeout": 150}}]}' >call.json &
call=$!
profile=$unit/tether/default
cg=""
for _ in $(seq 1200); do
	kill -0 "$call" 2>/dev/null || break
	# Its limits are set before the command starts.
	if [ ! -e "$ws/started" ]; then
		sleep 0.1
		continue
	fi
	for d in "$profile"/*/; do
		[ -d "$d" ] || continue
		if [ -n "$(find "$d" -name cgroup.procs -exec cat {} + 2>/dev/null)" ]; then
			cg=${d%/}
			break 2
		fi
	done
	sleep 0.1
done
if [ -z "$cg" ]; then
	find /sys/fs/cgroup -maxdepth 4 -type d -name '*tether*' >&2
	cat call.json >&2 || true
	fail "no sandbox cgroup with processes under $profile"
fi
echo "vm-systemd: sandbox cgroup $cg"
for f in "$profile/memory.max" "$profile/pids.max" "$cg/memory.max" "$cg/pids.max" "$cg/cpu.max"; do
	echo "vm-systemd: $f = $(cat "$f")"
done
[ "$(cat "$profile/memory.max")" = $((512 << 20)) ] || fail "profile memory.max"
[ "$(cat "$profile/pids.max")" = 512 ] || fail "profile pids.max"
[ "$(cat "$cg/memory.max")" = $((96 << 20)) ] || fail "sandbox memory.max"
[ "$(cat "$cg/pids.max")" = 48 ] || fail "sandbox pids.max"
[ ! -e /sys/fs/cgroup/tether ] || fail "a cgroup outside the delegated subtree: /sys/fs/cgroup/tether"
touch "$ws/go"
wait "$call" || fail "the call failed: $(cat call.json)"
cat call.json
python3 - call.json <<'PY' || fail "the call's result"
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
assert r["class"] == "succeeded" and r["output"]["stdout"] == "done\n", r
PY

systemctl stop tether
state=$(systemctl show -p ActiveState --value tether)
[ "$state" = inactive ] || fail "the unit is $state after stop"
[ ! -e "$unit" ] || fail "$unit is left: $(find "$unit" -type d)"
[ ! -e /run/tether ] || fail "/run/tether is left: $(ls -A /run/tether)"
if grep -q '/run/tether' /proc/self/mountinfo; then fail "mounts left: $(grep /run/tether /proc/self/mountinfo)"; fi
if pgrep -x tether >/dev/null; then fail "processes left: $(pgrep -ax tether)"; fi
[ ! -e /sys/fs/cgroup/tether ] || fail "/sys/fs/cgroup/tether was created"
echo "vm-systemd: ok"
