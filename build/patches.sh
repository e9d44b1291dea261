#!/usr/bin/env bash
# Exports the commits on top of the upstream tag in the reconstructed tree
# back to the series directory, one NNNN-<subject>.patch file per commit.
#
# This is how the series is edited: change the tree, commit (or fixup and
# rebase), then run make patches. Headers that change on every export (the
# commit id in the From line, the git version signature) are left out, so a
# re-export of unchanged commits leaves the series byte for byte unchanged.

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "${REPO_ROOT}/build/am.sh"

[[ -d "${SRC_DIR}/.git" ]] || die "${SRC_DIR} does not exist; run make source first"
git=(git -C "${SRC_DIR}")
if [[ -n "$("${git[@]}" status --porcelain --untracked-files=normal)" ]]; then
  die "${SRC_DIR} has uncommitted changes; commit them first (git -C ${SRC_DIR#"${REPO_ROOT}"/} status)"
fi

tmp=$(mktemp -d)
trap 'rm -rf "${tmp}"' EXIT
"${git[@]}" format-patch --quiet --zero-commit --no-signature --no-numbered \
  --full-index --output-directory "${tmp}" "refs/tags/${UPSTREAM_VERSION}..HEAD"

find "${SERIES_DIR}" -maxdepth 1 -name '*.patch' -delete
cp "${tmp}"/*.patch "${SERIES_DIR}/" 2>/dev/null || true

# The tree now is the series: record it, so make source knows it applied it.
hash=$(for p in $(find "${SERIES_DIR}" -maxdepth 1 -name '*.patch' | LC_ALL=C sort); do
  echo "$(basename "${p}") $(sha256sum <"${p}")"
done | sha256sum | cut -d' ' -f1)
echo "$("${git[@]}" rev-parse HEAD) ${hash}" >"${SRC_DIR}/.git/podadmission-series"

count=$(find "${SERIES_DIR}" -maxdepth 1 -name '*.patch' | wc -l)
log "exported ${count} patches to ${SERIES_DIR#"${REPO_ROOT}"/}"
git -C "${REPO_ROOT}" status --short -- "${SERIES_DIR}"
