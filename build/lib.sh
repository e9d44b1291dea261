#!/usr/bin/env bash
# Shared settings for the build scripts. Sourced, never run.
#
# Every script works on one maintained minor: patches/1-NN/ holds its series
# (NNNN-*.patch), its revision (SERIES_VERSION) and the facts about its
# upstream release (UPSTREAM, see read_facts). UPSTREAM=v1.36.3 or
# UPSTREAM=1-36 in the environment selects it; the default is the newest
# minor that builds here. Each minor has its own output tree,
# _output/1-NN/ (src/kubernetes, stamps, bin).

set -euo pipefail

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUTPUT_DIR=${OUTPUT_DIR:-${REPO_ROOT}/_output}
PATCHES_DIR=${REPO_ROOT}/patches
# shellcheck source=build/modinfo.sh
source "${REPO_ROOT}/build/modinfo.sh"

die() {
  echo "error: $*" >&2
  exit 1
}

log() {
  echo ">>> $*" >&2
}

# The keys a facts file may set; anything else is an error.
FACT_KEYS=(version toolchain unserved_staging proxy_refuses)

# read_facts FILE: sets FACT_<key> for every key of FILE, a series' facts
# file: "key=value" lines, "#" comments, values never evaluated:
#   version           the upstream release, k8s.io/kubernetes@version
#   toolchain         GOTOOLCHAIN of every go command in the tree
#   unserved_staging  staging modules the Go module proxy does not serve at
#                     this version, left out of the pristine tree
#   proxy_refuses     module@version the kubelet build needs that the proxy
#                     does not serve; empty when the minor builds here
read_facts() {
  local file=$1 rel=${1#"${REPO_ROOT}"/} n=0 line key value
  [[ -f "${file}" ]] || die "${rel} does not exist"
  local k
  for k in "${FACT_KEYS[@]}"; do
    unset "FACT_${k}"
  done
  while IFS= read -r line || [[ -n "${line}" ]]; do
    n=$((n + 1))
    [[ -z "${line}" || "${line}" == \#* ]] && continue
    [[ "${line}" == *=* ]] || die "${rel}:${n}: not key=value: ${line}"
    key=${line%%=*} value=${line#*=}
    case " ${FACT_KEYS[*]} " in
    *" ${key} "*) ;;
    *) die "${rel}:${n}: unknown key ${key} (known: ${FACT_KEYS[*]})" ;;
    esac
    local var=FACT_${key}
    [[ -z "${!var+set}" ]] || die "${rel}:${n}: ${key} is set twice"
    case "${key}" in
    version) [[ "${value}" =~ ^v1\.[0-9]+\.[0-9]+(-(alpha|beta|rc)\.[0-9]+)?$ ]] || die "${rel}:${n}: version ${value} is not a Kubernetes release like v1.37.2" ;;
    toolchain) [[ "${value}" =~ ^go1\.[0-9]+(\.[0-9]+)?$ ]] || die "${rel}:${n}: toolchain ${value} is not a Go release like go1.26.10" ;;
    unserved_staging) [[ "${value}" =~ ^[a-z0-9\ -]*$ ]] || die "${rel}:${n}: unserved_staging must be staging module names separated by spaces" ;;
    proxy_refuses) [[ "${value}" =~ ^([^\ @]+@v[^\ @]+\ ?)*$ ]] || die "${rel}:${n}: proxy_refuses must be module@version words separated by spaces" ;;
    esac
    printf -v "FACT_${key}" '%s' "${value}"
  done <"${file}"
  for k in version toolchain; do
    local var=FACT_${k}
    [[ -n "${!var:-}" ]] || die "${rel}: ${k} is not set"
  done
  local dir_minor
  dir_minor=$(basename "$(dirname "${file}")")
  [[ "$(minor_of "${FACT_version}")" == "${dir_minor}" ]] || die "${rel}: version ${FACT_version} does not belong in patches/${dir_minor}"
}

# minor_of VERSION: v1.38.0-beta.0 -> 1-38.
minor_of() {
  sed -E 's/^v([0-9]+)\.([0-9]+)\..*/\1-\2/' <<<"$1"
}

# release_parts VERSION: "MAJOR MINOR PATCH PRE N" of a Kubernetes release,
# PRE alpha, beta or rc, or "-" (and N 0) for a final release:
# v1.38.0-beta.0 -> "1 38 0 beta 0", v1.36.5 -> "1 36 5 - 0".
release_parts() {
  [[ "$1" =~ ^v([0-9]+)\.([0-9]+)\.([0-9]+)(-(alpha|beta|rc)\.([0-9]+))?$ ]] ||
    die "$1 is not a Kubernetes release like v1.37.2 or v1.38.0-beta.0"
  echo "${BASH_REMATCH[1]} ${BASH_REMATCH[2]} ${BASH_REMATCH[3]} ${BASH_REMATCH[5]:--} ${BASH_REMATCH[6]:-0}"
}

# release_minor VERSION: v1.37.2 -> 1.37.
release_minor() {
  local major minor
  read -r major minor _ <<<"$(release_parts "$1")"
  echo "${major}.${minor}"
}

# staging_version VERSION: the version of the staging modules (k8s.io/api,
# k8s.io/client-go, ...) of a Kubernetes release: v1.37.2 -> v0.37.2.
staging_version() {
  sed -E 's/^v[0-9]+\./v0./' <<<"$1"
}

# all_minors: every series directory, oldest minor first.
all_minors() {
  local f
  for f in "${PATCHES_DIR}"/*/UPSTREAM; do
    [[ -f "${f}" ]] && basename "$(dirname "${f}")"
  done | sort -t- -k1,1n -k2,2n
}

# buildable_minors: the minors whose facts name nothing the proxy refuses.
buildable_minors() {
  local m
  for m in $(all_minors); do
    read_facts "${PATCHES_DIR}/${m}/UPSTREAM"
    [[ -z "${FACT_proxy_refuses:-}" ]] && echo "${m}"
  done
  return 0
}

default_minor() {
  local m
  m=$(buildable_minors | tail -n1)
  [[ -n "${m}" ]] || die "no series under patches/ builds here (every patches/*/UPSTREAM names modules the proxy refuses)"
  echo "${m}"
}

# resolve_minor UPSTREAM: the series directory name for v1.NN.P or 1-NN.
resolve_minor() {
  local want=$1 m
  if [[ "${want}" =~ ^[0-9]+-[0-9]+$ ]]; then
    m=${want}
  elif [[ "${want}" =~ ^v[0-9]+\.[0-9]+\. ]]; then
    m=$(minor_of "${want}")
  else
    die "UPSTREAM=${want}: expected an upstream version like v1.36.3 or a series like 1-36"
  fi
  [[ -f "${PATCHES_DIR}/${m}/UPSTREAM" ]] || die "UPSTREAM=${want}: no series patches/${m} (maintained: $(all_minors | tr '\n' ' '))"
  read_facts "${PATCHES_DIR}/${m}/UPSTREAM"
  if [[ "${want}" == v* && "${want}" != "${FACT_version}" ]]; then
    die "UPSTREAM=${want}: patches/${m} is the series for ${FACT_version}; move it to ${want} with make rebase FROM=${m} TO=${want}"
  fi
  echo "${m}"
}

if [[ -n "${UPSTREAM:-}" ]]; then
  MINOR=$(resolve_minor "${UPSTREAM}")
else
  MINOR=$(default_minor)
fi
SERIES_DIR=${PATCHES_DIR}/${MINOR}
FACTS_FILE=${SERIES_DIR}/UPSTREAM
read_facts "${FACTS_FILE}"
UPSTREAM_VERSION=${FACT_version}
STAGING_VERSION=$(staging_version "${UPSTREAM_VERSION}")
GO_TOOLCHAIN=${FACT_toolchain}
read -r -a UNSERVED_STAGING <<<"${FACT_unserved_staging:-}"
read -r -a PROXY_REFUSES <<<"${FACT_proxy_refuses:-}"
SERIES_VERSION=$(tr -d '[:space:]' <"${SERIES_DIR}/SERIES_VERSION")
[[ "${SERIES_VERSION}" =~ ^[1-9][0-9]*$ ]] || die "${SERIES_DIR#"${REPO_ROOT}"/}/SERIES_VERSION must be a number, not '${SERIES_VERSION}'"
# As in upstream's hack/lib/version.sh, KUBE_GIT_VERSION in the environment
# overrides it: the vanilla reference builds stamp the upstream version.
KUBE_GIT_VERSION=${KUBE_GIT_VERSION:-"${UPSTREAM_VERSION}+podadmission.${SERIES_VERSION}"}

# This minor's output tree; the default minor's kubelet and control plane
# are also linked into _output/bin by the Makefile.
MINOR_OUTPUT_DIR=${OUTPUT_DIR}/${MINOR}
SRC_DIR=${SRC_DIR:-${MINOR_OUTPUT_DIR}/src/kubernetes}
MINOR_BIN_DIR=${MINOR_OUTPUT_DIR}/bin

# series_patches: the patch files of the series, in order.
series_patches() {
  find "${SERIES_DIR}" -maxdepth 1 -name '*.patch' | LC_ALL=C sort
}

# series_hash: one hash of the series' names and contents.
series_hash() {
  local p
  for p in $(series_patches); do
    echo "$(basename "${p}") $(sha256sum <"${p}")"
  done | sha256sum | cut -d' ' -f1
}

# The feature gate the series adds, and the generated list upstream keeps of
# every gate's versioned spec.
FEATURE_GATE=PodAdmissionPlugin
VERSIONED_FEATURE_LIST=test/compatibility_lifecycle/reference/versioned_feature_list.yaml

# gate_spec_versions FILE: the versions of FEATURE_GATE's versioned spec in
# FILE (pkg/features/kube_features.go), space separated.
gate_spec_versions() {
  awk -v gate="${FEATURE_GATE}" '
    $0 == "\t" gate ": {" { in_gate = 1; next }
    in_gate && /^\t},?$/ { in_gate = 0 }
    in_gate && match($0, /version\.MustParse\("[0-9.]+"\)/) { v = substr($0, RSTART + 19, RLENGTH - 21); print v }
  ' "$1" | paste -sd' '
}

# Where this module's packages are staged inside the upstream tree; the series
# points a replace directive at it. Never committed to the tree.
STAGED_MODULE_DIR=third_party/podadmission

# Deterministic identity for the commits made in the reconstructed tree, so
# the same series always yields the same commit ids.
export GIT_AUTHOR_NAME="podadmission build" GIT_AUTHOR_EMAIL="build@podadmission.invalid"
export GIT_COMMITTER_NAME="podadmission build" GIT_COMMITTER_EMAIL="build@podadmission.invalid"
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null

# tree_go DIR ARGS...: go in an upstream tree: no go.work, modules through
# the proxy (its vendor/ holds only OWNERS in the module zip), and the Go
# release the minor's facts name.
tree_go() {
  local dir=$1
  shift
  (cd "${dir}" && GOWORK=off GOFLAGS="-buildvcs=false -mod=mod" GOTOOLCHAIN=${GO_TOOLCHAIN} go "$@")
}

upstream_go() {
  tree_go "${SRC_DIR}" "$@"
}

# module_dir MODULE VERSION: downloads MODULE@VERSION through the proxy and
# prints its directory in the module cache.
module_dir() {
  GOTOOLCHAIN=${GO_TOOLCHAIN} module_download "$1@$2" Dir || exit 1
}

# staging_modules TREE: the names of the staging modules the tree's go.mod
# replaces with ./staging/src/k8s.io/<name>.
staging_modules() {
  gomod_json "$1/go.mod" | modinfo staging
}

# require_buildable: stops with the facts' reason when the kubelet of this
# minor cannot be built here, unless the proxy has started serving what it
# refused.
require_buildable() {
  [[ ${#PROXY_REFUSES[@]} -eq 0 ]] && return 0
  local refused=() mv
  for mv in "${PROXY_REFUSES[@]}"; do
    (cd /tmp && GOFLAGS=-mod=mod GOTOOLCHAIN=${GO_TOOLCHAIN} go mod download "${mv}" >/dev/null 2>&1) || refused+=("${mv}")
  done
  if [[ ${#refused[@]} -gt 0 ]]; then
    die "${UPSTREAM_VERSION} cannot be built here: the Go module proxy ($(go env GOPROXY)) does not serve ${refused[*]} (${FACTS_FILE#"${REPO_ROOT}"/})"
  fi
  log "the proxy serves ${PROXY_REFUSES[*]} now: building ${UPSTREAM_VERSION}; clear proxy_refuses in ${FACTS_FILE#"${REPO_ROOT}"/} (make rebase does)"
}
