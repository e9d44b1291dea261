# podadmission: a drop-in kubelet with node-local, pluggable pod admission.
#
# The front door. `make help` lists the targets.

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec
.DEFAULT_GOAL := kubelet

OUTPUT := _output
BIN := $(OUTPUT)/bin
STAMPS := $(OUTPUT)/stamps

# Tests run with the race detector; fuzzers each get this long in `make test`.
FUZZTIME ?= 20s

# Upstream binaries the node e2e cluster needs, built from the same tree.
E2E_UPSTREAM_BINARIES := kube-apiserver kube-controller-manager kube-scheduler

.PHONY: help
help: ## Show this help.
	@grep -hE '^[a-zA-Z0-9_-]+:.*## ' $(MAKEFILE_LIST) | sort | awk -F':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'

##@ Upstream tree and the patch series

# build/source.sh is idempotent and cheap when nothing changed; it touches the
# stamp only when it changed the tree, so binaries rebuild only then.
$(STAMPS)/source: FORCE
	@mkdir -p $(STAMPS)
	@if [[ -n "$$(build/source.sh)" || ! -f $@ ]]; then touch $@; fi

.PHONY: source
source: $(STAMPS)/source ## Reconstruct upstream in _output/src/kubernetes and apply the series.

.PHONY: patches
patches: ## Export the commits on top of the upstream tag back to patches/.
	build/patches.sh

.PHONY: verify-patches
verify-patches: ## Apply the series with git am on pristine upstream.
	build/verify-patches.sh

##@ Binaries

$(STAMPS)/version: FORCE
	@mkdir -p $(STAMPS)
	@build/version.sh ldflags >$@.tmp
	@if cmp -s $@.tmp $@; then rm $@.tmp; else mv $@.tmp $@; fi

$(BIN)/kubelet: $(STAMPS)/source $(STAMPS)/version build/kubelet.sh build/lib.sh
	build/kubelet.sh ./cmd/kubelet $@

.PHONY: kubelet
kubelet: $(BIN)/kubelet ## Build the drop-in kubelet (_output/bin/kubelet and .sha256).

$(addprefix $(BIN)/,$(E2E_UPSTREAM_BINARIES)): $(BIN)/%: $(STAMPS)/source $(STAMPS)/version build/kubelet.sh build/lib.sh
	build/kubelet.sh ./cmd/$* $@

.PHONY: e2e-binaries
e2e-binaries: $(addprefix $(BIN)/,$(E2E_UPSTREAM_BINARIES)) ## Build the upstream control plane for the node e2e cluster.

.PHONY: release
release: kubelet cmd ## Package the kubelet (with podadmctl and pod-security-plugin) for node images in _output/release.
	build/release.sh

##@ Development

.PHONY: generate
generate: ## Regenerate deepcopy and gRPC code with pinned tools.
	build/generate.sh

.PHONY: verify
verify: ## gofmt, go vet, generated code up to date.
	build/verify.sh

##@ Tests

.PHONY: test
test: verify verify-patches test-unit test-fuzz test-patched test-e2e-node ## Everything CI runs.

.PHONY: test-unit
test-unit: ## Unit tests of this module with the race detector.
	go test -race -count=1 ./...

.PHONY: test-fuzz
test-fuzz: ## Run every fuzzer for FUZZTIME.
	build/fuzz.sh $(FUZZTIME)

.PHONY: test-patched
test-patched: source ## Upstream unit tests of the packages the series touches, in the patched tree.
	build/test-patched.sh

##@ Benchmarks (each rewrites its own section of BENCHMARKS.md)

.PHONY: bench
bench: bench-transports bench-build bench-e2e ## All benchmarks, side by side, into BENCHMARKS.md.

.PHONY: bench-transports
bench-transports: ## One admission through Exec and GRPC plugins next to a no-plugin baseline (p50/p99).
	build/bench-transports.sh | build/bench-section.sh transports

.PHONY: bench-build
bench-build: source ## Cold/warm kubelet build time, size next to vanilla, reproducibility.
	build/bench-build.sh

.PHONY: FORCE
FORCE:

# podadmctl and the example plugins.
include cmd/cmd.mk

# Node e2e suite, demo and its benchmarks.
include test/e2e_node/e2e.mk

# The Debian package and the install/rollback cycles of the release.
include build/package.mk
