#!/usr/bin/env bash
# scripts/smoke.sh BIN — checks the binary `make build` made (the test suite
# tests packages, not that binary): it starts, it analyses, and, as root, it
# runs commands in sandboxes and leaves nothing behind. One sandbox is on the
# host layout, one on a busybox root: there the static binary itself loads
# the seccomp filter before the command runs (sandbox/seccompexec), which a
# dynamically linked test binary cannot do. A daemon session on the busybox
# root runs this binary inside that root as its supervisor, which only a
# static binary can (a dynamic one is refused with ErrDynamicBinary: the
# root has no loader).
# Under REQUIRE_SANDBOX=1 (CI) a non-root run fails instead of skipping.
set -euo pipefail
bin=$(realpath "$1")

"$bin" --version
"$bin" check --json 'ls -la' >/dev/null

if [ "$(id -u)" != 0 ]; then
	if [ -n "${REQUIRE_SANDBOX:-}" ]; then
		echo "smoke: REQUIRE_SANDBOX is set but this is not root: cannot run a sandbox" >&2
		exit 1
	fi
	echo "smoke: not root, skipping the sandboxed runs"
	exit 0
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/tether-smoke.XXXXXX")
# A sandbox's root is an unprivileged host id (docs/workspace.md): it must
# traverse to the empty roots under the state root; mktemp makes 0700.
chmod 0711 "$work"
export TETHER_STATE_ROOT="$work/state" TETHER_CGROUP_PREFIX="tether-smoke-$$"
cleanup() {
	"$bin" gc >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT

echo "smoke: run -- /bin/true"
"$bin" run -- /bin/true

echo "smoke: run on a busybox root"
"$bin" rootfs build --from busybox "$work/root" >/dev/null
out=$("$bin" run --yolo --rootfs "$work/root" -- /bin/sh -c 'grep "^Seccomp:" /proc/self/status' 2>/dev/null)
if [ "$out" != "$(printf 'Seccomp:\t2')" ]; then
	echo "smoke: the busybox sandbox has no seccomp filter: $out" >&2
	exit 1
fi

echo "smoke: a daemon session on the busybox root"
mkdir "$work/ws"
cat >"$work/config.yaml" <<EOF
state_dir: $work/tstate
profiles:
  default:
    terminal: {cwd: $work/ws, rootfs: $work/root, pool: 0}
EOF
export TETHER_CONFIG="$work/config.yaml" TETHER_SOCKET="$work/t.sock" XDG_RUNTIME_DIR="$work/xdg"
"$bin" serve 2>"$work/serve.log" &
serve=$!
for _ in $(seq 200); do [ -S "$TETHER_SOCKET" ] && break; sleep 0.05; done
out=$("$bin" run --session smoke -- /bin/sh -c 'readlink /bin/sh' 2>&1) || true
kill -INT "$serve"
wait "$serve" || true
if [ "$out" != /bin/busybox ]; then
	echo "smoke: the session on the busybox root did not run: $out" >&2
	cat "$work/serve.log" >&2
	exit 1
fi

"$bin" gc >/dev/null
left=$(find /sys/fs/cgroup -maxdepth 2 -name "$TETHER_CGROUP_PREFIX" 2>/dev/null)
if [ -n "$left" ]; then
	echo "smoke: cgroups left behind: $left" >&2
	exit 1
fi
echo "smoke: ok"
