# tether build and test entry points. `make demo` and `make test` are the two
# commands of a fresh Debian/Ubuntu machine with Go (see README.md).

GO       ?= go
TAGS     ?= seccomp
BIN      := bin/tether
# `tether run` starts the binary twice (itself, then as the container's
# init), so its start-up counts double. -s -w drops the symbol table and
# DWARF (stack traces keep function names): a third smaller binary starts
# ~1 ms faster. A static binary (as runc's releases are built) skips the
# dynamic loader at both starts: ~1-2 ms per `tether run` in interleaved
# runs of scripts/benchlaunch. osusergo and netgo keep glibc's NSS (which a
# static binary cannot load) out: user and host lookups are Go's own.
GOFLAGS_BUILD := -tags '$(TAGS) osusergo netgo' -trimpath -ldflags '-s -w -extldflags -static'

FUZZTIME ?= 10s
# oracle: generated commands for `make oracle` (CI's unit run uses the
# test's small default budget).
ORACLE_N ?= 3000

.PHONY: all provision provision-demo build test unit fuzz-short smoke bench lint vet fmt staticcheck demo clean oracle oracle-fuzz \
	test-cgroup2 test-cgroup2-ci test-systemd

all: build

# provision installs what the test suite needs; provision-demo only what
# `make demo` needs (scripts/provision.sh --list demo|test shows each).
provision:
	./scripts/provision.sh test

provision-demo:
	./scripts/provision.sh demo

build:
	$(GO) build $(GOFLAGS_BUILD) -o $(BIN) ./cmd/tether

# test provisions first, then runs vet, the whole suite with the race
# detector, a short fuzz run of every fuzz target, and a smoke run of the
# binary `make build` makes (the suite tests packages, not that binary).
test: provision lint unit fuzz-short smoke

# smoke checks the built binary (see scripts/smoke.sh).
smoke: build
	./scripts/smoke.sh $(BIN)

# The cgroup v2 guests (scripts/vm-test.sh, README "cgroup v2 guests"), as
# root: test-cgroup2 runs the sandbox packages' whole suites in a QEMU guest
# with the unified hierarchy only; test-cgroup2-ci the CI subset (every test
# that creates, limits, reads or removes cgroups; .ci/run runs it after
# `make test`); test-systemd `tether serve` under contrib/tether.service with
# systemd as the guest's init.
# The whole suites take longer than the script's defaults under TCG on this
# loaded 2-core machine: the sandbox package alone outlived go test's 45
# minutes (docs/cgroup-v2.md).
test-cgroup2: provision
	TETHER_VM_TIMEOUT=$${TETHER_VM_TIMEOUT:-10800} TETHER_VM_TEST_TIMEOUT=$${TETHER_VM_TEST_TIMEOUT:-90m} ./scripts/vm-test.sh

# The CI subset's guest gets 30 minutes, so that .ci/run (about 17 minutes of
# `make test` on a quiet machine) stays within its hour.
test-cgroup2-ci: provision
	TETHER_VM_TIMEOUT=$${TETHER_VM_TIMEOUT:-1800} ./scripts/vm-test.sh --ci

test-systemd: provision
	./scripts/vm-test.sh --systemd

unit:
	$(GO) test -tags '$(TAGS)' -race -count=1 -timeout 40m ./...

fuzz-short:
	./scripts/fuzz-short.sh $(FUZZTIME)

# oracle runs every corpus in full and ORACLE_N generated commands under real
# bash in the sandbox (internal/oracle), as root; it prints the figures.
# Add ORACLE_RECORD=1 to append what it finds under-rated to
# approval/testdata/oracle-found.tsv.
oracle:
	REQUIRE_SANDBOX=1 $(GO) test -tags '$(TAGS)' -count=1 -timeout 180m -v -run 'TestOracle' ./internal/oracle/ \
		-args -oracle.corpus=0 -oracle.n=$(ORACLE_N) $(if $(ORACLE_RECORD),-oracle.record)

# oracle-fuzz feeds fuzzing bytes to the oracle's generator as its choices
# (FuzzOracle: one sandbox run per input, one worker) for ORACLE_FUZZTIME;
# what it finds is kept under internal/oracle/testdata/fuzz.
ORACLE_FUZZTIME ?= 10m
oracle-fuzz:
	REQUIRE_SANDBOX=1 $(GO) test -tags '$(TAGS)' -run '^$$' -fuzz '^FuzzOracle$$' -fuzztime $(ORACLE_FUZZTIME) -parallel 1 ./internal/oracle/

bench: provision
	$(GO) test -tags '$(TAGS)' -run '^$$' -bench . -benchmem ./...

lint: vet fmt staticcheck

# staticcheck (a pinned release, fetched from the Go module proxy) checks
# both builds as vet does: it catches shadowed errors and dead values.
STATICCHECK = honnef.co/go/tools/cmd/staticcheck@v0.8.2
staticcheck:
	$(GO) run $(STATICCHECK) -tags '$(TAGS)' ./...
	$(GO) run $(STATICCHECK) ./...

# vet checks both builds: with the tags tether is built with, and without
# them (a plain `go vet ./...`, a build without seccomp).
vet:
	$(GO) vet -tags '$(TAGS)' ./...
	$(GO) vet ./...

fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

demo: provision-demo build
	./scripts/demo.sh

clean:
	rm -rf bin
