#!/usr/bin/env bash
# Installs, idempotently, the Debian packages one of tether's entry points
# needs:
#
#   provision.sh demo   what `make demo` needs: the cgo toolchain, libseccomp
#                       and what the demo's sandboxed commands use
#   provision.sh test   (the default) that and everything the test suite,
#                       benchmarks and rootfs builds use, and qemu-system-x86
#                       for the cgroup v2 guests of scripts/vm-test.sh
#   provision.sh guest  what those guests install (scripts/vm-image.sh passes
#                       the list to debootstrap): systemd and the runtime
#                       tools of the test binaries built on the host
#   provision.sh --list demo|test   print the profile's packages, install nothing
#
# Safe to run repeatedly: it installs only what is missing and runs apt-get
# update only when something is. Needs root (or sudo) when anything is
# missing; prints what is missing otherwise.
set -euo pipefail

demo_packages=(
	gcc libc6-dev pkg-config make      # cgo toolchain for libcontainer
	libseccomp-dev                     # -tags seccomp
	git                                # go build's VCS stamp; the demo's workspace is a git repository
	curl ca-certificates               # the demo's poisoned run calls an unknown host with curl
)
test_packages=(
	busybox-static debootstrap         # tether rootfs build
	bubblewrap runc util-linux         # scripts/bench-launch.sh baselines (unshare, bwrap, runc)
	uidmap passwd                      # rootless tests: newuidmap, useradd
	iproute2                           # sandbox network tests
	python3                            # clients inside the sandbox in tests
	jq                                 # docs/api.md's examples read answers with jq (cmd/tether docs_api.txtar)
	e2fsprogs xfsprogs                 # disk-limit tests: loop-mounted ext4 (prjquota) and XFS images
	vagrant                            # `vagrant validate` of the Vagrantfile (scripts/scripts_test.go)
	chromium                           # headless browser tests of the mandate page (ui/browser_test.go)
	qemu-system-x86                    # the cgroup v2 guests of scripts/vm-test.sh
)
# The guests run test binaries built on the host (same Debian release, so the
# same glibc), never the Go toolchain.
guest_packages=(
	systemd-sysv kmod initramfs-tools   # the delegation variant's init; the kernel's modules (vm-image.sh adds the kernel)
	libseccomp2                         # the test binaries are linked with it (-tags seccomp)
	busybox-static util-linux procps    # rootfs builds, mount/setpriv, ps
	uidmap passwd iproute2 python3 git  # as in the test profile
	e2fsprogs xfsprogs                  # disk-limit tests
	gcc libc6-dev make perl             # the exec-gate test compiles a helper and runs make and perl
	curl ca-certificates jq             # egress tests' clients; cmd/tether's docs_api script (curl, jq)
)

list=0
if [ "${1:-}" = --list ]; then
	list=1
	shift
fi
case "${1:-test}" in
demo) packages=("${demo_packages[@]}") ;;
test) packages=("${demo_packages[@]}" "${test_packages[@]}") ;;
guest) packages=("${guest_packages[@]}") ;;
*)
	echo "usage: provision.sh [--list] [demo|test|guest]" >&2
	exit 2
	;;
esac
if [ "$list" = 1 ]; then
	printf '%s\n' "${packages[@]}"
	exit 0
fi
if [ "${1:-}" = guest ]; then
	# A kernel and an init system are not for the host.
	echo "provision: the guest profile is a list for scripts/vm-image.sh (use --list guest)" >&2
	exit 2
fi

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
