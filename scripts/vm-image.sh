#!/usr/bin/env bash
# scripts/vm-image.sh — builds (once) the guest image of scripts/vm-test.sh and
# prints the directory that holds it: a raw ext4 root filesystem (root.img),
# the kernel (vmlinuz) and its initramfs (initrd.img).
#
# The guest is Debian 13 (debootstrap --variant=minbase of trixie) with the
# packages of `scripts/provision.sh --list guest` and the kernel of
# $TETHER_VM_KERNEL_SUITE (default trixie-backports: a kernel of 6.15 or
# later, whose Landlock ABI 7 the sandbox's audit tests need; trixie's own
# 6.12 has ABI 6). Not a bookworm userland with a newer kernel: the newer
# kernels' packages run linux-base's hooks with the run-parts of trixie's
# debianutils, which needs trixie's libc. It boots either with a small shell
# script as PID 1 (the cgroup v2 guest) or with systemd (the delegation
# guest); both then run the script that vm-test.sh shares with them over 9p,
# so changing the tests never rebuilds the image.
#
# The image is cached in $TETHER_VM_CACHE (default /var/cache/tether-vm), in a
# directory named by the SHA-256 of this script, of provision.sh and of the
# kernel suite: a later run with the same scripts and suite reuses it, an edit
# to either or another suite builds a new one (and removes the older images).
# The build is idempotent: it happens in a temporary directory renamed into
# place when complete, so an interrupted build leaves nothing that a later run
# would take for an image.
#
# Needs root, debootstrap and e2fsprogs (scripts/provision.sh test). Packages
# come from $TETHER_VM_MIRROR (default http://deb.debian.org/debian); apt's
# proxy setting of the host (Acquire::http::Proxy), if any, applies.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export PATH="$PATH:/usr/sbin:/sbin"

cache=${TETHER_VM_CACHE:-/var/cache/tether-vm}
mirror=${TETHER_VM_MIRROR:-http://deb.debian.org/debian}
suite=trixie
kernel_suite=${TETHER_VM_KERNEL_SUITE:-trixie-backports}
case $kernel_suite in
*[!a-z0-9-]* | "")
	echo "vm-image: TETHER_VM_KERNEL_SUITE must be a Debian suite name (such as trixie-backports), not \"$kernel_suite\"" >&2
	exit 2
	;;
esac
key=$({ cat "$here/vm-image.sh" "$here/provision.sh"; echo "kernel $kernel_suite"; } | sha256sum | cut -c1-16)
image=$cache/image-$key

if [ -f "$image/root.img" ] && [ -f "$image/vmlinuz" ] && [ -f "$image/initrd.img" ]; then
	echo "$image"
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "vm-image: building the guest image needs root (debootstrap)" >&2
	exit 1
fi
for tool in debootstrap mke2fs; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "vm-image: $tool not found; run scripts/provision.sh test" >&2
		exit 1
	fi
done

# apt's proxy for the host, if one is configured, is debootstrap's too.
if [ -z "${http_proxy:-}" ]; then
	proxy=$(apt-config dump Acquire::http::Proxy 2>/dev/null | sed -n 's/^Acquire::http::Proxy "\(.*\)";$/\1/p')
	if [ -n "$proxy" ]; then
		export http_proxy=$proxy
	fi
fi

install -d -m 0755 "$cache"
build=$(mktemp -d "$cache/build.XXXXXX")
cleanup() {
	# A chroot's mounts, if a step failed between mounting and unmounting.
	# --one-file-system: never into the host's /dev if an unmount failed.
	for r in "$build"/*/; do chroot_umount "${r%/}"; done
	rm -rf --one-file-system "$build"
}
trap cleanup EXIT
chroot_mount() {
	mount -t proc proc "$1/proc"
	mount -t sysfs sysfs "$1/sys"
	mount --bind /dev "$1/dev"
}
chroot_umount() {
	for m in "$1/proc" "$1/sys" "$1/dev"; do
		if mountpoint -q "$m" 2>/dev/null; then umount "$m" || umount -l "$m"; fi
	done
}

# Stage 1, the slow one (downloads): the installed packages, cached apart
# from the configuration below as base-KEY, keyed by what it installs, so
# that changing how the guest is set up does not download them again.
mapfile -t packages < <("$here/provision.sh" --list guest)
base_key=$(printf '%s\n' "$suite" "$mirror" "kernel $kernel_suite" "${packages[@]}" | sha256sum | cut -c1-16)
base=$cache/base-$base_key
if [ ! -d "$base" ]; then
	include=$(
		IFS=,
		echo "${packages[*]}"
	)
	root=$build/base
	echo "vm-image: debootstrap $suite with ${packages[*]}" >&2
	debootstrap --variant=minbase --include="$include" "$suite" "$root" "$mirror" >&2
	echo "vm-image: the $kernel_suite kernel" >&2
	echo "deb $mirror $kernel_suite main" >"$root/etc/apt/sources.list.d/kernel.list"
	chroot_mount "$root"
	chroot "$root" apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive chroot "$root" apt-get install -y -qq --no-install-recommends \
		-t "$kernel_suite" linux-image-amd64 >&2
	# The guest never installs again: no other suite's packages later.
	rm "$root/etc/apt/sources.list.d/kernel.list"
	chroot "$root" apt-get clean
	chroot_umount "$root"
	rm -f "$root"/var/lib/apt/lists/*_Packages
	find "$cache" -maxdepth 1 -name 'base-*' ! -name "base-$base_key" -exec rm -rf --one-file-system {} +
	mv -T "$root" "$base"
fi

# Stage 2: a copy of the base, configured, as the ext4 image.
root=$build/root
cp -a "$base" "$root"
echo "vm-image: configuring the guest" >&2
echo tether-vm >"$root/etc/hostname"
: >"$root/etc/fstab" # the kernel mounts the root read-write; nothing else is on disk
# The guests' entry point: PID 1 of the cgroup v2 guest (init=), or run by
# tether-vm.service under systemd. It mounts the host's share and runs the
# script vm-test.sh put there.
cat >"$root/usr/local/sbin/tether-vm-init" <<'EOF'
#!/bin/sh
# tether-vm-init [init|systemd] — see scripts/vm-image.sh.
mode=${1:-init}
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
if [ "$mode" = init ]; then
	# The initramfs has moved /proc, /sys and /dev onto the root already.
	mountpoint -q /proc || mount -t proc proc /proc
	mountpoint -q /sys || mount -t sysfs sysfs /sys
	mountpoint -q /dev || mount -t devtmpfs devtmpfs /dev
	mkdir -p /dev/pts /dev/shm
	mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /dev/pts
	mount -t tmpfs -o mode=1777 tmpfs /dev/shm
	mount -t tmpfs -o mode=755 tmpfs /run
	mount -t cgroup2 -o nsdelegate cgroup2 /sys/fs/cgroup
	ip link set lo up
	hostname tether-vm
fi
modprobe -a 9pnet_virtio 9p loop
mkdir -p /host
if ! mount -t 9p -o trans=virtio,version=9p2000.L,msize=1048576 host /host; then
	echo "TETHER-VM: ERROR mounting the host share" >/dev/ttyS0
	echo o >/proc/sysrq-trigger
fi
exec /bin/bash /host/guest.sh "$mode"
EOF
chmod 0755 "$root/usr/local/sbin/tether-vm-init"
cat >"$root/etc/systemd/system/tether-vm.service" <<'EOF'
[Unit]
Description=tether VM test runner (scripts/vm-test.sh)
After=multi-user.target

[Service]
Type=oneshot
ExecStart=/usr/local/sbin/tether-vm-init systemd
StandardOutput=tty
StandardError=tty
TTYPath=/dev/ttyS0

[Install]
WantedBy=multi-user.target
EOF
mkdir -p "$root/etc/systemd/system/multi-user.target.wants"
ln -sf /etc/systemd/system/tether-vm.service "$root/etc/systemd/system/multi-user.target.wants/tether-vm.service"
# No logins and no network waits: nothing logs in, and the guest has only
# loopback. logind needs the system bus, which the guest does not have (no
# D-Bus: tether and systemctl talk to systemd over its private socket);
# started, it exits at once and fails the boot.
for unit in getty@tty1.service serial-getty@ttyS0.service systemd-networkd-wait-online.service systemd-logind.service; do
	ln -sf /dev/null "$root/etc/systemd/system/$unit"
done

# The initramfs needs only what finds the root disk: a small one boots
# much faster under TCG than Debian's default (most of the kernel's modules).
echo MODULES=list >"$root/etc/initramfs-tools/conf.d/tether-vm"
printf '%s\n' virtio_pci virtio_blk ext4 >"$root/etc/initramfs-tools/modules"
chroot_mount "$root"
chroot "$root" update-initramfs -u -k all >&2
chroot_umount "$root"

cp "$root"/boot/vmlinuz-*[0-9]-amd64 "$build/vmlinuz"
cp "$root"/boot/initrd.img-*[0-9]-amd64 "$build/initrd.img"
# 6 GiB, sparse: the tests' temporary files (disk images among them) live on
# the root filesystem, whose writes go to qemu's temporary snapshot.
truncate -s 6G "$build/root.img"
mke2fs -q -t ext4 -L tether-vm -d "$root" "$build/root.img"
rm -rf --one-file-system "$root"

# Older images are the old scripts' output.
find "$cache" -maxdepth 1 -name 'image-*' ! -name "image-$key" -exec rm -rf {} +
mv -T "$build" "$image"
trap - EXIT
echo "vm-image: built $image" >&2
echo "$image"
