# Node e2e suite, demo and benchmarks: a one-node cluster around the drop-in
# kubelet (see test/e2e_node/framework). Included by the top-level Makefile,
# whose BIN, OUTPUT and STAMPS and kubelet / e2e-binaries targets it uses.
#
#   make test-e2e-node                  the suite, containerd 2.x runtime
#   make test-e2e-node E2E_RUNTIME=containerd1.6  the suite on Debian's containerd 1.6 (skew)
#   make test-e2e-node E2E_RUNTIME=fake the suite on the fast fake CRI
#   make test-e2e-node-smoke UPSTREAM=v1.36.3  a short run with another minor's kubelet
#   make demo                           a pod held, then admitted; Ctrl-C ends
#   make bench-e2e                      benchmark rows of BENCHMARKS.md (~30 min with containerd)
#   make e2e-node-clean                 clean up after a run killed with -9

# containerd (2.x and runc from make containerd, Debian's CNI plugins),
# containerd1.6 (Debian's containerd 1.6 and runc 1.1) or fake.
E2E_RUNTIME ?= containerd
# Each run gets a directory here with every component's log.
E2E_ARTIFACTS ?= $(OUTPUT)/e2e
# Extra flags for the test binary, e.g. E2E_TEST_FLAGS='-test.run=Baseline'.
E2E_TEST_FLAGS ?=
# A safety net: a hung suite is stopped (teardown then runs from the make
# recipe). The suite takes a few minutes.
E2E_TIMEOUT ?= 40m

E2E_BIN := $(BIN)/e2e
E2E_TAGS := e2e_node
# The kubelet is UPSTREAM's (E2E_KUBELET, from the Makefile); the control
# plane and the harness are always the default minor's, from BIN.
E2E_SUITE_FLAGS = -e2e.runtime=$(E2E_RUNTIME) -e2e.bin-dir=$(BIN) -e2e.kubelet=$(E2E_KUBELET) -e2e.artifacts=$(E2E_ARTIFACTS) -e2e.containerd-bin-dir=$(CONTAINERD_BIN)

# Harness commands, and the two static binaries packed into the local
# pause and workload images of the containerd mode.
E2E_MAINS := etcd fakeruntime crirecorder e2e-cluster
E2E_IMAGE_MAINS := pause workload

# kubectl, from the same tree as the control plane: the tests drive the
# kubelet's pod conditions with kubectl wait, as a user would.
$(BIN)/kubectl: $(STAMPS)/source $(STAMPS)/version build/kubelet.sh build/lib.sh
	build/kubelet.sh ./cmd/kubectl $@

.PHONY: e2e-node-binaries
e2e-node-binaries: ## Build the node e2e harness, its test binaries and the test plugin.
	@mkdir -p $(E2E_BIN)
	go build -tags $(E2E_TAGS) -o $(E2E_BIN)/ $(addprefix ./test/e2e_node/cmd/,$(E2E_MAINS))
	CGO_ENABLED=0 go build -tags $(E2E_TAGS) -trimpath -ldflags '-s -w' -o $(E2E_BIN)/ $(addprefix ./test/e2e_node/cmd/,$(E2E_IMAGE_MAINS))
	go test -c -tags $(E2E_TAGS) -o $(E2E_BIN)/e2e_node.test ./test/e2e_node
	go test -c -tags $(E2E_TAGS) -o $(E2E_BIN)/e2e_node_bench.test ./test/e2e_node/bench
	go test -c -tags $(E2E_TAGS) -o $(E2E_BIN)/e2e_node_nri.test ./test/e2e_node/nri
	go build -o $(BIN)/testplugin ./test/testplugin
	CGO_ENABLED=0 go build -tags testplugin_exec -trimpath -ldflags '-s -w' -o $(BIN)/testplugin-exec ./test/testplugin
	cd test/e2e_node/nriplugin && GOWORK=off go build -o $(abspath $(E2E_BIN))/nriplugin .

# The runtime of E2E_RUNTIME: containerd 2.x is built (make containerd),
# containerd 1.6 comes from Debian; both use Debian's CNI plugins.
.PHONY: e2e-host-deps
e2e-host-deps: ## Install (and for containerd 2.x, build) what E2E_RUNTIME needs: containerd, runc, the CNI plugins.
	@case "$(E2E_RUNTIME)" in \
	containerd) test/e2e_node/install-host-deps.sh containerd && build/containerd.sh >/dev/null ;; \
	containerd1.6) test/e2e_node/install-host-deps.sh containerd1.6 ;; \
	esac

.PHONY: verify-e2e-node
verify-e2e-node: ## go vet the node e2e code (it builds only with -tags e2e_node).
	go vet -tags $(E2E_TAGS) ./test/e2e_node/...

# The recipe cleans up even when the suite failed or was killed, and keeps
# the suite's exit status.
.PHONY: test-e2e-node
test-e2e-node: kubelet e2e-binaries $(BIN)/kubectl e2e-node-binaries plugins e2e-host-deps ## Node e2e suite against the drop-in kubelet (E2E_RUNTIME=containerd|fake).
	@rc=0; $(E2E_BIN)/e2e_node.test -test.v -test.timeout=$(E2E_TIMEOUT) $(E2E_SUITE_FLAGS) $(E2E_TEST_FLAGS) || rc=$$?; \
	$(E2E_BIN)/e2e-cluster clean || rc=1; exit $$rc

# The short run for a minor other than the default (make test-other-minors):
# its kubelet against the default minor's control plane, a supported skew.
E2E_SMOKE_TIMEOUT ?= 15m
.PHONY: test-e2e-node-smoke
test-e2e-node-smoke: kubelet e2e-binaries e2e-node-binaries plugins e2e-host-deps ## Node e2e smoke (TestSmoke*: hold, release, gate off) against UPSTREAM's kubelet, e.g. UPSTREAM=v1.36.3.
	@rc=0; $(E2E_BIN)/e2e_node.test -test.v -test.timeout=$(E2E_SMOKE_TIMEOUT) -test.run='^TestSmoke' $(E2E_SUITE_FLAGS) $(E2E_TEST_FLAGS) || rc=$$?; \
	$(E2E_BIN)/e2e-cluster clean || rc=1; exit $$rc

.PHONY: demo
demo: kubelet e2e-binaries e2e-node-binaries plugins e2e-host-deps ## One-node cluster: a plugin holds a pod, then admits it; runs until Ctrl-C.
	@rc=0; $(E2E_BIN)/e2e-cluster demo $(E2E_SUITE_FLAGS) || rc=$$?; \
	$(E2E_BIN)/e2e-cluster clean || rc=1; exit $$rc

# Each runtime mode owns one section of BENCHMARKS.md (e2e-node-<mode>),
# which a successful run rewrites with the command that produced it.
# About 22 minutes with containerd.
E2E_BENCH_FLAGS ?=
E2E_BENCH_REPORT := $(OUTPUT)/e2e/bench-$(E2E_RUNTIME).md
.PHONY: bench-e2e
bench-e2e: kubelet e2e-binaries e2e-node-binaries plugins e2e-host-deps ## Node e2e benchmarks; rewrite the E2E_RUNTIME section of BENCHMARKS.md.
	@mkdir -p $(dir $(E2E_BENCH_REPORT)); rm -f $(E2E_BENCH_REPORT); rc=0; \
	$(E2E_BIN)/e2e_node_bench.test -test.v -test.timeout=90m $(E2E_SUITE_FLAGS) \
		-e2e.bench-report=$(E2E_BENCH_REPORT) -e2e.bench-command='make bench-e2e E2E_RUNTIME=$(E2E_RUNTIME)$(if $(E2E_BENCH_FLAGS), E2E_BENCH_FLAGS="$(E2E_BENCH_FLAGS)")' $(E2E_BENCH_FLAGS) || rc=$$?; \
	$(E2E_BIN)/e2e-cluster clean || rc=1; \
	if [[ $$rc -eq 0 ]]; then build/bench-section.sh e2e-node-$(E2E_RUNTIME) <$(E2E_BENCH_REPORT); fi; exit $$rc

# The same two policies as an NRI plugin in containerd 2.x and as
# podadmission plugins, side by side on one node (test/e2e_node/nri);
# rewrites the nri section of BENCHMARKS.md. About 8 minutes.
E2E_NRI_REPORT := $(OUTPUT)/e2e/nri.md
.PHONY: bench-nri
bench-nri: kubelet e2e-binaries e2e-node-binaries plugins ## Soft admission next to an NRI validation plugin in containerd 2.x; rewrite the nri section of BENCHMARKS.md.
	@test/e2e_node/install-host-deps.sh containerd && build/containerd.sh >/dev/null
	@mkdir -p $(dir $(E2E_NRI_REPORT)); rm -f $(E2E_NRI_REPORT); rc=0; \
	$(E2E_BIN)/e2e_node_nri.test -test.v -test.timeout=40m $(subst -e2e.runtime=$(E2E_RUNTIME),-e2e.runtime=containerd,$(E2E_SUITE_FLAGS)) \
		-e2e.nri-report=$(E2E_NRI_REPORT) -e2e.nri-command='make bench-nri' $(E2E_TEST_FLAGS) || rc=$$?; \
	$(E2E_BIN)/e2e-cluster clean || rc=1; \
	if [[ $$rc -eq 0 ]]; then build/bench-section.sh nri <$(E2E_NRI_REPORT); fi; exit $$rc

.PHONY: e2e-node-clean
e2e-node-clean: ## Remove what a killed node e2e run left behind (processes, mounts, cgroups, paths).
	go run -tags $(E2E_TAGS) ./test/e2e_node/cmd/e2e-cluster clean
