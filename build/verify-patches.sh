#!/usr/bin/env bash
# Applies the series with git am on pristine upstream, in a scratch worktree
# of the reconstructed tree's upstream tag, and checks every patch header
# follows the convention in README.md. Leaves _output/src/kubernetes alone.

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "${REPO_ROOT}/build/am.sh"

"${REPO_ROOT}/build/source.sh" pristine >/dev/null

work=${OUTPUT_DIR}/verify-patches
cleanup() {
  git -C "${SRC_DIR}" worktree remove --force "${work}" >/dev/null 2>&1 || rm -rf "${work}"
  git -C "${SRC_DIR}" worktree prune
}
trap cleanup EXIT
cleanup
git -C "${SRC_DIR}" worktree add --quiet --detach "${work}" "refs/tags/${UPSTREAM_VERSION}"

failed=0
n=0
for patch in $(find "${SERIES_DIR}" -maxdepth 1 -name '*.patch' | LC_ALL=C sort); do
  name=${patch#"${REPO_ROOT}"/}
  # The commit message body: from the first blank line to the diffstat.
  header=$(sed -n '/^$/,/^---$/p;/^---$/q' "${patch}")
  for field in Description: Upstream: "Drop when:"; do
    if ! grep -q "^${field}" <<<"${header}"; then
      echo "error: ${name}: header has no '${field}' line (see README: Patch headers)" >&2
      failed=1
    fi
  done
  am_one "${work}" "${patch}" || exit 1
  n=$((n + 1))
done
[[ "${failed}" == 0 ]] || exit 1
log "${n} patches apply cleanly on pristine ${UPSTREAM_VERSION}"
