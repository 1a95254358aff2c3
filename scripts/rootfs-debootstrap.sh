#!/usr/bin/env bash
# rootfs-debootstrap.sh TARGET SUITE MIRROR — builds a minimal Debian root
# filesystem (debootstrap --variant=minbase) in TARGET and adds the /workspace
# mount point the sandbox binds the profile's working directory onto.
#
# Needs root (debootstrap chroots and installs packages with their owners) and
# the Debian package debootstrap. MIRROR is a Debian archive URL such as
# http://deb.debian.org/debian; `tether rootfs build` passes the mirror this
# machine's apt sources use for SUITE when --mirror is not given.
#
# tether runs this script itself (`tether rootfs build --from debootstrap`,
# which builds into a temporary directory and renames it into place). It can
# also be run by hand on an empty or absent TARGET. DEBOOTSTRAP names the
# debootstrap program (default: debootstrap on PATH).
set -euo pipefail

if [ $# -ne 3 ] || [ -z "$1" ] || [ -z "$2" ] || [ -z "$3" ]; then
	echo "usage: rootfs-debootstrap.sh TARGET SUITE MIRROR" >&2
	exit 2
fi
target=$1 suite=$2 mirror=$3
export PATH="$PATH:/usr/sbin:/sbin"
debootstrap=${DEBOOTSTRAP:-debootstrap}

if ! command -v "$debootstrap" >/dev/null 2>&1; then
	echo "rootfs-debootstrap: debootstrap not found; install it with: apt-get install debootstrap (or run scripts/provision.sh)" >&2
	exit 1
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "rootfs-debootstrap: debootstrap needs root; run as root or with sudo" >&2
	exit 1
fi

echo "rootfs-debootstrap: debootstrap --variant=minbase $suite $target $mirror"
"$debootstrap" --variant=minbase "$suite" "$target" "$mirror"

echo "rootfs-debootstrap: adding /workspace and cleaning the apt cache"
install -d -m 0755 "$target/workspace"
rm -f "$target"/var/cache/apt/archives/*.deb "$target"/var/lib/apt/lists/*_Packages
echo "rootfs-debootstrap: done"
