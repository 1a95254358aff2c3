#!/usr/bin/env bash
# scripts/vm-test.sh [--smoke | --systemd | --ci | --runs FILE | --run REGEXP] [--packages "PKG..."]
#
# Runs tether's sandbox tests in a QEMU guest booted with the unified cgroup v2
# hierarchy only (cgroup_no_v1=all, cgroup2 at /sys/fs/cgroup): the layout of
# Debian 12, Ubuntu 22.04+ and Fedora, which this machine's cgroup v1 hybrid
# layout is not. See README "cgroup v2 guests".
#
#   (default)   the smoke check below, then test binaries built here
#               (go test -c -tags seccomp) for $PACKAGES run in the guest as
#               root with REQUIRE_SANDBOX=1; every package's result is
#               reported here
#   --smoke     only the smoke check (scripts/vm-smoke.sh): real sandboxed
#               commands, their limits read back from the guest's cgroup v2
#               files, an OOM kill reported, nothing left behind
#   --systemd   the guest boots systemd; `tether serve` runs under
#               contrib/tether.service (Delegate=yes) and a sandboxed call
#               through the API runs inside the delegated subtree
#               (scripts/vm-systemd.sh)
#   --run RE    only the tests matching RE (go test -run) in every package
#   --ci        only the tests named in scripts/vm-ci-tests.txt (what .ci/run
#               runs: every test that creates, limits, reads or removes
#               cgroups, sized to fit CI's time under TCG)
#   --runs FILE the runs FILE lists, in that order, in one guest: one
#               "PACKAGE [REGEXP]" a line as in scripts/vm-ci-tests.txt (no
#               REGEXP: the whole package); --ci is --runs with that file
#
# The guest image is built once and cached (scripts/vm-image.sh). Everything
# else this script creates — a work directory under /var/tmp holding the 9p
# share (the plan and the results), the payload disk (test binaries, tether
# and the checkout, as a tar archive) and qemu's temporary disk snapshot, and the qemu process (ended by
# its pid) — is removed when it exits. A guest that does not boot, does not
# finish, or is not cgroup v2 only, is a failure, never a skip.
#
# Environment: TETHER_VM_ACCEL (kvm or tcg; default kvm when /dev/kvm works,
# else tcg), TETHER_VM_TIMEOUT (seconds for the whole guest run, default
# 3600), TETHER_VM_TEST_TIMEOUT (go test -timeout of each package's run,
# default 45m), TETHER_VM_CPU (qemu's -cpu under TCG, default qemu64),
# TETHER_VM_TIME_SCALE (how many times the tests' deadlines and grace
# periods are stretched under TCG, default 10; 1 under KVM),
# TETHER_VM_MEMORY (MiB, default 3072), TETHER_VM_LOGS (a directory
# to keep the guest's logs in), TETHER_VM_KERNEL_SUITE and TETHER_VM_CACHE
# (the guest image's kernel and cache, scripts/vm-image.sh), GO (default
# go). Needs root.
set -euo pipefail
# Everything runs from main, which bash reads whole before it starts, and
# the line that calls it exits too: an edit of this file during a run (an
# hour under TCG) cannot derail it, nor what bash would read after main
# returns (a run that had passed once exited 127 on the edited file's
# middle: "one: command not found").
main() {
	caller=$PWD
	cd "$(dirname "$0")/.."

	suite=tests
	run=""
	runs_file=""
	# The packages whose tests run sandboxes or touch cgroups.
	packages="sandbox/cgwarm sandbox sandbox/keeper cmd/tether runner egress"
	# Tests that need what the guest deliberately lacks, not cgroups: the Go
	# toolchain (a test that builds tether) and node/npm with the registry (the
	# TypeScript MCP client). They run on the host in `make test`.
	skip='^TestMCPWithTypeScriptSDK$'
	while [ $# -gt 0 ]; do
		case $1 in
		--smoke) suite=smoke ;;
		--systemd) suite=systemd ;;
		--run)
			run=${2:?--run needs a regexp}
			shift
			;;
		--ci) runs_file=scripts/vm-ci-tests.txt ;;
		--runs)
			runs_file=${2:?--runs needs a file}
			case $runs_file in /*) ;; *) runs_file=$caller/$runs_file ;; esac
			shift
			;;
		--packages)
			packages=${2:?--packages needs a list}
			shift
			;;
		-h | --help)
			sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
			exit 0
			;;
		*)
			echo "vm-test: unknown argument $1 (see --help)" >&2
			exit 2
			;;
		esac
		shift
	done
	if [ "$(id -u)" -ne 0 ]; then
		echo "vm-test: needs root (the image build chroots; qemu's 9p share maps owners)" >&2
		exit 1
	fi
	if ! command -v qemu-system-x86_64 >/dev/null 2>&1; then
		echo "vm-test: qemu-system-x86_64 not found; run scripts/provision.sh test" >&2
		exit 1
	fi
	GO=${GO:-go}
	timeout=${TETHER_VM_TIMEOUT:-3600}
	memory=${TETHER_VM_MEMORY:-3072}

	# The test runs, one "PACKAGE [REGEXP]" a line: every package whole (or
	# with --run), or a list's (CI's with --ci).
	if [ -n "$runs_file" ]; then
		if [ ! -r "$runs_file" ]; then
			echo "vm-test: cannot read the list of runs $runs_file" >&2
			exit 2
		fi
		runs=$(grep -v '^#' "$runs_file" | grep .) || {
			echo "vm-test: $runs_file lists no run" >&2
			exit 2
		}
		packages=$(echo "$runs" | awk '{ print $1 }' | sort -u | tr '\n' ' ')
	else
		runs=$(for pkg in $packages; do echo "$pkg $run"; done)
	fi

	image=$(scripts/vm-image.sh)

	work=$(mktemp -d /var/tmp/tether-vm.XXXXXX)
	qemu_pid=""
	cleanup() {
		if [ -n "$qemu_pid" ] && kill -0 "$qemu_pid" 2>/dev/null; then
			kill "$qemu_pid" 2>/dev/null || true
			for _ in $(seq 50); do kill -0 "$qemu_pid" 2>/dev/null || break; sleep 0.1; done
			kill -9 "$qemu_pid" 2>/dev/null || true
			wait "$qemu_pid" 2>/dev/null || true
		fi
		rm -rf --one-file-system "$work"
	}
	trap cleanup EXIT
	trap 'exit 130' INT TERM
	share=$work/share
	mkdir -p "$work/payload/bin" "$work/payload/src" "$share/out"
	pay=$work/payload

	echo "vm-test: building on the host"
	t0=$(date +%s)
	# The checkout as it is (tracked and new files): tests read testdata and docs
	# relative to their package directory.
	git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf - | tar -C "$pay/src" -xf -
	# tether as `make build` builds it (static: nothing to match in the guest).
	CGO_ENABLED=1 "$GO" build -tags 'seccomp osusergo netgo' -trimpath -ldflags '-s -w -extldflags -static' \
		-o "$pay/bin/tether" ./cmd/tether
	if [ "$suite" = tests ]; then
		for pkg in $packages; do
			"$GO" test -c -tags seccomp -o "$pay/bin/${pkg//\//_}.test" "./$pkg"
		done
	fi
	# One archive on a disk of its own: the guest reads it as a block device,
	# many times faster under TCG than files over 9p.
	tar -C "$pay" -cf "$work/payload.tar" bin src
	rm -rf "$pay"
	echo "vm-test: built in $(($(date +%s) - t0))s"

	cp scripts/vm-guest.sh "$share/guest.sh"
	{
		printf 'SUITE=%q\n' "$suite"
		printf 'SKIP=%q\n' "$skip"
		printf 'TEST_TIMEOUT=%q\n' "${TETHER_VM_TEST_TIMEOUT:-45m}"
	} >"$share/plan"
	echo "$runs" >"$share/runs"

	# KVM where it really runs a guest: the probe boots the kernel without a root
	# (it panics at once, and -no-reboot ends qemu). A /dev/kvm that opens but
	# cannot run a guest (nested virtualisation without the CPU features qemu
	# asks for) hangs or aborts here, and the guest gets TCG.
	kvm_works() {
		[ -w /dev/kvm ] || return 1
		timeout 15 qemu-system-x86_64 -accel kvm -cpu host -M q35 -m 256 -nodefaults -display none -no-reboot \
			-serial stdio -kernel "$image/vmlinuz" -append "console=ttyS0 panic=-1 root=/dev/nonexistent" \
			</dev/null 2>/dev/null | grep -aq 'Kernel panic'
	}
	accel=${TETHER_VM_ACCEL:-}
	if [ -z "$accel" ]; then
		accel=tcg
		if kvm_works; then accel=kvm; fi
	fi
	# The tests' deadlines and grace periods (never their assertions of
	# speed) are stretched this many times (testenv.Scaled).
	time_scale=1
	case $accel in
	kvm) accel_args=(-accel kvm -cpu host -smp 2) ;;
	# One TCG thread for both vCPUs (thread=single), not one each: with
	# thread=multi the guest kernel panicked on this loaded host with either
	# CPU model, in __alloc_pages under -cpu max and with a double fault
	# just after the slab allocator's cmpxchg16b under -cpu qemu64, both
	# "Fatal exception in interrupt" (multi-threaded TCG's softmmu is known
	# to break under host load, where thread=single does not). On 2 host
	# cores shared by the whole machine the second thread bought little.
	# qemu64 rather than max: Go (GOAMD64=v1) and Debian's amd64 userland
	# need nothing it lacks, and it emulates less.
	tcg)
		# One vCPU under TCG: with two on the one thread they take turns,
		# and on a loaded host one waited so long for the other that the
		# guest reported soft lockups.
		accel_args=(-accel tcg,thread=single -cpu "${TETHER_VM_CPU:-qemu64}" -smp 1)
		time_scale=${TETHER_VM_TIME_SCALE:-10}
		;;
	*)
		echo "vm-test: TETHER_VM_ACCEL must be kvm or tcg, not $accel" >&2
		exit 2
		;;
	esac
	printf 'TIME_SCALE=%q\n' "$time_scale" >>"$share/plan"
	cmdline="root=/dev/vda rw console=ttyS0 loglevel=4 panic=-1 cgroup_no_v1=all systemd.unified_cgroup_hierarchy=1"
	if [ "$accel" = tcg ]; then
		# The emulated HPET keeps the host's time. The TSC is calibrated at
		# boot over a few milliseconds, and a guest descheduled by a loaded
		# host then mis-measured it: its clock ran 7 times too fast (2952 s
		# of uptime after 402 s), which shortens every deadline in it.
		cmdline+=" clocksource=hpet"
		# The kernel checks at boot that the emulated IO-APIC's timer
		# interrupt arrives within a few of its own loops; on a host at
		# load 25 it did not, and the guest panicked ("IO-APIC + timer
		# doesn't work!") before it printed anything else. no_timer_check
		# skips that check, as kernels under hypervisors commonly do.
		cmdline+=" no_timer_check"
	fi
	if [ "$suite" = systemd ]; then
		cmdline+=" systemd.show_status=error"
		if [ "$accel" = tcg ]; then
			# systemd's own deadlines follow the time scale, as the tests'
			# do: its 90 s for a unit to start and its services'
			# watchdogs (journald's and udevd's 3 min) are real time, which
			# a guest descheduled by a loaded host does not get (at load
			# 30-68 journald and udevd failed to start). A watchdog cannot
			# be stretched from here, so the service watchdogs are off.
			cmdline+=" systemd.default_timeout_start_sec=$(awk -v s="$time_scale" 'BEGIN { printf "%d", 90 * s }')"
			cmdline+=" systemd.service_watchdogs=0"
		fi
	else
		cmdline+=" init=/usr/local/sbin/tether-vm-init"
	fi

	console=$work/console.log
	# The guest's "TETHER-VM: ..." markers, one a line. Not anchored at the
	# line's start: systemd 257 resets the serial terminal when
	# tether-vm.service opens it, and the reset's escape sequence (no
	# newline) precedes the first marker, which a ^ missed ("the guest
	# did not boot" after a passed run). The kernel shares the line too;
	# the guest starts each marker on a fresh line, and booted/done also
	# come from files in the share (guest.info, out/done).
	markers() { grep -ao 'TETHER-VM: .*' "$console" | tr -d '\r'; }
	elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
	echo "vm-test: booting the $suite guest ($accel: ${accel_args[*]}, ${memory}M)"
	# TMPDIR: qemu's snapshot overlay of the root image lives in the work directory.
	boot=$(date +%s.%N)
	TMPDIR=$work nice -n 5 qemu-system-x86_64 "${accel_args[@]}" -M q35 -m "$memory" \
		-nodefaults -display none -no-reboot -serial "file:$console" \
		-kernel "$image/vmlinuz" -initrd "$image/initrd.img" -append "$cmdline" \
		-drive "file=$image/root.img,if=virtio,format=raw,snapshot=on" \
		-drive "file=$work/payload.tar,if=virtio,format=raw,readonly=on" \
		-virtfs "local,path=$share,mount_tag=host,security_model=none,id=host" \
		-device virtio-rng-pci \
		</dev/null >"$work/qemu.log" 2>&1 &
	qemu_pid=$!

	# Follow the guest's markers until it powers off or the time is up.
	seen=0 booted="" deadline=$(($(date +%s) + timeout))
	while kill -0 "$qemu_pid" 2>/dev/null; do
		if [ "$(date +%s)" -ge "$deadline" ]; then
			echo "vm-test: the guest did not finish within ${timeout}s" >&2
			# Stopped here, not only by cleanup: the wait below would
			# otherwise wait for the guest (it did, past the limit).
			kill "$qemu_pid" 2>/dev/null || true
			break
		fi
		if [ -f "$console" ]; then
			mapfile -t marks < <(markers)
			for ((i = seen; i < ${#marks[@]}; i++)); do
				m=${marks[i]#TETHER-VM: }
				case $m in
				BOOTED*)
					booted=$(date +%s.%N)
					echo "vm-test: guest up after $(elapsed "$boot" "$booted")s (guest uptime ${m#BOOTED })"
					;;
				*) echo "vm-test: $m" ;;
				esac
			done
			seen=${#marks[@]}
		fi
		sleep 1
	done
	qemu_rc=0
	wait "$qemu_pid" 2>/dev/null || qemu_rc=$?
	qemu_pid=""
	end=$(date +%s.%N)

	if [ -n "${TETHER_VM_LOGS:-}" ]; then
		mkdir -p "$TETHER_VM_LOGS"
		cp "$console" "$share"/out/* "$TETHER_VM_LOGS"/ 2>/dev/null || true
		echo "vm-test: logs kept in $TETHER_VM_LOGS"
	fi
	# guest.info is the guest's first write to the share, made right after
	# its BOOTED marker.
	if [ -z "$booted" ] && [ -f "$share/out/guest.info" ]; then
		booted=$end
		echo "vm-test: the guest's BOOTED marker was garbled on the console; guest.info shows it booted"
	fi
	if [ -z "$booted" ]; then
		echo "vm-test: the guest did not boot (qemu exit status $qemu_rc); qemu said:" >&2
		tail -n 20 "$work/qemu.log" >&2
		echo "vm-test: last console lines:" >&2
		tail -n 40 "$console" >&2 2>/dev/null || true
		exit 1
	fi
	# (grep reads the whole list: grep -q could end a pipe early, and
	# pipefail would take the writer's SIGPIPE for no match.)
	all_marks=$(markers || true)
	if grep '^TETHER-VM: ERROR' <<<"$all_marks" >/dev/null; then
		echo "vm-test: the guest reported an error:" >&2
		grep '^TETHER-VM: ERROR' <<<"$all_marks" >&2
		exit 1
	fi
	echo "vm-test: guest wall time $(elapsed "$boot" "$end")s; $(tr '\n' ';' <"$share/out/guest.info")"

	# Every run's (and the smoke or systemd check's) result; a missing one is a
	# failure.
	failed=()
	# count RE FILE: the lines of FILE matching RE (grep -c exits 1 on none,
	# which set -e would take for a failure of the script).
	count() { grep -c "$1" "$2" || true; }
	report() { # report KEY LABEL: the result of out/KEY.result and out/KEY.log
		local res=$share/out/$1.result log=$share/out/$1.log rc secs counts=""
		if [ ! -f "$res" ]; then
			echo "vm-test: $2: NO RESULT (the guest stopped before it)" >&2
			failed+=("$2")
			return
		fi
		read -r rc secs <"$res"
		if [ "$1" != smoke ] && [ "$1" != systemd ]; then
			counts=" ($(count '^--- PASS' "$log") passed, $(count '^--- FAIL' "$log") failed, $(count '^--- SKIP' "$log") skipped)"
		fi
		if [ "$rc" = 0 ] && [ -n "$counts" ] && [ "$(count '^--- PASS' "$log")" = 0 ]; then
			echo "vm-test: $2: FAIL: no test ran" >&2
			failed+=("$2")
		elif [ "$rc" = 0 ]; then
			echo "vm-test: $2: ok in ${secs}s$counts"
		else
			echo "vm-test: $2: FAIL (exit $rc) in ${secs}s$counts" >&2
			grep -a '^--- FAIL' "$log" >&2 || true
			echo "vm-test: --- last lines of $2's log:" >&2
			tail -n 60 "$log" >&2
			failed+=("$2")
		fi
	}
	if [ "$suite" = tests ]; then
		report smoke smoke
		i=0
		while read -r pkg re; do
			i=$((i + 1))
			report "$i-${pkg//\//_}" "$pkg${re:+ -run $re}"
		done <"$share/runs"
	else
		report "$suite" "$suite"
	fi
	# out/done is written by the guest just before its DONE marker.
	if [ ! -f "$share/out/done" ] && ! grep '^TETHER-VM: DONE' <<<"$all_marks" >/dev/null; then
		echo "vm-test: the guest did not finish its run" >&2
		tail -n 40 "$console" >&2
		exit 1
	fi
	if [ ${#failed[@]} -gt 0 ]; then
		echo "vm-test: FAILED: ${failed[*]}" >&2
		exit 1
	fi
	echo "vm-test: all passed on cgroup v2 ($suite)"
}

main "$@"; exit
