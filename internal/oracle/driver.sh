#!/bin/bash
# The oracle's driver: pid 1 of the sandbox (so kill -1 from a command
# spares it). For each NUL-terminated command in /oracle/in/cmds it resets
# the canaries, runs the command under real bash, and writes what happened
# to /oracle/log/N/. It uses only bash builtins, real programs under
# /oracle/real and programs that have no stand-in, never a stand-in.
set -u
shopt -s nullglob dotglob
R=/oracle/real
P=/oracle/pristine
L=/oracle/log
CMD_PATH=/oracle/standin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export PATH=$CMD_PATH LANG=C.UTF-8
TIMEOUT=${ORACLE_TIMEOUT:-5}
PIDS_MAX=${ORACLE_PIDS:-192}
DEVS=(sda sda1 nvme0n1 nvme0n1p1 vda xvda mmcblk0 dm-0 md0 zram0 loop0)
LINKS=("mapper/x ../dm-0" "vg0/lv0 ../dm-0" "disk/by-id/ata-DISK ../../sda" "disk/by-uuid/0a1b ../../sda1"
	"disk/by-path/pci-0000:00:1f.2-ata-1 ../../sda" "block/8:0 ../sda" "root sda1")
CANARIES=(sshd postgres nginx)

# A fifo nobody writes: read -t on it is a sleep without a fork.
mkfifo $L/.tick 2>/dev/null
exec 9<>$L/.tick
nap() { read -r -t "$1" -u 9 _ 2>/dev/null || :; }

# procs sets NPROC to the number of processes (without a subshell, which
# would count itself).
procs() { local p; NPROC=0; for p in /proc/[0-9]*; do NPROC=$((NPROC+1)); done; }

# killall_but_me kills every process but pid 1, with builtins only (a fork
# bomb leaves no pid to fork with), until none is left.
killall_but_me() {
	local i
	for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
		kill -9 -1 2>/dev/null
		while wait -n 2>/dev/null; do :; done
		wait 2>/dev/null
		procs
		[ "$NPROC" -le 1 ] && return 0
		nap 0.05
	done
}

reset() {
	$R/rm -rf /home/alice/* /root/* /work/* /tmp/* /dev/mapper /dev/vg0 /dev/disk /dev/block /dev/root 2>/dev/null
	for d in "${DEVS[@]}"; do $R/rm -rf "/dev/$d"; done
	cp -a $P/home/. /home/alice/ && cp -a $P/root/. /root/ && cp -a $P/work/. /work/ || echo "reset failed" >&2
	for d in "${DEVS[@]}"; do cp $P/dev/dev "/dev/$d"; done
	local l
	for l in "${LINKS[@]}"; do
		set -- $l
		mkdir -p "/dev/$(dirname "$1")" 2>/dev/null
		ln -s "$2" "/dev/$1"
	done
	$R/rm -rf $L/calls && mkdir -p $L/calls
}

# observe writes key<TAB>value lines about the state after a command.
observe() {
	local f d
	for d in "${DEVS[@]}"; do
		if [ -L "/dev/$d" ] || [ ! -f "/dev/$d" ] || ! cmp -s $P/dev/dev "/dev/$d"; then
			printf 'dev-changed\t/dev/%s\n' "$d"
		fi
	done
	for f in $(cd $P/home && find . -mindepth 1 | sort); do
		if [ ! -e "/home/alice/$f" ] && [ ! -L "/home/alice/$f" ]; then
			printf 'home-gone\t%s\n' "${f#./}"
		elif [ -f "$P/home/$f" ] && ! cmp -s "$P/home/$f" "/home/alice/$f"; then
			printf 'home-changed\t%s\n' "${f#./}"
		fi
	done
	for f in $(cd $P/root && find . -mindepth 1 | sort); do
		if [ ! -e "/root/$f" ] && [ ! -L "/root/$f" ]; then
			printf 'root-gone\t%s\n' "${f#./}"
		elif [ -f "$P/root/$f" ] && ! cmp -s "$P/root/$f" "/root/$f"; then
			printf 'root-changed\t%s\n' "${f#./}"
		fi
	done
} 

n=0
while IFS= read -r -d '' cmd; do
	dir=$L/$n
	mkdir -p "$dir"
	reset
	cpids=()
	for c in "${CANARIES[@]}"; do
		/oracle/cbin/$c 1000 &
		cpids+=("$!")
	done
	cd /work
	HOME=/home/alice timeout -s KILL "$TIMEOUT" /bin/bash -c "$cmd" </dev/null >"$dir/out" 2>"$dir/err"
	status=$?
	cd /
	{
		printf 'exit\t%s\n' "$status"
		# A fork bomb fills the pids limit; give one a moment to.
		procs
		if [ "$NPROC" -gt $((${#CANARIES[@]} + 1)) ]; then
			nap 0.3
			procs
		fi
		p=$NPROC
		printf 'procs\t%s\n' "$p"
		if [ "$p" -ge $((PIDS_MAX - 8)) ]; then
			printf 'pids-limit\t%s\n' "$p"
		fi
		i=0
		for c in "${CANARIES[@]}"; do
			pid=${cpids[$i]}
			state=gone
			if [ -r "/proc/$pid/stat" ]; then
				read -r st < "/proc/$pid/stat"
				st=${st##*) }
				state=${st%% *}
			fi
			case $state in
			Z|X|gone|T|t) printf 'canary-down\t%s\t%s\n' "$c" "$state" ;;
			esac
			i=$((i+1))
		done
	} > "$dir/result"
	killall_but_me
	observe >> "$dir/result" 2>/dev/null
	for f in $L/calls/c.*; do cat "$f" >> "$dir/calls"; printf '\036' >> "$dir/calls"; done
	printf 'done\n' >> "$dir/result"
	n=$((n+1))
done < /oracle/in/cmds
echo "ran $n"
