#!/usr/bin/env bash
# Prints the version of the binaries this repository builds for one minor
# (UPSTREAM, see lib.sh).
#
#   build/version.sh version   v1.37.2+podadmission.1
#   build/version.sh ldflags   the -X flags of hack/lib/version.sh
#   build/version.sh epoch     SOURCE_DATE_EPOCH used for buildDate

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# KUBE_GIT_COMMIT and KUBE_GIT_TREE_STATE override what git says, as in
# upstream's hack/lib/version.sh (for builds from an exported tree).
git_commit=${KUBE_GIT_COMMIT:-$(git -C "${REPO_ROOT}" rev-parse -q --verify HEAD || echo unknown)}
if [[ -n "${KUBE_GIT_TREE_STATE:-}" ]]; then
  git_tree_state=${KUBE_GIT_TREE_STATE}
elif [[ -n "$(git -C "${REPO_ROOT}" status --porcelain --untracked-files=no 2>/dev/null)" ]]; then
  git_tree_state=dirty
else
  git_tree_state=clean
fi
epoch=${SOURCE_DATE_EPOCH:-$(git -C "${REPO_ROOT}" log -1 --format=%ct 2>/dev/null || echo 0)}
read -r major minor _ <<<"$(release_parts "${UPSTREAM_VERSION}")"
# As hack/lib/version.sh: a pre-release (v1.38.0-beta.0) has gitMinor "38+".
[[ "${UPSTREAM_VERSION}" != *-* ]] || minor+="+"

case "${1:-version}" in
version) echo "${KUBE_GIT_VERSION}" ;;
epoch) echo "${epoch}" ;;
ldflags)
  flags=()
  add() {
    flags+=("-X 'k8s.io/client-go/pkg/version.$1=$2'" "-X 'k8s.io/component-base/version.$1=$2'")
  }
  add buildDate "$(date -u --date="@${epoch}" +'%Y-%m-%dT%H:%M:%SZ')"
  add gitCommit "${git_commit}"
  add gitTreeState "${git_tree_state}"
  add gitVersion "${KUBE_GIT_VERSION}"
  add gitMajor "${major}"
  add gitMinor "${minor}"
  echo "${flags[*]}"
  ;;
*) die "usage: $0 version|ldflags|epoch" ;;
esac
