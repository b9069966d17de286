SHELL := bash
GO ?= go
CACHE ?= $(or $(TOPOSCOPE_CACHE),$(or $(XDG_CACHE_HOME),$(HOME)/.cache)/toposcope)
GOLANGCI_LINT ?= $(shell command -v golangci-lint 2>/dev/null || echo $(CACHE)/bin/golangci-lint)
PKGS ?= ./...

.PHONY: all build build-server build-agent image package binsize test verify fmt fmt-check vet lint bench fuzz clean

all: build

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo 0.1.0-dev)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null)
BUILD_DATE ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
BUILDINFO := github.com/toposcope/toposcope/cmd/toposcope/buildinfo
# The version, commit and build date that `toposcope version` prints; a
# build without them (go build, go install) reads vcs.revision and
# vcs.time from the binary's build information instead.
LDFLAGS := -s -w -X $(BUILDINFO).version=$(VERSION) -X $(BUILDINFO).commit=$(COMMIT) -X $(BUILDINFO).date=$(BUILD_DATE)
# grpcnotrace drops grpc's golang.org/x/net/trace, whose html/template would
# keep every exported method of every cloud SDK client in the binary (the
# linker cannot remove methods once reflect.Value.MethodByName is reachable):
# 127.5 MB without it, 56.4 MB with it. cmd/toposcope's TestDeadCodeElimination
# keeps it that way. nomsgpack drops gin's msgpack codec (ugorji/go), whose
# initialisation every command paid for (TestNoHeavyInit).
TAGS := grpcnotrace nomsgpack
# BIN: where build puts the binaries. DEPDUMP: a file that receives the
# linker's dependency dump of toposcope (-dumpdep; TestDeadCodeElimination
# reads it); empty for none.
BIN ?= bin
DEPDUMP ?=

## build: the release binaries: static (no cgo), trimmed paths, no symbol tables, the version set:
## bin/toposcope, and bin/toposcope-agent (the node agent alone, no cloud SDK) for the DaemonSet
## (BIN=DIR puts them in DIR).
build: build-server build-agent

## build-server, build-agent: one of the two (the package and the size report need only the server).
build-server:
	CGO_ENABLED=0 $(GO) build -trimpath -tags '$(TAGS)' -ldflags '$(LDFLAGS)$(if $(DEPDUMP), -dumpdep)' \
		-o $(BIN)/toposcope ./cmd/toposcope $(if $(DEPDUMP),2>$(DEPDUMP) || { tail -n 40 $(DEPDUMP) >&2; exit 1; })

build-agent:
	CGO_ENABLED=0 $(GO) build -trimpath -tags '$(TAGS)' -ldflags '$(LDFLAGS)' -o $(BIN)/toposcope-agent ./cmd/toposcope-agent

## image: the container images (Containerfile) as OCI archives, bin/toposcope-image.tar and bin/toposcope-agent-image.tar (the node agent), built with buildah.
image:
	VERSION=$(VERSION) bash hack/image.sh

## package: the .deb and .rpm (packaging/), dist/toposcope_<version>_amd64.deb and dist/toposcope-<version>.x86_64.rpm, built with nfpm.
package:
	VERSION=$(VERSION) bash hack/package.sh

## binsize: what each cloud SDK and client-go add to the release binary.
binsize:
	bash hack/binsize.sh

## verify: everything CI checks: formatting, vet, lint, tests.
verify: fmt-check vet lint test

fmt:
	gofmt -w $$(git ls-files '*.go')

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

lint:
	$(GOLANGCI_LINT) run $(PKGS)

ARTIFACTS ?= $(CURDIR)/.artifacts
# RELEASE: the release binaries every test of a run shares (testenv/releasebin).
RELEASE := $(ARTIFACTS)/release
# TEST_TIMEOUT only stops a test binary that hangs: each slow test has a
# budget of its own (testenv/budget) and fails with its own message
# when the budget runs out, well before this.
TEST_TIMEOUT ?= 60m

## test: every test. The release binaries are built once, before the tests start, and shared
## by every test that needs them (the image, the packages, the dead-code check, the end-to-end
## runs). With CI=true a skipped test fails the run (tools/testreport): a test of a
## real component may skip on a laptop, never in CI. Test artifacts (the web view's
## screenshots) are kept under $(ARTIFACTS)/_artifacts, go test's events in $(ARTIFACTS)/test.json.
test:
	rm -rf $(ARTIFACTS)/_artifacts $(RELEASE); mkdir -p $(RELEASE)
	$(MAKE) --no-print-directory build BIN=$(RELEASE) DEPDUMP=$(RELEASE)/toposcope.deps
	set -o pipefail; TOPOSCOPE_RELEASE_DIR=$(RELEASE) \
		$(GO) test -count=1 -timeout $(TEST_TIMEOUT) -json -artifacts -outputdir $(ARTIFACTS) $(PKGS) | \
		tee $(ARTIFACTS)/test.json | $(GO) run ./tools/testreport $(if $(filter true,$(CI)),-fail-on-skip)

## bench: the scale benchmarks quoted in the docs.
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./topology/ ./providers/sim/ ./engines/slurm/ ./internal/hostlist/ ./providers/infiniband/ ./internal/strictjson/

## fuzz: a short run of every fuzz target.
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzExpand -fuzztime 30s ./internal/hostlist/
	$(GO) test -run '^$$' -fuzz FuzzCompressRoundTrip -fuzztime 30s ./internal/hostlist/
	$(GO) test -run '^$$' -fuzz FuzzParse -fuzztime 30s ./providers/infiniband/
	$(GO) test -run '^$$' -fuzz FuzzParse -fuzztime 30s ./providers/nvlink/
	$(GO) test -run '^$$' -fuzz FuzzParseGenerateRequest -fuzztime 30s ./server/
	$(GO) test -run '^$$' -fuzz FuzzParse -fuzztime 30s ./internal/config/
	$(GO) test -run '^$$' -fuzz FuzzCheck -fuzztime 30s ./internal/strictjson/

clean:
	rm -rf bin dist
