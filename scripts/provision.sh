#!/usr/bin/env bash
# Installs, idempotently, every Debian package that tether's build and tests
# need. Safe to run repeatedly: it installs only what is missing and runs
# apt-get update only when something is. Needs root (or sudo) when anything is
# missing; prints what is missing otherwise.
set -euo pipefail

packages=(
	gcc libc6-dev pkg-config make git  # cgo toolchain for libcontainer
	libseccomp-dev                     # -tags seccomp
	busybox-static debootstrap         # tether rootfs build
	bubblewrap runc util-linux         # scripts/bench-launch.sh baselines (unshare, bwrap, runc)
	uidmap passwd                      # rootless tests: newuidmap, useradd
	iproute2 curl ca-certificates      # sandbox network tests
	python3                            # clients inside the sandbox in tests
	e2fsprogs xfsprogs                 # disk-limit tests: loop-mounted ext4 (prjquota) and XFS images
	vagrant                            # `vagrant validate` of the Vagrantfile (scripts/scripts_test.go)
	chromium                           # headless browser tests of the mandate page (ui/browser_test.go)
)

missing=()
for p in "${packages[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done

if [ ${#missing[@]} -eq 0 ]; then
	echo "provision: all ${#packages[@]} packages present"
	exit 0
fi

echo "provision: installing ${missing[*]}"
sudo=()
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		sudo=(sudo)
	else
		echo "provision: not root and no sudo; install these packages: ${missing[*]}" >&2
		exit 1
	fi
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
