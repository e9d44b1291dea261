# podadmission: a drop-in kubelet with node-local, pluggable pod admission.
#
# The front door. `make help` lists the targets.

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec
.DEFAULT_GOAL := kubelet

OUTPUT := _output
# This module's binaries (podadmctl, plugins, the e2e harness) and the
# default minor's kubelet and control plane (links to _output/1-NN/bin).
BIN := $(OUTPUT)/bin
DEFAULT_BIN := $(OUTPUT)/bin

# Tests run with the race detector; fuzzers each get this long in `make test`.
FUZZTIME ?= 20s

# Upstream binaries the node e2e cluster needs, built from the same tree.
E2E_UPSTREAM_BINARIES := kube-apiserver kube-controller-manager kube-scheduler

# The maintained minors, one series each in patches/1-NN (its facts in
# patches/1-NN/UPSTREAM). UPSTREAM=v1.36.3 (or UPSTREAM=1-36) selects one for
# every target; the default is the newest minor that builds here. Each minor
# has its own output tree, _output/1-NN/ (src/kubernetes, stamps, bin).
MINORS := $(shell build/minor.sh list)
BUILDABLE_MINORS := $(shell build/minor.sh buildable)
DEFAULT_MINOR := $(shell build/minor.sh default)
MINOR := $(shell build/minor.sh $(UPSTREAM))
ifeq ($(MINOR),)
$(error UPSTREAM=$(UPSTREAM) names no maintained minor (see above))
endif
MINOR_BIN := $(OUTPUT)/$(MINOR)/bin
MINOR_STAMPS := $(OUTPUT)/$(MINOR)/stamps
# The kubelet the node e2e targets run.
E2E_KUBELET := $(MINOR_BIN)/kubelet
# cmd.mk stamps the binaries in _output/bin with the default minor's version.
STAMPS := $(OUTPUT)/$(DEFAULT_MINOR)/stamps

BUILD_SCRIPTS := build/kubelet.sh build/lib.sh build/deps.sh

.PHONY: help
help: ## Show this help.
	@grep -hE '^[a-zA-Z0-9_-]+:.*## ' $(MAKEFILE_LIST) | sort | awk -F':.*## ' '{printf "  %-22s %s\n", $$1, $$2}'
	@echo "  Minors: $(MINORS) (buildable here: $(BUILDABLE_MINORS); default $(DEFAULT_MINOR)); UPSTREAM=v1.NN.P or 1-NN selects one."

##@ Upstream tree and the patch series

# The rules of one minor's tree and binaries. build/source.sh is idempotent
# and cheap when nothing changed; it touches the stamp only when it changed
# the tree, so binaries rebuild only then.
define minor_rules
$(OUTPUT)/$(1)/stamps/source: FORCE
	@mkdir -p $$(@D)
	@if [[ -n "$$$$(UPSTREAM=$(1) build/source.sh)" || ! -f $$@ ]]; then touch $$@; fi

$(OUTPUT)/$(1)/stamps/version: FORCE
	@mkdir -p $$(@D)
	@UPSTREAM=$(1) build/version.sh ldflags >$$@.tmp
	@if cmp -s $$@.tmp $$@; then rm $$@.tmp; else mv $$@.tmp $$@; fi

$(addprefix $(OUTPUT)/$(1)/bin/,kubelet $(E2E_UPSTREAM_BINARIES)): $(OUTPUT)/$(1)/bin/%: $(OUTPUT)/$(1)/stamps/source $(OUTPUT)/$(1)/stamps/version $(BUILD_SCRIPTS)
	UPSTREAM=$(1) build/kubelet.sh ./cmd/$$* $$@
endef
$(foreach m,$(MINORS),$(eval $(call minor_rules,$(m))))

# The default minor's kubelet and control plane in _output/bin, where the
# README, the node e2e suite and the demo find them.
$(addprefix $(DEFAULT_BIN)/,kubelet $(E2E_UPSTREAM_BINARIES)): $(DEFAULT_BIN)/%: $(OUTPUT)/$(DEFAULT_MINOR)/bin/%
	@mkdir -p $(@D)
	@ln -f $< $@ && ln -f $<.sha256 $@.sha256

.PHONY: source
source: $(MINOR_STAMPS)/source ## Reconstruct upstream in _output/1-NN/src/kubernetes and apply the series.

.PHONY: patches
patches: ## Export the commits on top of the upstream tag back to patches/1-NN/.
	UPSTREAM=$(MINOR) build/patches.sh

.PHONY: verify-patches
verify-patches: ## Apply every series (or UPSTREAM's) with git am on its pristine upstream; headers, gate version, no drift.
	build/verify-patches.sh

# make rebase FROM=1-37 TO=v1.36.3: port a series to another upstream
# release; run it again to continue after resolving a conflict.
.PHONY: rebase
rebase: ## Port the series FROM=1-NN to TO=v1.MM.P into patches/1-MM (git am -3; stops for a human on conflicts).
	@[[ -n "$(FROM)" && -n "$(TO)" ]] || { echo "usage: make rebase FROM=1-37 TO=v1.36.3 (ABORT=1 to give up a stopped one)" >&2; exit 2; }
	build/rebase.sh $(if $(ABORT),--abort) $(FROM) $(TO)

##@ Binaries

.PHONY: kubelet
kubelet: $(MINOR_BIN)/kubelet $(if $(filter $(MINOR),$(DEFAULT_MINOR)),$(DEFAULT_BIN)/kubelet) ## Build the drop-in kubelet (_output/1-NN/bin/kubelet; the default minor's also in _output/bin).

.PHONY: e2e-binaries
e2e-binaries: $(addprefix $(DEFAULT_BIN)/,$(E2E_UPSTREAM_BINARIES)) ## Build the default minor's control plane for the node e2e cluster.

# One tarball per minor: _output/release/kubelet-<upstream>+podadmission.<N>-linux-amd64.tar.gz,
# with podadmctl and the plugins stamped with the same version.
.PHONY: release
release: kubelet ## Package UPSTREAM's kubelet (with podadmctl, pod-security-plugin and pod-security-plugin-grpc) for node images in _output/release.
	@$(MAKE) --no-print-directory $(MINOR_BIN)/podadmctl $(MINOR_BIN)/pod-security-plugin $(MINOR_BIN)/pod-security-plugin-grpc BIN=$(MINOR_BIN) STAMPS=$(MINOR_STAMPS)
	UPSTREAM=$(MINOR) build/release.sh

# containerd 2.x and runc, built from the Go module proxy (build/containerd.sh):
# _output/containerd/<version>/bin/{containerd,containerd-shim-runc-v2,ctr,runc},
# stamped, rebuilt only when an input changes. The node e2e suite's runtime.
CONTAINERD_BIN := $(shell build/containerd.sh dir)

.PHONY: containerd
containerd: ## Build containerd 2.x and runc from the Go module proxy into _output/containerd/<version>/bin.
	@build/containerd.sh >/dev/null

##@ Development

.PHONY: generate
generate: ## Regenerate deepcopy, gRPC and the SDK's Pod types (pkg/plugin/corev1) with pinned tools.
	build/generate.sh

.PHONY: verify
verify: ## Licence headers, gofmt, go vet, tidy go.mod files, generated code up to date.
	build/verify.sh

##@ Tests

# make test: the default minor end to end, in this order; under an hour
# cold. The long suites are targets of their own that CI runs after it
# (.ci/run times each step of both).
TEST_STEPS := verify verify-patches upstream-status test-build test-unit test-fuzz test-patched test-e2e-node test-packages
LONG_TEST_STEPS := test-upstream-e2e-node-slice test-other-minors
.PHONY: test
test: $(TEST_STEPS) ## The default minor end to end: verify, every series, unit, fuzz, patched-tree, node e2e and package tests.

.PHONY: test-all
test-all: test $(LONG_TEST_STEPS) ## What CI runs: make test, then upstream's node e2e slice and every other buildable minor.

.PHONY: test-steps test-long-steps
test-steps:
	@echo $(TEST_STEPS)
test-long-steps:
	@echo $(LONG_TEST_STEPS)

.PHONY: test-build
test-build: ## Tests of the build scripts (the dependency drift check, .ci/run's time budget).
	build/deps_test.sh
	build/ci_run_test.sh

.PHONY: test-unit
test-unit: ## Unit tests of this module (and of build/image, a module of its own) with the race detector.
	go test -race -count=1 -timeout 30m ./...
	go test -race -count=1 -tags e2e_node ./test/e2e_node/framework/
	cd build/image && GOWORK=off go test -race -count=1 ./...

.PHONY: test-fuzz
test-fuzz: ## Run every fuzzer for FUZZTIME.
	build/fuzz.sh $(FUZZTIME)

.PHONY: test-patched
test-patched: source ## Upstream unit tests of the packages the series touches, in the patched tree.
	UPSTREAM=$(MINOR) build/test-patched.sh

# The default minor runs the whole node e2e suite (test-e2e-node); every
# other minor that builds here is built, tested in its tree (the packages
# the series changes), runs the e2e smoke against the default minor's
# control plane and cycles its .deb and .rpm.
.PHONY: test-other-minors
test-other-minors: package-tools ## Every other buildable minor: kubelet, test-patched (series packages), node e2e smoke, .deb and .rpm cycles.
	@for m in $(filter-out $(DEFAULT_MINOR),$(BUILDABLE_MINORS)); do \
		$(MAKE) --no-print-directory kubelet test-patched test-e2e-node-smoke test-packages-minor UPSTREAM=$$m TEST_PATCHED_SCOPE=series || exit 1; \
	done

##@ Benchmarks (each rewrites its own section of BENCHMARKS.md)

.PHONY: bench
bench: bench-transports bench-instructions bench-reload bench-push bench-build bench-packages bench-e2e bench-nri ## All benchmarks, side by side, into BENCHMARKS.md.

.PHONY: bench-transports
bench-transports: ## One admission through Exec and GRPC plugins next to a no-plugin baseline (p50/p99).
	build/bench-transports.sh | build/bench-section.sh transports

.PHONY: bench-instructions
bench-instructions: ## Instructions, package inits, packages and size of one Exec plugin call: stdlib-only, SDK, SDK linking k8s.io/api, SDK with corepod, pod-security-plugin (callgrind).
	build/bench-instructions.sh | build/bench-section.sh instructions

.PHONY: bench-reload
bench-reload: ## The configuration resync of 10,000 unchanged files next to a full load of them.
	build/bench-reload.sh | build/bench-section.sh reload

.PHONY: bench-push
bench-push: ## A plugin pushing All in a loop next to none: calls it drives into another plugin, a new pod's latency.
	build/bench-push.sh | build/bench-section.sh push

.PHONY: bench-build
bench-build: source ## UPSTREAM's cold/warm kubelet build time, size next to vanilla, reproducibility.
	UPSTREAM=$(MINOR) build/bench-build.sh

.PHONY: FORCE
FORCE:

# podadmctl and the example plugins.
include cmd/cmd.mk

# Node e2e suite, demo and its benchmarks.
include test/e2e_node/e2e.mk

# Upstream's own node e2e suite against the vanilla and the drop-in kubelet.
include test/upstream-e2e/upstream-e2e.mk

# The Debian package and the install/rollback cycles of the release.
include build/package.mk
