#!/usr/bin/env bash
# Packages the drop-in kubelet of one minor (UPSTREAM, see lib.sh) for node
# images, one tarball per minor:
#   _output/release/kubelet-<upstream>+podadmission.<N>-linux-amd64.tar.gz (+ .sha256)
# holding the kubelet, its sha256, LICENSE, a systemd drop-in that enables
# the feature gate, the sample plugin configurations with the plugins they
# name (pod-security-plugin, an Exec plugin, and pod-security-plugin-grpc,
# the same policy as a GRPC daemon, with its systemd unit), podadmctl to
# validate configurations on the node
# (both stamped with the kubelet's version; make release builds them),
# install.sh to install and roll back on images without dpkg,
# bin-url/<version>/bin/linux/amd64/kubelet and kubelet.sha256 (the hex
# digest alone), the layout the EKS AMI build and kops download a kubelet
# from (a hard link: the tarball holds the kubelet once), and SHA256SUMS of
# every other file, which install.sh verifies.
# The tarball is reproducible: fixed owner, mode and mtime
# (SOURCE_DATE_EPOCH), sorted. Modes are set, not adjusted, so the
# builder's umask does not reach them (0755 for directories and
# executables, 0644 for the rest; build/release-check.sh).

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

bin=${MINOR_BIN_DIR}
# What the tarball ships, SOURCE:PATH-IN-THE-TARBALL; add a line to ship more.
SHIP=(
  "${bin}/kubelet:kubelet"
  "${bin}/kubelet.sha256:kubelet.sha256"
  "${bin}/podadmctl:podadmctl"
  "${bin}/pod-security-plugin:pod-admission-bin/pod-security-plugin"
  "${bin}/pod-security-plugin-grpc:pod-admission-bin/pod-security-plugin-grpc"
  "${REPO_ROOT}/LICENSE:LICENSE"
  "${REPO_ROOT}/examples/pod-admission/10-pod-security.yaml:pod-admission/10-pod-security.yaml"
  "${REPO_ROOT}/examples/pod-admission/10-pod-security-grpc.yaml:pod-admission/10-pod-security-grpc.yaml"
  "${REPO_ROOT}/build/release/pod-security-plugin-grpc.service:systemd/pod-security-plugin-grpc.service"
  "${REPO_ROOT}/build/release/10-podadmission.conf:10-podadmission.conf"
  "${REPO_ROOT}/build/release/install.sh:install.sh"
)

for entry in "${SHIP[@]}"; do
  [[ -f "${entry%%:*}" ]] || die "${entry%%:*} does not exist; run make release UPSTREAM=${UPSTREAM_VERSION}"
done

epoch=$("${REPO_ROOT}/build/version.sh" epoch)
name=kubelet-${KUBE_GIT_VERSION}-linux-amd64
release=${OUTPUT_DIR}/release
stage=${release}/${name}
rm -rf "${stage}"
for entry in "${SHIP[@]}"; do
  mkdir -p "$(dirname "${stage}/${entry#*:}")"
  cp "${entry%%:*}" "${stage}/${entry#*:}"
done
url_dir=${stage}/bin-url/${KUBE_GIT_VERSION}/bin/linux/amd64
mkdir -p "${url_dir}"
ln "${stage}/kubelet" "${url_dir}/kubelet"
cut -d' ' -f1 "${stage}/kubelet.sha256" >"${url_dir}/kubelet.sha256"
(cd "${stage}" && find . -type f ! -name SHA256SUMS -printf '%P\n' | LC_ALL=C sort | xargs -d '\n' sha256sum >SHA256SUMS)

tarball=${release}/${name}.tar.gz
tar --sort=name --owner=0 --group=0 --numeric-owner --mode='u=rwX,go=rX' \
  --mtime="@${epoch}" -C "${release}" -cf - "${name}" | gzip -n -9 >"${tarball}"
rm -rf "${stage}"
(cd "${release}" && sha256sum "${name}.tar.gz" >"${name}.tar.gz.sha256")
cat "${tarball}.sha256"
