#!/usr/bin/env bash
# scripts/vagrant-provision.sh — provisions a tether test VM (run by the
# Vagrantfile as root inside the VM; idempotent):
#   1. the Debian/Ubuntu packages of scripts/provision.sh;
#   2. Go $GO_VERSION (the go directive of go.mod) from go.dev, its SHA-256
#      checked against go.dev's release list, into /usr/local/go, with go and
#      gofmt linked into /usr/local/bin so `sudo make test` finds them;
#   3. on Ubuntu, unprivileged user namespaces allowed again
#      (kernel.apparmor_restrict_unprivileged_userns=0, persisted in
#      /etc/sysctl.d) — see README "Root filesystems, VMs and launch benchmark"
#      for why a sysctl rather than an AppArmor profile;
#   4. a check that the VM runs cgroup v2, and git's safe.directory for the
#      synced checkout (owned by the vagrant user, tested as root).
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
: "${GO_VERSION:?GO_VERSION (from go.mod) must be set}"

echo "vagrant-provision: packages"
apt-get update -qq
apt-get install -y -qq --no-install-recommends ca-certificates curl python3 sudo git make
/vagrant/scripts/provision.sh

echo "vagrant-provision: Go $GO_VERSION"
if [ "$(/usr/local/go/bin/go env GOVERSION 2>/dev/null)" != "go$GO_VERSION" ]; then
	case $(uname -m) in
	x86_64) arch=amd64 ;;
	aarch64) arch=arm64 ;;
	*)
		echo "vagrant-provision: no Go release for $(uname -m)" >&2
		exit 1
		;;
	esac
	file="go$GO_VERSION.linux-$arch.tar.gz"
	sum=$(curl -fsSL 'https://go.dev/dl/?mode=json&include=all' | python3 -c '
import json, sys
name = sys.argv[1]
for rel in json.load(sys.stdin):
    for f in rel["files"]:
        if f["filename"] == name:
            print(f["sha256"]); sys.exit(0)
sys.exit("no " + name + " in the go.dev release list")' "$file")
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	curl -fsSL -o "$tmp/$file" "https://go.dev/dl/$file"
	echo "$sum  $tmp/$file" | sha256sum -c -
	rm -rf /usr/local/go
	tar -C /usr/local -xzf "$tmp/$file"
fi
ln -sf /usr/local/go/bin/go /usr/local/go/bin/gofmt /usr/local/bin/
go version

if [ -e /proc/sys/kernel/apparmor_restrict_unprivileged_userns ]; then
	echo "vagrant-provision: allowing unprivileged user namespaces (AppArmor restriction off)"
	echo "kernel.apparmor_restrict_unprivileged_userns = 0" >/etc/sysctl.d/60-tether-userns.conf
	sysctl -q -p /etc/sysctl.d/60-tether-userns.conf
fi

fs=$(stat -fc %T /sys/fs/cgroup)
if [ "$fs" = cgroup2fs ]; then
	echo "vagrant-provision: cgroup v2"
else
	echo "vagrant-provision: WARNING: /sys/fs/cgroup is $fs, not cgroup v2" >&2
fi

git config --system --get-all safe.directory | grep -qx /vagrant ||
	git config --system --add safe.directory /vagrant
echo "vagrant-provision: done"
