# Upstream's own node e2e suite (test/e2e_node of UPSTREAM's tree) against
# upstream's vanilla kubelet and the drop-in kubelet: gate off, gate on with
# plugins that admit, gate on with a plugin that holds every pod and then
# releases it. Included by the top-level Makefile. See
# test/upstream-e2e/README.md.
#
#   make test-upstream-e2e-node        the full four-way run; rewrites test/upstream-e2e/RESULTS.md
#   make test-upstream-e2e-node-slice  what make test runs: the feature's ginkgo tests and a NodeConformance slice, gate on
#   make test-upstream-e2e-node-slice-four-way  the slice four ways; rewrites test/upstream-e2e/RESULTS-slice.md
#   make test-upstream-e2e-node-conformance  the full run's parallel part alone, four ways; rewrites test/upstream-e2e/RESULTS-conformance.md
#   make test-upstream-e2e-node-serial  the full run's serial part alone, four ways; rewrites test/upstream-e2e/RESULTS-serial.md
#   make upstream-e2e-build            only build the suite, the vanilla kubelet, the images and the tools

UPSTREAM_E2E_DIR := $(OUTPUT)/upstream-e2e/$(MINOR)
UPSTREAM_E2E_CONFIGS ?= vanilla gate-off gate-on gate-on-hold
# Passed to the runner's environment (run.sh): how long to wait for the
# machine's node e2e lock.
UPSTREAM_E2E_LOCK_WAIT ?= 4h
# Where the full run and the four-way slice write their results (the
# committed files by default): the slice's own file keeps the full run's.
UPSTREAM_E2E_RESULTS ?= test/upstream-e2e/RESULTS.md
UPSTREAM_E2E_SLICE_RESULTS ?= test/upstream-e2e/RESULTS-slice.md
UPSTREAM_E2E_SERIAL_RESULTS ?= test/upstream-e2e/RESULTS-serial.md
UPSTREAM_E2E_CONFORMANCE_RESULTS ?= test/upstream-e2e/RESULTS-conformance.md
# ginkgo -nodes of the parallel part: upstream's default for a local run.
UPSTREAM_E2E_PARALLELISM ?= 8
# A ginkgo -focus for make test-upstream-e2e-node-conformance alone, to run
# again a few of its tests (those a change is to fix) four ways; empty: all.
UPSTREAM_E2E_CONFORMANCE_FOCUS ?=

# The selections (ginkgo label filter and focus) and their reasons are in
# test/upstream-e2e/README.md.
UPSTREAM_E2E_CONFORMANCE := NodeConformance && !Serial && !Disruptive && !Slow && !Flaky
# Part 1: NodeConformance and the feature's own tests that are not Serial,
# in parallel. Part 2: the tests of the focus lines that part 1 does not
# run, one at a time.
UPSTREAM_E2E_PARALLEL_LABELS := $(UPSTREAM_E2E_CONFORMANCE) || Feature:PodAdmissionPlugin && !Serial
UPSTREAM_E2E_SERIAL_LABELS := !($(UPSTREAM_E2E_PARALLEL_LABELS)) && !Flaky
UPSTREAM_E2E_SERIAL_FOCUS := $(shell sed -n 's/^serial-focus: //p' test/upstream-e2e/selection.txt | paste -sd'|')
UPSTREAM_E2E_SLICE_FOCUS := $(shell sed -n 's/^slice-focus: //p' test/upstream-e2e/selection.txt | paste -sd'|')

.PHONY: upstream-e2e-build
upstream-e2e-build: source kubelet containerd ## Build upstream's node e2e suite, ginkgo, its runner, the vanilla kubelet and the suite's images from source.
	UPSTREAM=$(MINOR) test/upstream-e2e/build.sh

# The slice needs no vanilla kubelet.
.PHONY: upstream-e2e-build-slice
upstream-e2e-build-slice: source kubelet containerd
	UPSTREAM=$(MINOR) test/upstream-e2e/build.sh tools dropin images suite

# The command that reproduces a run, for its results file: the target and
# the variables of the selection set on make's command line.
UPSTREAM_E2E_OVERRIDES := UPSTREAM UPSTREAM_E2E_CONFIGS UPSTREAM_E2E_PARALLELISM UPSTREAM_E2E_SERIAL_FOCUS UPSTREAM_E2E_SLICE_FOCUS UPSTREAM_E2E_CONFORMANCE_FOCUS
upstream_e2e_command = $(strip make $(1) $(foreach v,$(UPSTREAM_E2E_OVERRIDES),$(if $(filter command line,$(origin $(v))),$(v)="$($(v))")))

# Each run directory has one subdirectory per configuration and part.
define upstream_e2e_run
	UPSTREAM=$(MINOR) LOCK_WAIT=$(UPSTREAM_E2E_LOCK_WAIT) $(1) test/upstream-e2e/run.sh -n $(2) $(3)
endef

.PHONY: test-upstream-e2e-node
test-upstream-e2e-node: upstream-e2e-build e2e-host-deps ## Upstream's node e2e suite four ways (vanilla, gate off, gate on, gate on with holds); rewrites test/upstream-e2e/RESULTS.md.
	@run=$$(date -u +%Y%m%dT%H%M%SZ); rc=0; \
	$(call upstream_e2e_run,LABEL_FILTER='$(UPSTREAM_E2E_PARALLEL_LABELS)' PARALLELISM=$(UPSTREAM_E2E_PARALLELISM),$$run-conformance,$(UPSTREAM_E2E_CONFIGS)) || rc=$$?; \
	$(call upstream_e2e_run,FOCUS='$(UPSTREAM_E2E_SERIAL_FOCUS)' LABEL_FILTER='$(UPSTREAM_E2E_SERIAL_LABELS)' PARALLELISM=1,$$run-serial,$(UPSTREAM_E2E_CONFIGS)) || rc=$$?; \
	test/upstream-e2e/results.sh $(UPSTREAM_E2E_DIR)/runs $$run '$(call upstream_e2e_command,test-upstream-e2e-node)' $(UPSTREAM_E2E_CONFIGS) >$(UPSTREAM_E2E_RESULTS) || rc=$$?; \
	exit $$rc

# Part 1 of the full run alone (NodeConformance and the feature's tests
# that are not Serial, in parallel): the full run without its serial part.
.PHONY: test-upstream-e2e-node-conformance
test-upstream-e2e-node-conformance: upstream-e2e-build e2e-host-deps ## The parallel NodeConformance part of upstream's node e2e suite four ways; rewrites test/upstream-e2e/RESULTS-conformance.md.
	@run=$$(date -u +%Y%m%dT%H%M%SZ); rc=0; \
	$(call upstream_e2e_run,LABEL_FILTER='$(UPSTREAM_E2E_PARALLEL_LABELS)' FOCUS='$(UPSTREAM_E2E_CONFORMANCE_FOCUS)' PARALLELISM=$(UPSTREAM_E2E_PARALLELISM),$$run-conformance,$(UPSTREAM_E2E_CONFIGS)) || rc=$$?; \
	test/upstream-e2e/results.sh $(UPSTREAM_E2E_DIR)/runs $$run '$(call upstream_e2e_command,test-upstream-e2e-node-conformance)' $(UPSTREAM_E2E_CONFIGS) >$(UPSTREAM_E2E_CONFORMANCE_RESULTS) || rc=$$?; \
	exit $$rc

# Part 2 of the full run alone (the Serial and Disruptive tests of the
# paths the series changes), for a comparison in a third of its time.
.PHONY: test-upstream-e2e-node-serial
test-upstream-e2e-node-serial: upstream-e2e-build e2e-host-deps ## The serial part of upstream's node e2e suite four ways; rewrites test/upstream-e2e/RESULTS-serial.md.
	@run=$$(date -u +%Y%m%dT%H%M%SZ); rc=0; \
	$(call upstream_e2e_run,FOCUS='$(UPSTREAM_E2E_SERIAL_FOCUS)' LABEL_FILTER='$(UPSTREAM_E2E_SERIAL_LABELS)' PARALLELISM=1,$$run-serial,$(UPSTREAM_E2E_CONFIGS)) || rc=$$?; \
	test/upstream-e2e/results.sh $(UPSTREAM_E2E_DIR)/runs $$run '$(call upstream_e2e_command,test-upstream-e2e-node-serial)' $(UPSTREAM_E2E_CONFIGS) >$(UPSTREAM_E2E_SERIAL_RESULTS) || rc=$$?; \
	exit $$rc

# The CI slice: the feature's own ginkgo tests (patch 0010) and a slice of
# NodeConformance, gate on, one configuration.
UPSTREAM_E2E_SLICE_RUN = FOCUS='$(UPSTREAM_E2E_SLICE_FOCUS)' SKIP='\[Flaky\]|\[Slow\]' PARALLELISM=1
.PHONY: test-upstream-e2e-node-slice
# It fails when a test fails, the suite exits non-zero or no test passes
# (results -check), naming each failed test.
test-upstream-e2e-node-slice: upstream-e2e-build-slice e2e-host-deps ## CI's slice (make test-all) of upstream's node e2e suite: the feature's ginkgo tests and a NodeConformance slice, gate on; fails on any failed test.
	@run=slice-$$(date -u +%Y%m%dT%H%M%SZ); \
	$(call upstream_e2e_run,$(UPSTREAM_E2E_SLICE_RUN),$$run,gate-on) && \
	go run ./test/upstream-e2e/cmd/results -check -runs $(UPSTREAM_E2E_DIR)/runs/$$run gate-on

# The same slice against the four configurations (about 15 minutes), for a
# comparison quicker than the full run's.
.PHONY: test-upstream-e2e-node-slice-four-way
test-upstream-e2e-node-slice-four-way: upstream-e2e-build e2e-host-deps ## The CI slice of upstream's node e2e suite four ways; rewrites test/upstream-e2e/RESULTS-slice.md.
	@run=$$(date -u +%Y%m%dT%H%M%SZ); rc=0; \
	$(call upstream_e2e_run,$(UPSTREAM_E2E_SLICE_RUN),$$run-slice,$(UPSTREAM_E2E_CONFIGS)) || rc=$$?; \
	test/upstream-e2e/results.sh $(UPSTREAM_E2E_DIR)/runs $$run '$(call upstream_e2e_command,test-upstream-e2e-node-slice-four-way)' $(UPSTREAM_E2E_CONFIGS) >$(UPSTREAM_E2E_SLICE_RESULTS) || rc=$$?; \
	exit $$rc
