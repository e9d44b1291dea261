#!/usr/bin/env bash
# Packages the drop-in kubelet for node images:
#   _output/release/kubelet-<version>-linux-amd64.tar.gz (+ .sha256)
# holding the kubelet, its sha256, LICENSE, a systemd drop-in that enables
# the feature gate, a sample plugin configuration with the plugin it names
# (pod-security-plugin), podadmctl to validate configurations on the node,
# install.sh to install and roll back on images without dpkg, and
# SHA256SUMS of every other file, which install.sh verifies.
# The tarball is reproducible: fixed owner, mode and mtime
# (SOURCE_DATE_EPOCH), sorted.

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

kubelet=${OUTPUT_DIR}/bin/kubelet
for bin in kubelet podadmctl pod-security-plugin; do
  [[ -x "${OUTPUT_DIR}/bin/${bin}" ]] || die "${OUTPUT_DIR}/bin/${bin} does not exist; run make kubelet cmd first"
done
sample=${REPO_ROOT}/examples/pod-admission/10-pod-security.yaml
[[ -f "${sample}" ]] || die "${sample} does not exist"

version=$("${REPO_ROOT}/build/version.sh" version)
epoch=$("${REPO_ROOT}/build/version.sh" epoch)
name=kubelet-${version}-linux-amd64
stage=${OUTPUT_DIR}/release/${name}
rm -rf "${stage}"
mkdir -p "${stage}/pod-admission" "${stage}/pod-admission-bin"
cp "${kubelet}" "${kubelet}.sha256" "${OUTPUT_DIR}/bin/podadmctl" "${stage}/"
cp "${OUTPUT_DIR}/bin/pod-security-plugin" "${stage}/pod-admission-bin/"
cp "${REPO_ROOT}/LICENSE" "${stage}/"
cp "${sample}" "${stage}/pod-admission/"
cp "${REPO_ROOT}/build/release/10-podadmission.conf" "${REPO_ROOT}/build/release/install.sh" "${stage}/"
(cd "${stage}" && find . -type f ! -name SHA256SUMS -printf '%P\n' | LC_ALL=C sort | xargs -d '\n' sha256sum >SHA256SUMS)

tarball=${OUTPUT_DIR}/release/${name}.tar.gz
tar --sort=name --owner=0 --group=0 --numeric-owner --mode='u+rw,go+r,go-w' \
  --mtime="@${epoch}" -C "${OUTPUT_DIR}/release" -cf - "${name}" | gzip -n -9 >"${tarball}"
rm -rf "${stage}"
(cd "${OUTPUT_DIR}/release" && sha256sum "${name}.tar.gz" >"${name}.tar.gz.sha256")
cat "${tarball}.sha256"
