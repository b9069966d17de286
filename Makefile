SHELL := bash
GO ?= go
CACHE ?= $(or $(TOPOSCOPE_CACHE),$(or $(XDG_CACHE_HOME),$(HOME)/.cache)/toposcope)
GOLANGCI_LINT ?= $(shell command -v golangci-lint 2>/dev/null || echo $(CACHE)/bin/golangci-lint)
PKGS ?= ./...

.PHONY: all build build-server build-agent image package binsize test verify fmt fmt-check vet lint bench fuzz clean

all: build

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo 0.1.0-dev)
LDFLAGS := -s -w -X github.com/toposcope/toposcope/cmd/toposcope/buildinfo.version=$(VERSION)
# grpcnotrace drops grpc's golang.org/x/net/trace, whose html/template would
# keep every exported method of every cloud SDK client in the binary (the
# linker cannot remove methods once reflect.Value.MethodByName is reachable):
# 127.5 MB without it, 56.4 MB with it. cmd/toposcope's TestDeadCodeElimination
# keeps it that way.
TAGS := grpcnotrace

## build: the release binaries: static (no cgo), trimmed paths, no symbol tables, the version set:
## bin/toposcope, and bin/toposcope-agent (the node agent alone, no cloud SDK) for the DaemonSet.
build: build-server build-agent

## build-server, build-agent: one of the two (the package and the size report need only the server).
build-server:
	CGO_ENABLED=0 $(GO) build -trimpath -tags '$(TAGS)' -ldflags '$(LDFLAGS)' -o bin/toposcope ./cmd/toposcope

build-agent:
	CGO_ENABLED=0 $(GO) build -trimpath -tags '$(TAGS)' -ldflags '$(LDFLAGS)' -o bin/toposcope-agent ./cmd/toposcope-agent

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

## test: every test. With CI=true a skipped test fails the run (internal/testenv/testreport):
## a test of a real component may skip on a laptop, never in CI. Test artifacts (the web
## view's screenshots) are kept under $(ARTIFACTS)/_artifacts.
test:
	rm -rf $(ARTIFACTS)/_artifacts; mkdir -p $(ARTIFACTS)
	set -o pipefail; $(GO) test -count=1 -timeout 30m -json -artifacts -outputdir $(ARTIFACTS) $(PKGS) | \
		$(GO) run ./internal/testenv/testreport $(if $(filter true,$(CI)),-fail-on-skip)

## bench: the scale benchmarks quoted in the docs.
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./topology/ ./providers/sim/ ./engines/slurm/ ./internal/hostlist/ ./providers/infiniband/

## fuzz: a short run of every fuzz target.
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzExpand -fuzztime 30s ./internal/hostlist/
	$(GO) test -run '^$$' -fuzz FuzzCompressRoundTrip -fuzztime 30s ./internal/hostlist/
	$(GO) test -run '^$$' -fuzz FuzzParse -fuzztime 30s ./providers/infiniband/
	$(GO) test -run '^$$' -fuzz FuzzParse -fuzztime 30s ./providers/nvlink/
	$(GO) test -run '^$$' -fuzz FuzzParseGenerateRequest -fuzztime 30s ./service/
	$(GO) test -run '^$$' -fuzz FuzzParse -fuzztime 30s ./internal/config/

clean:
	rm -rf bin dist
