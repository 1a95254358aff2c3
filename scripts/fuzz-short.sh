#!/usr/bin/env bash
# Runs every Fuzz target in the module for a short time (default 10s each).
# The committed seed corpora under testdata/fuzz run on every `go test`.
set -euo pipefail
fuzztime=${1:-10s}
cd "$(dirname "$0")/.."
status=0
for pkg in $(go list ./...); do
	dir=$(go list -f '{{.Dir}}' "$pkg")
	for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
		echo "fuzz: $pkg $target ($fuzztime)"
		go test -tags seccomp -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg" || status=1
	done
done
exit $status
