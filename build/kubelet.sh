#!/usr/bin/env bash
# Builds a stamped, reproducible binary from the reconstructed tree.
#
#   build/kubelet.sh [PACKAGE [OUTPUT]]
#
# PACKAGE defaults to ./cmd/kubelet and OUTPUT to _output/bin/<name>; a
# <OUTPUT>.sha256 is written next to the binary. The version stamps follow
# hack/lib/version.sh: gitVersion says upstream version and series revision,
# gitCommit and gitTreeState describe this repository (which pins the
# upstream version, the series and pkg/), buildDate is SOURCE_DATE_EPOCH,
# which defaults to this repository's HEAD commit time.

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

pkg=${1:-./cmd/kubelet}
out=${2:-${OUTPUT_DIR}/bin/$(basename "${pkg}")}
[[ "${out}" == /* ]] || out=${PWD}/${out}

[[ -e "${SRC_DIR}/.git" ]] || die "${SRC_DIR} does not exist; run make source first"

"${REPO_ROOT}/build/version.sh" ldflags >"${OUTPUT_DIR}/ldflags.tmp"
ldflags=$(cat "${OUTPUT_DIR}/ldflags.tmp")
rm -f "${OUTPUT_DIR}/ldflags.tmp"

mkdir -p "$(dirname "${out}")"
log "building ${pkg} -> ${out#"${REPO_ROOT}"/} ($("${REPO_ROOT}/build/version.sh" version))"
CGO_ENABLED=0 upstream_go build -trimpath -ldflags "-s -w ${ldflags}" -o "${out}.tmp" "${pkg}"
mv "${out}.tmp" "${out}"
(cd "$(dirname "${out}")" && sha256sum "$(basename "${out}")" >"$(basename "${out}").sha256")
cat "${out}.sha256"
