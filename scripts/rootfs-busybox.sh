#!/usr/bin/env bash
# rootfs-busybox.sh TARGET — builds a minimal root filesystem in TARGET from
# Debian's statically linked busybox (package busybox-static).
#
# The result: /bin/busybox plus one symlink per applet at the applet's usual
# place (bin/sh, bin/ls, usr/bin/awk, sbin/ip …), /etc/passwd and /etc/group
# with root and nobody, /etc/hosts, and the empty mount points the sandbox
# needs (/proc, /sys, /dev, /tmp, /workspace).
#
# No root is needed: the links are made by reading `busybox --list-full`
# rather than `busybox --install -s`, which would need a chroot to point the
# links at /bin/busybox inside TARGET instead of at the host's busybox. Files
# belong to the invoking user; a sandbox maps them as it maps that user.
#
# tether runs this script itself (`tether rootfs build --from busybox`, which
# builds into a temporary directory and renames it into place). It can also be
# run by hand on an empty or absent TARGET. BUSYBOX names the busybox binary
# (default: /bin/busybox).
set -euo pipefail

if [ $# -ne 1 ] || [ -z "$1" ]; then
	echo "usage: rootfs-busybox.sh TARGET" >&2
	exit 2
fi
target=$1
bb=${BUSYBOX:-/bin/busybox}

if [ ! -x "$bb" ]; then
	echo "rootfs-busybox: $bb not found; install it with: apt-get install busybox-static (or run scripts/provision.sh)" >&2
	exit 1
fi
if [ -e "$target" ] && [ -n "$(ls -A "$target")" ]; then
	echo "rootfs-busybox: $target exists and is not empty" >&2
	exit 1
fi

echo "rootfs-busybox: creating directories in $target"
install -d -m 0755 "$target"
for d in bin sbin usr/bin usr/sbin etc root proc sys dev dev/pts dev/shm run var workspace; do
	install -d -m 0755 "$target/$d"
done
chmod 0700 "$target/root"
install -d -m 1777 "$target/tmp" "$target/var/tmp"

echo "rootfs-busybox: copying $bb to bin/busybox"
install -m 0755 "$bb" "$target/bin/busybox"

echo "rootfs-busybox: linking applets"
n=0
while IFS= read -r applet; do
	case $applet in
	bin/busybox | linuxrc | "") continue ;;
	/* | *..*)
		echo "rootfs-busybox: skipping unexpected applet path $applet" >&2
		continue
		;;
	esac
	# Directories other than the usual four are rare; test before forking.
	[ -d "$target/${applet%/*}" ] || install -d -m 0755 "$target/${applet%/*}"
	ln -s /bin/busybox "$target/$applet"
	n=$((n + 1))
done < <("$bb" --list-full)
if [ "$n" -eq 0 ]; then
	echo "rootfs-busybox: $bb --list-full listed no applets; is it busybox? install busybox-static" >&2
	exit 1
fi
echo "rootfs-busybox: linked $n applets"

echo "rootfs-busybox: writing /etc"
cat >"$target/etc/passwd" <<'PASSWD'
root:x:0:0:root:/root:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
PASSWD
cat >"$target/etc/group" <<'GROUP'
root:x:0:
nogroup:x:65534:
GROUP
cat >"$target/etc/hosts" <<'HOSTS'
127.0.0.1	localhost
::1	localhost ip6-localhost ip6-loopback
HOSTS
chmod 0644 "$target/etc/passwd" "$target/etc/group" "$target/etc/hosts"

echo "rootfs-busybox: done"
