# tether build and test entry points. `make demo` and `make test` are the two
# commands of a fresh Debian/Ubuntu machine with Go (see README.md).

GO       ?= go
TAGS     ?= seccomp
BIN      := bin/tether
# -s -w drops the symbol table and DWARF (stack traces keep function names):
# a third smaller binary starts ~1 ms faster, and `tether run` starts it
# twice (itself, then as the container's init).
GOFLAGS_BUILD := -tags '$(TAGS)' -trimpath -ldflags '-s -w'

FUZZTIME ?= 10s

.PHONY: all provision build test unit fuzz-short bench lint vet fmt demo clean

all: build

provision:
	./scripts/provision.sh

build:
	$(GO) build $(GOFLAGS_BUILD) -o $(BIN) ./cmd/tether

# test provisions first, then runs vet, the whole suite with the race
# detector, and a short fuzz run of every fuzz target.
test: provision lint unit fuzz-short

unit:
	$(GO) test -tags '$(TAGS)' -race -count=1 -timeout 40m ./...

fuzz-short:
	./scripts/fuzz-short.sh $(FUZZTIME)

bench: provision
	$(GO) test -tags '$(TAGS)' -run '^$$' -bench . -benchmem ./...

lint: vet fmt

vet:
	$(GO) vet -tags '$(TAGS)' ./...

fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

demo: provision build
	./scripts/demo.sh

clean:
	rm -rf bin
