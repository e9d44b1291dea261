#!/usr/bin/env bash
# Shared settings for the build scripts. Sourced, never run.

set -euo pipefail

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUTPUT_DIR=${OUTPUT_DIR:-${REPO_ROOT}/_output}
SRC_DIR=${SRC_DIR:-${OUTPUT_DIR}/src/kubernetes}

UPSTREAM_VERSION=$(tr -d '[:space:]' <"${REPO_ROOT}/build/UPSTREAM_VERSION")
# v1.37.2 -> staging modules v0.37.2, series directory patches/1-37.
UPSTREAM_MINOR=$(sed -E 's/^v([0-9]+)\.([0-9]+)\..*/\1-\2/' <<<"${UPSTREAM_VERSION}")
STAGING_VERSION=$(sed -E 's/^v[0-9]+\./v0./' <<<"${UPSTREAM_VERSION}")
SERIES_DIR=${SERIES_DIR:-${REPO_ROOT}/patches/${UPSTREAM_MINOR}}
SERIES_VERSION=$(tr -d '[:space:]' <"${SERIES_DIR}/SERIES_VERSION")
KUBE_GIT_VERSION="${UPSTREAM_VERSION}+podadmission.${SERIES_VERSION}"

# Staging modules the Go module proxy does not serve; nothing the kubelet or
# the e2e binaries build needs them.
UNSERVED_STAGING=(sample-cli-plugin sample-controller)

# Where this module's packages are staged inside the upstream tree; the series
# points a replace directive at it. Never committed to the tree.
STAGED_MODULE_DIR=third_party/podadmission

# Deterministic identity for the commits made in the reconstructed tree, so
# the same series always yields the same commit ids.
export GIT_AUTHOR_NAME="podadmission build" GIT_AUTHOR_EMAIL="build@podadmission.invalid"
export GIT_COMMITTER_NAME="podadmission build" GIT_COMMITTER_EMAIL="build@podadmission.invalid"
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null

# Builds inside the upstream tree ignore any go.work and resolve modules
# through the proxy (its vendor/ holds only OWNERS in the module zip).
upstream_go() {
  (cd "${SRC_DIR}" && GOWORK=off GOFLAGS="-buildvcs=false -mod=mod" go "$@")
}

die() {
  echo "error: $*" >&2
  exit 1
}

log() {
  echo ">>> $*" >&2
}
