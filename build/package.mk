# Packages for node images, and the CI proof that they go on and come off a
# node cleanly. Included by the top-level Makefile, whose OUTPUT, BIN,
# release and e2e targets it uses; the build scripts take the Kubernetes
# version the same way the other targets do (build/lib.sh).
#
#   make deb             _output/deb/podadmission-kubelet_<upstream>+podadmission.<N>_amd64.deb
#   make test-packages   install/purge and install/rollback cycles on this machine (root)

DEB_DIR ?= $(OUTPUT)/deb

.PHONY: deb
deb: release ## Debian package of the drop-in kubelet that diverts the stock one (_output/deb).
	build/deb/build.sh $(DEB_DIR)

# The cycles run the node e2e suite's TestPodSecurityPlugin with the
# installed kubelet and plugin, so they need what test-e2e-node needs.
.PHONY: test-packages
test-packages: deb e2e-binaries e2e-node-binaries e2e-host-deps ## Build the .deb twice (same bytes), lintian, then install/purge it and install.sh/--rollback over a stand-in stock kubelet.
	@build/host-deps.sh lintian=lintian shellcheck=shellcheck
	BIN_DIR=$(BIN) E2E_RUNTIME=$(E2E_RUNTIME) E2E_ARTIFACTS=$(E2E_ARTIFACTS) build/deb/test-cycle.sh $(DEB_DIR)

