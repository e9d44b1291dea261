#!/usr/bin/env bash
# Builds every node-image artefact of one minor (UPSTREAM, see lib.sh) twice
# from the same release tarball, the second time with another umask in
# another directory, and writes the "packages-1-NN" section of
# BENCHMARKS.md: each artefact's size, its sha256 from both builds, and how
# long one build took (make bench-packages; make release has run). The
# tarball itself is built twice too.

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "${REPO_ROOT}" || exit 1

version=$(build/version.sh version)
work=$(mktemp -d)
trap 'rm -rf "${work}"' EXIT
rows=()
seconds() { awk -v s="$1" -v e="${EPOCHREALTIME}" 'BEGIN { printf "%.1f", e - s }'; }

# artefact NAME FILE BUILD...: BUILD OUTDIR writes FILE into OUTDIR; runs it
# into OUTDIR=first and, with umask 0077, second.
artefact() {
  local what=$1 file=$2 start first second
  shift 2
  start=${EPOCHREALTIME}
  "$@" "${work}/first" >&2
  local took
  took=$(seconds "${start}")
  (umask 0077 && "$@" "${work}/second" >&2)
  first=$(sha256sum "${work}/first/${file}" | cut -d' ' -f1)
  second=$(sha256sum "${work}/second/${file}" | cut -d' ' -f1)
  local same=identical
  [[ "${first}" == "${second}" ]] || same="**DIFFERENT**: ${second}"
  rows+=("| ${what} | \`${file}\` | $(stat -c %s "${work}/first/${file}") | ${first} | ${same} | ${took} s |")
}

release_twice() {
  mkdir -p "$1"
  build/release.sh >/dev/null
  cp "${OUTPUT_DIR}/release/kubelet-${version}-linux-amd64.tar.gz" "$1/"
}
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
artefact "Release tarball (make release)" "kubelet-${version}-linux-amd64.tar.gz" release_twice
artefact "Debian package (make deb)" "podadmission-kubelet_${version#v}_amd64.deb" build/deb/build.sh
artefact "RPM (make rpm)" "podadmission-kubelet-${version#v}-1.x86_64.rpm" build/rpm/build.sh
artefact "systemd-sysext image (make sysext)" "podadmission-kubelet-${version}-x86-64.raw" build/sysext.sh
artefact "OCI image, OCI layout (make image)" "kubelet-${version}.oci.tar" build/image.sh
rows+=("| OCI image, docker save (make image) | \`kubelet-${version}.docker.tar\` | $(stat -c %s "${work}/first/kubelet-${version}.docker.tar") | $(sha256sum "${work}/first/kubelet-${version}.docker.tar" | cut -d' ' -f1) | $(cmp -s "${work}/first/kubelet-${version}.docker.tar" "${work}/second/kubelet-${version}.docker.tar" && echo identical || echo '**DIFFERENT**') | (with the layout) |")

build/bench-section.sh "packages-${MINOR}" <<EOF2
## Node-image artefacts: ${version}

Command: \`make bench-packages UPSTREAM=${UPSTREAM_VERSION}\` ($(nproc) cores, load before the run: ${load_before}; $(date -u +%Y-%m-%d)). Each artefact built twice from the same release (the second time with umask 0077, into another directory); the time is the first build's.

| Artefact | File | Bytes | sha256 | Second build | One build |
|---|---|---:|---|---|---:|
$(printf '%s\n' "${rows[@]}")
EOF2
