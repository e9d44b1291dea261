#!/usr/bin/env bash
# Reconstructs the upstream Kubernetes tree from the Go module proxy, applies
# the patch series on top of it and stages this module's packages into it.
#
#   build/source.sh            pristine tree (once), series, staged packages
#   build/source.sh pristine   only the pristine tree
#
# The tree is a git repository whose first commit, tagged with the upstream
# version, is the pristine tree; every patch is one commit on top of it. The
# script never discards uncommitted or unexported work in the tree.
#
# Prints "changed" on stdout when the tree it leaves differs from the one it
# found, so callers can keep their stamps.

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

APPLIED_RECORD=${SRC_DIR}/.git/podadmission-series

# module_dir MODULE VERSION: downloads MODULE@VERSION through the proxy and
# prints its directory in the module cache.
module_dir() {
  local json
  json=$(cd /tmp && GOFLAGS=-mod=mod go mod download -json "$1@$2" 2>&1) || true
  local err
  err=$(sed -n 's/^[[:space:]]*"Error": "\(.*\)",\{0,1\}$/\1/p' <<<"${json}" | head -n1)
  local dir
  dir=$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p' <<<"${json}")
  if [[ -n "${err}" || -z "${dir}" ]]; then
    die "cannot download $1@$2 through GOPROXY=$(go env GOPROXY): ${err:-$(tail -n1 <<<"${json}")}"
  fi
  echo "${dir}"
}

# module_time MODULE VERSION: the publication time the proxy records for it.
module_time() {
  local info
  info=$(cd /tmp && go mod download -json "$1@$2" | sed -n 's/^[[:space:]]*"Info": "\(.*\)",\{0,1\}$/\1/p')
  sed -n 's/.*"Time":"\([^"]*\)".*/\1/p' "${info}"
}

is_unserved() {
  local name
  for name in "${UNSERVED_STAGING[@]}"; do
    [[ "$1" == "${name}" ]] && return 0
  done
  return 1
}

# staging_modules TREE: the names of the staging modules the tree's go.mod
# replaces with ./staging/src/k8s.io/<name>.
staging_modules() {
  sed -n 's#^[[:space:]]*k8s\.io/\([a-z0-9-]*\) => \./staging/src/k8s\.io/.*#\1#p' "$1/go.mod"
}

# require_staging_at_v0 TREE GOMOD...: rewrites requirements of staging
# modules at the release version to upstream's own form, v0.0.0 (the tree's
# main go.mod replaces them with ./staging). The proxy serves staging
# modules with the go.mod the publishing bot wrote, and this module's go.mod
# requires them at the release version too; left alone, either makes every
# build in the tree rewrite the main go.mod.
require_staging_at_v0() {
  local names
  names=$(staging_modules "$1" | paste -sd'|')
  shift
  sed -i -E "s#^(require)?([[:space:]]*k8s\.io/(${names})) ${STAGING_VERSION//./\\.}( // indirect)?\$#\1\2 v0.0.0\4#" "$@"
}

make_pristine() {
  if [[ -d "${SRC_DIR}/.git" ]] && git -C "${SRC_DIR}" rev-parse -q --verify "refs/tags/${UPSTREAM_VERSION}" >/dev/null; then
    return 0
  fi
  if [[ -e "${SRC_DIR}" ]]; then
    die "${SRC_DIR} exists but is not a reconstructed tree (no tag ${UPSTREAM_VERSION}); move it away and run make source again"
  fi

  log "fetching k8s.io/kubernetes@${UPSTREAM_VERSION} and its staging modules @${STAGING_VERSION}"
  local kube_dir
  kube_dir=$(module_dir k8s.io/kubernetes "${UPSTREAM_VERSION}")
  local tmp=${SRC_DIR}.tmp
  rm -rf "${tmp}"
  mkdir -p "$(dirname "${tmp}")"
  cp -R "${kube_dir}" "${tmp}"
  chmod -R u+w "${tmp}"

  # The module zip leaves staging/src out; its go.mod lists every module there.
  local staging
  staging=$(staging_modules "${tmp}")
  [[ -n "${staging}" ]] || die "${kube_dir}/go.mod names no staging modules"
  local name
  for name in ${staging}; do
    is_unserved "${name}" && continue
    local dir
    dir=$(module_dir "k8s.io/${name}" "${STAGING_VERSION}")
    mkdir -p "${tmp}/staging/src/k8s.io"
    cp -R "${dir}" "${tmp}/staging/src/k8s.io/${name}"
  done
  chmod -R u+w "${tmp}"
  require_staging_at_v0 "${tmp}" "${tmp}"/staging/src/k8s.io/*/go.mod

  local released
  released=$(module_time k8s.io/kubernetes "${UPSTREAM_VERSION}")
  log "committing the pristine tree (released ${released})"
  git -C "${tmp}" init -q -b upstream
  # Store every file byte for byte: upstream's .gitattributes would turn the
  # CRLF test data of client-go into LF on the next checkout.
  echo '* -text' >"${tmp}/.git/info/attributes"
  git -C "${tmp}" add -A
  GIT_AUTHOR_DATE=${released} GIT_COMMITTER_DATE=${released} \
    git -C "${tmp}" commit -q -m "Kubernetes ${UPSTREAM_VERSION} from the Go module proxy" \
      -m "k8s.io/kubernetes@${UPSTREAM_VERSION} with every served staging module @${STAGING_VERSION} in staging/src/k8s.io."
  git -C "${tmp}" tag "${UPSTREAM_VERSION}"
  echo "/${STAGED_MODULE_DIR}/" >>"${tmp}/.git/info/exclude"
  mv "${tmp}" "${SRC_DIR}"
  CHANGED=1
}

series_patches() {
  find "${SERIES_DIR}" -maxdepth 1 -name '*.patch' | LC_ALL=C sort
}

series_hash() {
  local p
  for p in $(series_patches); do
    echo "$(basename "${p}") $(sha256sum <"${p}")"
  done | sha256sum | cut -d' ' -f1
}

# refuse_to_lose_work stops when resetting the tree would discard anything a
# developer made in it: uncommitted edits, an unfinished git am, or commits
# that were not exported to the series with make patches.
refuse_to_lose_work() {
  local git=(git -C "${SRC_DIR}")
  if [[ -d "${SRC_DIR}/.git/rebase-apply" || -d "${SRC_DIR}/.git/rebase-merge" ]]; then
    die "${SRC_DIR} has a git am or rebase in progress; finish or abort it first"
  fi
  local dirty
  dirty=$("${git[@]}" status --porcelain --untracked-files=normal)
  if [[ -n "${dirty}" ]]; then
    die "${SRC_DIR} has uncommitted changes ($(wc -l <<<"${dirty}") paths, first: $(head -n1 <<<"${dirty}" | cut -c4-)); commit them and run make patches, or discard them"
  fi
  if [[ -f "${APPLIED_RECORD}" ]]; then
    local applied_head
    applied_head=$(cut -d' ' -f1 "${APPLIED_RECORD}")
    if [[ "$("${git[@]}" rev-parse HEAD)" != "${applied_head}" ]]; then
      die "${SRC_DIR} has commits not exported to ${SERIES_DIR#"${REPO_ROOT}"/} (HEAD $("${git[@]}" rev-parse --short HEAD), series applied as ${applied_head:0:12}); run make patches to keep them, or git reset --hard ${applied_head:0:12} to drop them"
    fi
  fi
}

apply_series() {
  local want
  want=$(series_hash)
  if [[ -f "${APPLIED_RECORD}" ]] && [[ "$(cut -d' ' -f2 "${APPLIED_RECORD}")" == "${want}" ]] &&
    [[ "$(git -C "${SRC_DIR}" rev-parse HEAD)" == "$(cut -d' ' -f1 "${APPLIED_RECORD}")" ]]; then
    return 0
  fi
  refuse_to_lose_work

  log "applying ${SERIES_DIR#"${REPO_ROOT}"/} on ${UPSTREAM_VERSION}"
  git -C "${SRC_DIR}" checkout -q -B podadmission "refs/tags/${UPSTREAM_VERSION}"
  local patch
  for patch in $(series_patches); do
    am_one "${SRC_DIR}" "${patch}" || exit 1
  done
  echo "$(git -C "${SRC_DIR}" rev-parse HEAD) ${want}" >"${APPLIED_RECORD}"
  CHANGED=1
}

stage_module() {
  local dest=${SRC_DIR}/${STAGED_MODULE_DIR}
  local tmp=${dest}.tmp
  rm -rf "${tmp}"
  mkdir -p "${tmp}"
  cp "${REPO_ROOT}/go.mod" "${REPO_ROOT}/go.sum" "${tmp}/"
  require_staging_at_v0 "${SRC_DIR}" "${tmp}/go.mod"
  # Only what the kubelet compiles: no tests, no test data.
  (cd "${REPO_ROOT}" && find pkg -type f ! -name '*_test.go' ! -path '*/testdata/*' -print0 |
    LC_ALL=C sort -z | xargs -0 -r cp --parents -t "${tmp}")
  if [[ -d "${dest}" ]] && diff -r -q "${dest}" "${tmp}" >/dev/null; then
    rm -rf "${tmp}"
    return 0
  fi
  rm -rf "${dest}"
  mv "${tmp}" "${dest}"
  CHANGED=1
}

source "${REPO_ROOT}/build/am.sh"

CHANGED=0
make_pristine
if [[ "${1:-}" != "pristine" ]]; then
  apply_series
  stage_module
fi
if [[ "${CHANGED}" == 1 ]]; then
  echo changed
fi
