#!/usr/bin/env bash
# Builds a stamped, reproducible binary from the reconstructed tree of one
# minor (UPSTREAM, see lib.sh).
#
#   build/kubelet.sh [PACKAGE [OUTPUT]]
#
# PACKAGE defaults to ./cmd/kubelet and OUTPUT to _output/1-NN/bin/<name>; a
# <OUTPUT>.sha256 is written next to the binary. The version stamps follow
# hack/lib/version.sh: gitVersion says upstream version and series revision,
# gitCommit and gitTreeState describe this repository (which pins the
# upstream version, the series and pkg/), buildDate is SOURCE_DATE_EPOCH,
# which defaults to this repository's HEAD commit time. The build uses the
# Go release the minor's facts name, and fails if it changed any dependency
# version the pristine upstream tree pins (build/deps.sh).

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "${REPO_ROOT}/build/deps.sh"

pkg=${1:-./cmd/kubelet}
out=${2:-${MINOR_BIN_DIR}/$(basename "${pkg}")}
[[ "${out}" == /* ]] || out=${PWD}/${out}

[[ -e "${SRC_DIR}/.git" ]] || die "${SRC_DIR} does not exist; run make source first"
require_buildable

ldflags=$("${REPO_ROOT}/build/version.sh" ldflags)

mkdir -p "$(dirname "${out}")"
log "building ${pkg} -> ${out#"${REPO_ROOT}"/} (${KUBE_GIT_VERSION}, ${GO_TOOLCHAIN})"
CGO_ENABLED=0 upstream_go build -trimpath -ldflags "-s -w ${ldflags}" -o "${out}.tmp" "${pkg}"
if ! (verify_no_drift "${SRC_DIR}" "refs/tags/${UPSTREAM_VERSION}" "building ${pkg}"); then
  rm -f "${out}.tmp"
  exit 1
fi
mv "${out}.tmp" "${out}"
(cd "$(dirname "${out}")" && sha256sum "$(basename "${out}")" >"$(basename "${out}").sha256")
cat "${out}.sha256"
