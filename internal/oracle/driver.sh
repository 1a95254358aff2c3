#!/bin/bash
# The oracle's driver: pid 1 of the sandbox (so kill -1 from a command
# spares it). For each case in /oracle/in/cmds (a command and variables to
# export to it) it restores whatever the previous command changed, runs the
# command under real bash, and writes what happened to /oracle/log/N/. Between commands it uses bash
# builtins only (forks are slow here, and impossible under a fork bomb),
# except to restore what changed; it never runs a stand-in.
set -u
# pkill -f . and kill -TERM -1 signal pid 1 too; the kernel spares a
# namespace's init only from signals it has no handler for, and bash installs
# some. A trap (not an ignore, which children would inherit) keeps the
# driver alive.
trap : TERM HUP INT QUIT USR1 USR2 ALRM PIPE
shopt -s nullglob dotglob globstar
R=/oracle/real
P=/oracle/pristine
L=/oracle/log
export PATH=/oracle/standin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8
TIMEOUT=${ORACLE_TIMEOUT:-5}
PIDS_MAX=${ORACLE_PIDS:-192}
DEVS=(sda sda1 nvme0n1 nvme0n1p1 vda xvda mmcblk0 dm-0 md0 zram0 loop0)
KEEP=/dev/.oracle-keep # second names of the stand-in devices (see restore)
LINKS=("mapper/x ../dm-0" "vg0/lv0 ../dm-0" "disk/by-id/ata-DISK ../../sda" "disk/by-uuid/0a1b ../../sda1"
	"disk/by-path/pci-0000:00:1f.2-ata-1 ../../sda" "block/8:0 ../sda" "root sda1")
CANARIES=(sshd postgres nginx)
declare -A CPID

# A fifo nobody writes: read -t on it is a sleep without a fork.
mkfifo $L/.tick 2>/dev/null
exec 9<>$L/.tick
nap() { read -r -t "$1" -u 9 _ 2>/dev/null || :; }

# procs sets NPROC to the number of processes (without a subshell, which
# would count itself).
procs() { local p; NPROC=0; for p in /proc/[0-9]*; do NPROC=$((NPROC+1)); done; }

# The pristine trees, relative paths, listed once.
cd $P/home && HOME_FILES=(**) && cd $P/root && ROOT_FILES=(**) && cd $P/work && WORK_FILES=(**) && cd /

# tree_dirty DIR FILES...: something under DIR differs from the pristine
# copy (a file gone, changed since the stamp, or added).
tree_dirty() {
	local dir=$1 f now
	shift
	for f in "$@"; do
		[[ -e $dir/$f || -L $dir/$f ]] || return 0
		[[ $dir/$f -nt $L/.stamp ]] && return 0
	done
	now=("$dir"/**)
	[ "${#now[@]}" -ne $# ]
}

is_canary() { local c; for c in "${CANARIES[@]}"; do [ "${CPID[$c]:-}" = "$1" ] && return 0; done; return 1; }

# kill_others kills every process but pid 1 and the live canaries, with
# builtins only (a fork bomb leaves no pid to fork with), until none is left.
kill_others() {
	local i p left
	for i in {1..40}; do
		left=0
		for p in /proc/[0-9]*; do
			p=${p#/proc/}
			[ "$p" = 1 ] && continue
			is_canary "$p" && continue
			# bash reaps its children (orphans included: it is their
			# init) on SIGCHLD; a zombie is only waiting for that.
			pstat "$p"
			[ "$PSTATE" = Z ] && continue
			kill -9 "$p" 2>/dev/null && left=1
		done
		[ $left = 0 ] && return 0
		nap 0.02
		# Still forking (a bomb outruns a scan): kill everything but pid
		# 1 in one system call; restore starts the canaries again.
		if [ $i -ge 3 ]; then
			kill -9 -1 2>/dev/null
			nap 0.05
		fi
	done
}

# pstat sets PSTATE to the state letter of a process, or "gone".
pstat() {
	local st
	PSTATE=gone
	{ read -r st < "/proc/$1/stat"; } 2>/dev/null || return 0
	st=${st##*) }
	PSTATE=${st%% *}
}

# pstate sets PSTATE to the state letter of a process (R, S, Z, T …),
# "gone", or "K" when a signal is pending that will kill or stop it (a
# SIGKILL just sent takes a moment to act on a loaded machine; the canaries
# are sleep, which leaves every signal at its default, so any pending one is
# fatal or stops it). No command substitution: that would fork.
pstate() {
	local line
	pstat "$1"
	[ "$PSTATE" = gone ] && return 0
	while read -r line; do
		case $line in
		SigPnd:*|ShdPnd:*)
			line=${line#*:}
			line=${line//[[:space:]0]/}
			[ -n "$line" ] && PSTATE=K
			;;
		esac
	done < "/proc/$1/status" 2>/dev/null
}

restore() {
	tree_dirty /home/alice "${HOME_FILES[@]}" && { $R/rm -rf /home/alice/*; cp -a $P/home/. /home/alice/; }
	tree_dirty /root "${ROOT_FILES[@]}" && { $R/rm -rf /root/*; cp -a $P/root/. /root/; }
	tree_dirty /work "${WORK_FILES[@]}" && { $R/rm -rf /work/*; cp -a $P/work/. /work/; }
	local t=(/tmp/*)
	[ ${#t[@]} -gt 0 ] && $R/rm -rf /tmp/*
	local d l fresh=()
	for d in "${DEVS[@]}"; do
		if [[ -L /dev/$d || ! -f /dev/$d || /dev/$d -nt $L/.stamp || ! /dev/$d -ef $KEEP/$d ]]; then
			$R/rm -rf "/dev/$d"
			fresh+=("$d")
		fi
	done
	if [ ${#fresh[@]} -gt 0 ]; then
		mkdir -p $KEEP
		for d in "${fresh[@]}"; do
			cp $P/dev/dev "/dev/$d"
			touch -d @1 "/dev/$d"
			# A second name for the file: a file moved over the
			# device (mv keeps its old mtime) is another inode.
			ln -f "/dev/$d" "$KEEP/$d"
		done
	fi
	for l in "${LINKS[@]}"; do
		set -- $l
		if ! [[ -L /dev/$1 && /dev/$1 -ef /dev/${1%/*}/$2 ]]; then
			$R/rm -rf "/dev/$1"
			mkdir -p "/dev/${1%/*}" 2>/dev/null
			ln -s "$2" "/dev/$1"
		fi
	done
	local calls=($L/calls/*)
	[ ${#calls[@]} -gt 0 ] && $R/rm -f "${calls[@]}"
	mkdir -p $L/calls
	local c
	for c in "${CANARIES[@]}"; do
		pstate "${CPID[$c]:-0}"
		case $PSTATE in
		gone|Z|X|T|t|K)
			[ -n "${CPID[$c]:-}" ] && kill -9 "${CPID[$c]}" 2>/dev/null
			/oracle/cbin/$c 100000 &
			CPID[$c]=$!
			;;
		esac
	done
	: > $L/.stamp
	# The stamp must be newer than anything restored: wait out one
	# timestamp tick.
	nap 0.01
}

# observe writes key<TAB>value lines about the state after a command.
observe() {
	local f d c
	for d in "${DEVS[@]}"; do
		# A real device node renamed or removed keeps its data: only a
		# write to it, or a file put in its place, is a changed disk.
		if ! [[ -e /dev/$d || -L /dev/$d ]]; then
			printf 'dev-gone\t/dev/%s\n' "$d"
		elif [[ -L /dev/$d || ! -f /dev/$d || /dev/$d -nt $L/.stamp || ! /dev/$d -ef $KEEP/$d ]]; then
			printf 'dev-changed\t/dev/%s\n' "$d"
		fi
	done
	for f in "${HOME_FILES[@]}"; do
		if ! [[ -e /home/alice/$f || -L /home/alice/$f ]]; then
			printf 'home-gone\t%s\n' "$f"
		elif [[ -f /home/alice/$f && /home/alice/$f -nt $L/.stamp ]]; then
			printf 'home-changed\t%s\n' "$f"
		fi
	done
	for f in "${ROOT_FILES[@]}"; do
		if ! [[ -e /root/$f || -L /root/$f ]]; then
			printf 'root-gone\t%s\n' "$f"
		elif [[ -f /root/$f && /root/$f -nt $L/.stamp ]]; then
			printf 'root-changed\t%s\n' "$f"
		fi
	done
	# Some canaries down but not all: a kill of everything may still be
	# landing on a loaded machine; look again after a moment.
	local down=() try
	for try in 1 2; do
		down=()
		for c in "${CANARIES[@]}"; do
			pstate "${CPID[$c]}"
			case $PSTATE in
			gone|Z|X|T|t|K) down+=("$c") ;;
			esac
		done
		[ ${#down[@]} -eq 0 ] || [ ${#down[@]} -eq ${#CANARIES[@]} ] && break
		nap 0.3
	done
	for c in "${down[@]}"; do printf 'canary-down\t%s\n' "$c"; done
}

# Each case in /oracle/in/cmds is NUL-terminated fields: the number of
# variables to export, each NAME=VALUE, the command.
n=0
while IFS= read -r -d '' nenv; do
	vars=()
	for ((k = 0; k < nenv; k++)); do
		IFS= read -r -d '' v
		vars+=("$v")
	done
	IFS= read -r -d '' cmd || break
	dir=$L/$n
	mkdir -p "$dir"
	restore
	cd /work
	# timeout bounds the command, and the driver bounds timeout: kill -STOP
	# -1 stops timeout too.
	(
		[ ${#vars[@]} -gt 0 ] && export "${vars[@]}"
		HOME=/home/alice exec timeout -s KILL "$TIMEOUT" /bin/bash -c "$cmd"
	) </dev/null >"$dir/out" 2>"$dir/err" &
	cmdpid=$!
	for ((i = 0; i < 100 * (TIMEOUT + 1); i++)); do
		pstat "$cmdpid"
		case $PSTATE in gone|Z) break ;; esac
		if [ $i -lt 50 ]; then nap 0.002; else nap 0.01; fi
	done
	kill -9 "$cmdpid" 2>/dev/null
	wait "$cmdpid"
	status=$?
	cd /
	# A command that deletes everything it can (find / -delete, busybox
	# rm -rf /) takes the log with it: its own result still gets written.
	# Only then a fork: a fork bomb may still fill the pids limit here.
	[[ -d $dir && -d $L/calls ]] || mkdir -p "$dir" $L/calls 2>/dev/null
	{
		printf 'exit\t%s\n' "$status"
		procs
		# A fork bomb fills the pids limit; give one a moment to.
		if [ "$NPROC" -gt $((${#CANARIES[@]} + 1)) ]; then
			nap 0.3
			procs
		fi
		printf 'procs\t%s\n' "$NPROC"
		[ "$NPROC" -ge $((PIDS_MAX - 8)) ] && printf 'pids-limit\t%s\n' "$NPROC"
		observe
	} > "$dir/result" 2>/dev/null
	kill_others
	for f in $L/calls/c.*; do
		{ cat "$f"; printf '\036'; } >> "$dir/calls"
	done
	printf 'done\n' >> "$dir/result"
	n=$((n+1))
done < /oracle/in/cmds
echo "ran $n"
