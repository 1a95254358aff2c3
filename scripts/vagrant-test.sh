#!/usr/bin/env bash
# scripts/vagrant-test.sh [BOX...] — runs tether's whole test suite in the
# Vagrant VMs: for each BOX (default: debian12 ubuntu2404) boots it (the first
# boot provisions it), copies the checkout in with `vagrant rsync`, and runs
# `.ci/run` (make test with REQUIRE_SANDBOX=1) as root. Exit status 0 when every
# box passed. The VMs are left running; `vagrant halt` or `vagrant destroy -f`
# when done. Needs Vagrant with VirtualBox or vagrant-libvirt on the host.
set -euo pipefail
cd "$(dirname "$0")/.."

boxes=("$@")
if [ ${#boxes[@]} -eq 0 ]; then
	boxes=(debian12 ubuntu2404)
fi

failed=()
for box in "${boxes[@]}"; do
	echo "vagrant-test: $box"
	vagrant up "$box"
	vagrant rsync "$box"
	if vagrant ssh "$box" -c 'cd /vagrant && sudo ./.ci/run'; then
		echo "vagrant-test: $box passed"
	else
		echo "vagrant-test: $box FAILED" >&2
		failed+=("$box")
	fi
done
if [ ${#failed[@]} -gt 0 ]; then
	echo "vagrant-test: failed in ${failed[*]}" >&2
	exit 1
fi
echo "vagrant-test: all passed (${boxes[*]})"
