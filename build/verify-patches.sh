#!/usr/bin/env bash
# Checks every maintained series (or the one UPSTREAM names) on its pristine
# upstream tree, in a scratch worktree of the minor's reconstructed tree:
#   - every patch applies with plain git am, in order;
#   - every patch header has the fields README.md asks for;
#   - the feature gate's versioned spec and its entry in the generated
#     versioned feature list name the series' minor;
#   - the series changes no dependency version upstream pins (build/deps.sh);
# and that README.md's table of maintained minors says what the facts say.
# Leaves _output/1-NN/src/kubernetes alone.

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "${REPO_ROOT}/build/am.sh"
source "${REPO_ROOT}/build/deps.sh"

if [[ "${1:-}" != --one ]]; then
  minors=${UPSTREAM:+${MINOR}}
  for m in ${minors:-$(all_minors)}; do
    UPSTREAM=${m} "${BASH_SOURCE[0]}" --one
  done
  "${REPO_ROOT}/build/minors-table.sh" --check
  exit 0
fi

"${REPO_ROOT}/build/source.sh" pristine >/dev/null

work=${MINOR_OUTPUT_DIR}/verify-patches
cleanup() {
  git -C "${SRC_DIR}" worktree remove --force "${work}" >/dev/null 2>&1 || rm -rf "${work}"
  git -C "${SRC_DIR}" worktree prune
}
trap cleanup EXIT
cleanup
git -C "${SRC_DIR}" worktree add --quiet --detach "${work}" "refs/tags/${UPSTREAM_VERSION}"

failed=0
fail() {
  echo "error: $*" >&2
  failed=1
}

n=0
for patch in $(series_patches); do
  name=${patch#"${REPO_ROOT}"/}
  # The commit message body: from the first blank line to the diffstat.
  header=$(sed -n '/^$/,/^---$/p;/^---$/q' "${patch}")
  for field in Description: Upstream: "Drop when:"; do
    grep -q "^${field}" <<<"${header}" || fail "${name}: header has no '${field}' line (see README: Patch headers)"
  done
  am_one "${work}" "${patch}" || exit 1
  n=$((n + 1))
done
[[ "${n}" -gt 0 ]] || fail "${SERIES_DIR#"${REPO_ROOT}"/} has no patches"

want=${MINOR/-/.}
spec=$(gate_spec_versions "${work}/pkg/features/kube_features.go")
[[ "${spec}" == "${want}" ]] ||
  fail "${SERIES_DIR#"${REPO_ROOT}"/}: the ${FEATURE_GATE} versioned spec in pkg/features/kube_features.go names ${spec:-no version}, not ${want} (make rebase sets it)"
listed=$(awk -v gate="${FEATURE_GATE}" '
  $0 == "- name: " gate { in_gate = 1; next }
  /^- name: / { in_gate = 0 }
  in_gate && $1 == "version:" { gsub(/"/, "", $2); print $2 }
' "${work}/${VERSIONED_FEATURE_LIST}" | paste -sd' ')
[[ "${listed}" == "${want}" ]] ||
  fail "${SERIES_DIR#"${REPO_ROOT}"/}: ${VERSIONED_FEATURE_LIST} lists ${FEATURE_GATE} at ${listed:-no version}, not ${want} (make rebase regenerates it)"

if ! drift=$(check_no_drift "${work}" "refs/tags/${UPSTREAM_VERSION}"); then
  fail "${SERIES_DIR#"${REPO_ROOT}"/} changes dependency versions upstream ${UPSTREAM_VERSION} pins:"$'\n'"${drift}"
fi

[[ "${failed}" == 0 ]] || exit 1
log "${SERIES_DIR#"${REPO_ROOT}"/}: ${n} patches apply cleanly on pristine ${UPSTREAM_VERSION}; gate spec ${want}; no dependency drift"
