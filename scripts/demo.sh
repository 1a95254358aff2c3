#!/usr/bin/env bash
# The main job on a fresh machine: the mandate scenario end to end (see
# `tether demo --help`). Sandboxes need root; as another user the demo runs
# rootless and says which limits are not enforced.
set -euo pipefail
cd "$(dirname "$0")/.."
exec ./bin/tether demo "$@"
