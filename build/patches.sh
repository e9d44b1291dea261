#!/usr/bin/env bash
# Exports the commits on top of the upstream tag in the reconstructed tree
# back to the series directory, one NNNN-<subject>.patch file per commit.
#
# This is how the series is edited: change the tree, commit (or fixup and
# rebase), then run make patches (UPSTREAM=... for another minor). A
# re-export of unchanged commits leaves the series byte for byte unchanged.

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "${REPO_ROOT}/build/am.sh"

[[ -d "${SRC_DIR}/.git" ]] || die "${SRC_DIR} does not exist; run make source first"
git=(git -C "${SRC_DIR}")
if [[ -n "$("${git[@]}" status --porcelain --untracked-files=normal)" ]]; then
  die "${SRC_DIR} has uncommitted changes; commit them first (git -C ${SRC_DIR#"${REPO_ROOT}"/} status)"
fi

export_patches "${SRC_DIR}" "refs/tags/${UPSTREAM_VERSION}" "${SERIES_DIR}"

# The tree now is the series: record it, so make source knows it applied it.
echo "$("${git[@]}" rev-parse HEAD) $(series_hash)" >"${SRC_DIR}/.git/podadmission-series"
# The tree changed behind make's back: its binaries are out of date.
rm -f "${MINOR_OUTPUT_DIR}/stamps/source"

count=$(series_patches | wc -l)
log "exported ${count} patches to ${SERIES_DIR#"${REPO_ROOT}"/}"
git -C "${REPO_ROOT}" status --short -- "${SERIES_DIR}"
