# Packages and images for node images, and the CI proof that they go on and
# come off a node cleanly. Included by the top-level Makefile, whose OUTPUT,
# BIN, MINOR, release and e2e targets it uses; the build scripts take the
# Kubernetes version the same way the other targets do (build/lib.sh,
# UPSTREAM=).
#
#   make deb             _output/deb/podadmission-kubelet_<upstream>+podadmission.<N>_amd64.deb
#   make rpm             _output/rpm/podadmission-kubelet-<upstream>+podadmission.<N>-1.x86_64.rpm
#   make sysext          _output/sysext/podadmission-kubelet-<version>-x86-64.raw
#   make image           _output/image/kubelet-<version>.oci.tar and .docker.tar
#   make test-packages   UPSTREAM's release tarball rebuilt under umask 0077, its .deb and .rpm cycled,
#                        its sysext and image checked (root);
#                        make test-other-minors cycles the other minors' packages
#   make upstream-status the newest patch release of every maintained minor, and which series are behind

DEB_DIR ?= $(OUTPUT)/deb
RPM_DIR ?= $(OUTPUT)/rpm
SYSEXT_DIR ?= $(OUTPUT)/sysext
IMAGE_DIR ?= $(OUTPUT)/image

.PHONY: deb
deb: release ## Debian package of the drop-in kubelet that diverts the stock one (_output/deb).
	UPSTREAM=$(MINOR) build/deb/build.sh $(DEB_DIR)

.PHONY: rpm
rpm: release ## RPM of the drop-in kubelet that takes over the stock one's /usr/bin/kubelet and gives it back (_output/rpm).
	@build/host-deps.sh rpmbuild=rpm
	UPSTREAM=$(MINOR) build/rpm/build.sh $(RPM_DIR)

.PHONY: sysext
sysext: release ## systemd-sysext image (squashfs .raw) of the drop-in kubelet, Flatcar sysext-bakery layout (_output/sysext).
	@build/host-deps.sh mksquashfs=squashfs-tools
	UPSTREAM=$(MINOR) build/sysext.sh $(SYSEXT_DIR)

.PHONY: image
image: release ## OCI image of the drop-in kubelet for Talos' machine.kubelet.image (IMAGE_BASE= to layer on a base), OCI layout and docker-save tarballs (_output/image).
	UPSTREAM=$(MINOR) build/image.sh $(IMAGE_DIR)

.PHONY: upstream-status
upstream-status: ## Each maintained minor: the release its series targets, the newest the Go module proxy serves, which series are behind.
	build/upstream-status.sh

# systemd-dissect comes with systemd-container, of the installed systemd's
# version (a newer one would upgrade systemd on a shared machine). The .deb
# cycle enables the plugin daemon's unit with systemctl and checks it with
# systemd-analyze verify (neither needs systemd to be running).
PACKAGE_TOOLS := lintian=lintian shellcheck=shellcheck rpmbuild=rpm rpmlint=rpmlint busybox=busybox-static \
	systemctl=systemd systemd-analyze=systemd \
	mksquashfs=squashfs-tools unsquashfs=squashfs-tools \
	systemd-dissect=systemd-container=$(shell dpkg-query -W -f='$${Version}' systemd 2>/dev/null)

# The cycles run the node e2e suite's TestPodSecurityPlugin with the
# installed kubelet and plugin of the default minor, so they need what
# test-e2e-node needs; every other buildable minor's kubelet runs the node
# e2e smoke in test-other-minors.
.PHONY: test-packages
test-packages: e2e-binaries e2e-node-binaries e2e-host-deps containerd package-tools ## UPSTREAM's release tarball rebuilt under umask 0077 (same bytes), its .deb and .rpm built twice (same bytes), linted, installed, upgraded under and removed; its sysext and OCI image built twice and checked.
	$(MAKE) --no-print-directory test-packages-minor test-images UPSTREAM=$(MINOR)

.PHONY: package-tools
package-tools:
	@build/host-deps.sh $(PACKAGE_TOOLS)

.PHONY: test-packages-minor
test-packages-minor: deb rpm
	UPSTREAM=$(MINOR) build/release-check.sh
	BIN_DIR=$(BIN) E2E_RUNTIME=$(E2E_RUNTIME) E2E_ARTIFACTS=$(E2E_ARTIFACTS) CONTAINERD_BIN=$(CONTAINERD_BIN) \
		PACKAGE_E2E=$(if $(filter $(MINOR),$(DEFAULT_MINOR)),1,0) UPSTREAM=$(MINOR) build/deb/test-cycle.sh $(DEB_DIR)
	UPSTREAM=$(MINOR) build/rpm/test-cycle.sh $(RPM_DIR)

.PHONY: test-images
test-images: sysext image containerd
	UPSTREAM=$(MINOR) build/sysext-check.sh $(SYSEXT_DIR)
	UPSTREAM=$(MINOR) build/image-check.sh $(IMAGE_DIR)

.PHONY: bench-packages
bench-packages: release ## Every node-image artefact of UPSTREAM built twice: sizes, sha256 of both builds, build time (BENCHMARKS.md packages-1-NN).
	@build/host-deps.sh rpmbuild=rpm mksquashfs=squashfs-tools
	UPSTREAM=$(MINOR) build/bench-packages.sh
