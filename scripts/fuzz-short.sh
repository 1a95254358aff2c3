#!/usr/bin/env bash
# Runs every Fuzz target in the module for a short time (default 10s each).
# The committed seed corpora under testdata/fuzz run on every `go test`.
#
# A run that ends with the fuzzing engine's own "context deadline exceeded"
# (a worker still busy when the time is up, common on a loaded 2-core
# machine) and no failing input is retried once; a real failure (the engine
# wrote a failing input) fails at once.
set -uo pipefail
fuzztime=${1:-10s}
cd "$(dirname "$0")/.."
status=0
for pkg in $(go list ./...); do
	dir=$(go list -f '{{.Dir}}' "$pkg")
	for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
		# The bash oracle's fuzz target runs a sandbox per input: one
		# worker, so no input nears the fuzzing engine's fixed 10s limit
		# on a loaded machine.
		par=()
		case $target in FuzzOracle*) par=(-parallel 1) ;; esac
		for attempt in 1 2; do
			echo "fuzz: $pkg $target ($fuzztime, attempt $attempt)"
			out=$(go test -tags seccomp -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "${par[@]}" "$pkg" 2>&1)
			rc=$?
			if [ $rc -ne 0 ] && [ $attempt -eq 1 ] && grep -q 'context deadline exceeded' <<<"$out" && ! grep -q 'Failing input written' <<<"$out"; then
				echo "fuzz: $target: the fuzzing engine timed out with no failing input; retrying once. Its output:"
				printf '%s\n' "$out" | grep -v '^fuzz: elapsed' | sed 's/^/  | /'
				continue
			fi
			printf '%s\n' "$out" | grep -v '^fuzz: elapsed'
			if [ $rc -eq 0 ]; then
				break
			fi
			status=1
			break
		done
	done
done
exit $status
