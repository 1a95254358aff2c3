#!/usr/bin/env bash
# scripts/vm-guest.sh init|systemd — runs inside the guest of scripts/vm-test.sh
# (started by the image's tether-vm-init, see scripts/vm-image.sh), never on
# a host. It reads /host/plan (written by vm-test.sh), runs what the plan asks
# as root with REQUIRE_SANDBOX=1, writes each result under /host/out, prints
# "TETHER-VM: ..." markers on the serial console and powers the guest off.
#
# Plan variables: SUITE (tests|smoke|systemd), SKIP (a -test.skip regexp,
# may be empty), TEST_TIMEOUT (each run's -test.timeout) and TIME_SCALE
# (TETHER_TEST_TIME_SCALE for the tests, internal/testenv). /host/runs
# lists the test runs, one "PACKAGE [REGEXP]" a line: bin/NAME.test (NAME:
# PACKAGE with / as _) run in the package's directory with -test.run REGEXP;
# the Nth run's results are out/N-NAME.*.
set -uo pipefail
mode=$1
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root REQUIRE_SANDBOX=1 TMPDIR=/tmp
out=/host/out
# Each marker starts on a fresh line: the kernel's messages share the serial
# line and may have left one unfinished.
say() { printf '\nTETHER-VM: %s\n' "$*" >/dev/ttyS0; }

finish() {
	: >"$out/done"
	say DONE
	# The results are on the host already (9p writes through); the root
	# disk is a snapshot that qemu drops, so nothing needs syncing.
	if [ "$mode" = systemd ]; then
		# What `systemctl poweroff` does when logind does not answer, without
		# asking logind first: the guest has no D-Bus, and the attempt
		# printed "Failed to connect to system scope bus via local transport".
		systemctl start --no-block --job-mode=replace-irreversibly poweroff.target
	else
		echo o >/proc/sysrq-trigger
	fi
	sleep 600
}

# shellcheck source=/dev/null
. /host/plan
export TETHER_TEST_TIME_SCALE=${TIME_SCALE:-1}
read -r up _ </proc/uptime
say BOOTED "$up" "$(uname -r)" "$(stat -fc %T /sys/fs/cgroup)" "init=$(cat /proc/1/comm)"
{
	echo "kernel $(uname -r)"
	echo "cgroup $(stat -fc %T /sys/fs/cgroup)"
	echo "controllers $(cat /sys/fs/cgroup/cgroup.controllers)"
	echo "init $(cat /proc/1/comm)"
	echo "uptime $up"
} >"$out/guest.info"
# A guest that is not what the tests promise to cover fails, not passes.
if [ "$(stat -fc %T /sys/fs/cgroup)" != cgroup2fs ] || awk '$3 == "cgroup" { found = 1 } END { exit !found }' /proc/mounts; then
	say ERROR "/sys/fs/cgroup is not the unified hierarchy alone"
	finish
fi

# The tests run from a local copy: the sandbox's idmapped mounts and libcontainer's
# re-exec of the test binary need a local filesystem, not 9p.
# The payload disk (/dev/vdb) is a tar archive of bin/ and src/.
mkdir -p /var/tmp/tether
if ! tar -C /var/tmp/tether -xf /dev/vdb; then
	say ERROR "unpacking the payload disk"
	finish
fi
src=/var/tmp/tether/src bin=/var/tmp/tether/bin
export PATH=$bin:$PATH

run_script() {
	local start rc
	start=$(date +%s)
	bash "$src/scripts/vm-$1.sh" "$bin/tether" >"$out/$1.log" 2>&1
	rc=$?
	echo "$rc $(($(date +%s) - start))" >"$out/$1.result"
	say RESULT "$1" "$rc" "$(($(date +%s) - start))"
}

case $SUITE in
tests)
	run_script smoke
	i=0
	while read -r pkg re; do
		i=$((i + 1))
		name=${pkg//\//_}
		args=(-test.v -test.count=1 -test.timeout="${TEST_TIMEOUT:-45m}")
		[ -n "$re" ] && args+=(-test.run "$re")
		[ -n "$SKIP" ] && args+=(-test.skip "$SKIP")
		say START "$pkg" "$re"
		start=$(date +%s)
		(cd "$src/$pkg" && "$bin/$name.test" "${args[@]}") >"$out/$i-$name.log" 2>&1 </dev/null
		rc=$?
		secs=$(($(date +%s) - start))
		echo "$rc $secs" >"$out/$i-$name.result"
		say RESULT "$pkg" "$rc" "$secs"
	done </host/runs
	;;
smoke | systemd)
	run_script "$SUITE"
	;;
*)
	say ERROR "unknown suite $SUITE"
	;;
esac
finish
