#!/usr/bin/env bash
# Reconstructs the upstream Kubernetes tree of one minor from the Go module
# proxy in _output/1-NN/src/kubernetes, applies the minor's patch series on
# top of it and stages this module's packages into it.
#
#   build/source.sh            pristine tree (once), series, staged packages
#   build/source.sh pristine   only the pristine tree
#   build/source.sh stage      only the staged packages (make rebase)
#   UPSTREAM=v1.36.3 build/source.sh   another minor (see lib.sh)
#
# The tree is a git repository whose first commit, tagged with the upstream
# version, is the pristine tree; every patch is one commit on top of it. The
# script never discards uncommitted or unexported work in the tree.
#
# Prints "changed" on stdout when the tree it leaves differs from the one it
# found, so callers can keep their stamps.

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

APPLIED_RECORD=${SRC_DIR}/.git/podadmission-series

# module_time MODULE VERSION: the publication time the proxy records for it.
module_time() {
  local info
  info=$(GOTOOLCHAIN=${GO_TOOLCHAIN} module_download "$1@$2" Info) || exit 1
  modinfo fields Time <"${info}"
}

is_unserved() {
  local name
  for name in "${UNSERVED_STAGING[@]}"; do
    [[ "$1" == "${name}" ]] && return 0
  done
  return 1
}

# require_staging_at_v0 TREE GOMOD...: rewrites requirements of staging
# modules at the release version to upstream's own form, v0.0.0 (the tree's
# main go.mod replaces them with ./staging). The proxy serves staging
# modules with the go.mod the publishing bot wrote; left alone, that makes
# every build in the tree rewrite the main go.mod.
require_staging_at_v0() {
  local names
  names=$(staging_modules "$1" | paste -sd'|')
  shift
  sed -i -E "s#^(require)?([[:space:]]*k8s\.io/(${names})) ${STAGING_VERSION//./\\.}( // indirect)?\$#\1\2 v0.0.0\4#" "$@"
}

is_tree_of() { # is_tree_of DIR VERSION
  [[ -d "$1/.git" ]] && git -C "$1" rev-parse -q --verify "refs/tags/$2" >/dev/null
}

make_pristine() {
  # Before trees were kept per minor, the one tree was _output/src/kubernetes.
  local old=${OUTPUT_DIR}/src/kubernetes
  if [[ ! -e "${SRC_DIR}" && "${old}" != "${SRC_DIR}" ]] && is_tree_of "${old}" "${UPSTREAM_VERSION}"; then
    log "moving the ${UPSTREAM_VERSION} tree from ${old#"${REPO_ROOT}"/} to ${SRC_DIR#"${REPO_ROOT}"/}"
    mkdir -p "$(dirname "${SRC_DIR}")"
    mv "${old}" "${SRC_DIR}"
    git -C "${SRC_DIR}" worktree prune
    rmdir "${OUTPUT_DIR}/src" 2>/dev/null || true
  fi
  if is_tree_of "${SRC_DIR}" "${UPSTREAM_VERSION}"; then
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
  local name dir left_out=()
  for name in ${staging}; do
    if is_unserved "${name}"; then
      # Listed as unserved: left out, unless the proxy serves it now.
      if ! dir=$( (module_dir "k8s.io/${name}" "${STAGING_VERSION}") 2>/dev/null); then
        left_out+=("${name}")
        continue
      fi
      log "k8s.io/${name}@${STAGING_VERSION} is served now although ${FACTS_FILE#"${REPO_ROOT}"/} lists it as unserved: it is in the tree"
    else
      dir=$(module_dir "k8s.io/${name}" "${STAGING_VERSION}")
    fi
    mkdir -p "${tmp}/staging/src/k8s.io"
    cp -R "${dir}" "${tmp}/staging/src/k8s.io/${name}"
  done
  [[ ${#left_out[@]} -eq 0 ]] || log "left out, not served by the proxy: ${left_out[*]}"
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

apply_series() {
  local want
  want=$(series_hash)
  if [[ -f "${APPLIED_RECORD}" ]] && [[ "$(cut -d' ' -f2 "${APPLIED_RECORD}")" == "${want}" ]] &&
    [[ "$(git -C "${SRC_DIR}" rev-parse HEAD)" == "$(cut -d' ' -f1 "${APPLIED_RECORD}")" ]]; then
    return 0
  fi
  refuse_to_lose_work "${SRC_DIR}" "${APPLIED_RECORD}" "${SERIES_DIR}"

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
  cp "${REPO_ROOT}/go.mod" "${tmp}/"
  # The tree decides the version of every module it pins (build/deps.sh).
  pin_to_tree "${tmp}/go.mod" "${SRC_DIR}/go.mod"
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
source "${REPO_ROOT}/build/deps.sh"

CHANGED=0
make_pristine
case "${1:-}" in
pristine) ;;
stage) stage_module ;; # for make rebase, which applies the series itself
"")
  apply_series
  stage_module
  ;;
*) die "usage: build/source.sh [pristine|stage]" ;;
esac
if [[ "${CHANGED}" == 1 ]]; then
  echo changed
fi
