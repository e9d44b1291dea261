#!/usr/bin/env bash
# Applying and exporting a series with git. Sourced by source.sh,
# verify-patches.sh, patches.sh and rebase.sh, after lib.sh.

# am_one TREE PATCH: applies one patch of the series as one commit. On failure
# it says which patch failed and why, and leaves the tree as it was before.
am_one() {
  local tree=$1 patch=$2 out
  if ! out=$(git -C "${tree}" am --quiet --committer-date-is-author-date --keep-cr "${patch}" 2>&1); then
    git -C "${tree}" am --abort >/dev/null 2>&1 || true
    local why
    why=$(grep -E '^(error|fatal|Patch failed|patch does not apply)|does not (apply|exist)' <<<"${out}" | head -n 3 | tr '\n' ' ')
    echo "error: ${patch#"${REPO_ROOT}"/} does not apply on $(git -C "${tree}" describe --tags --always HEAD): ${why:-${out}}" >&2
    return 1
  fi
}

# export_patches TREE BASE DIR: writes the commits BASE..HEAD of TREE to DIR
# as NNNN-<subject>.patch, replacing the patches there. Headers that change
# on every export (the commit id in the From line, the git version
# signature) are left out, so a re-export of unchanged commits leaves the
# files byte for byte unchanged.
export_patches() {
  local tree=$1 base=$2 dir=$3 tmp
  tmp=$(mktemp -d)
  git -C "${tree}" format-patch --quiet --zero-commit --no-signature --no-numbered \
    --full-index --output-directory "${tmp}" "${base}..HEAD"
  mkdir -p "${dir}"
  find "${dir}" -maxdepth 1 -name '*.patch' -delete
  cp "${tmp}"/*.patch "${dir}/" 2>/dev/null || true
  rm -rf "${tmp}"
}

# refuse_to_lose_work TREE RECORD SERIES stops when resetting TREE would
# discard anything a developer made in it: uncommitted edits, an unfinished
# git am or make rebase, or commits that were not exported to the series
# SERIES (RECORD says which commit the series was applied as) with make
# patches.
refuse_to_lose_work() {
  local tree=$1 record=$2 series=$3
  local git=(git -C "${tree}")
  if [[ -d "${tree}/.git/podadmission-rebase" ]]; then
    die "${tree} has a make rebase in progress ($(cat "${tree}/.git/podadmission-rebase/command")); finish it (run it again) or give it up (add ABORT=1)"
  fi
  if [[ -d "${tree}/.git/rebase-apply" || -d "${tree}/.git/rebase-merge" ]]; then
    die "${tree} has a git am or rebase in progress; finish or abort it first"
  fi
  local dirty
  dirty=$("${git[@]}" status --porcelain --untracked-files=normal)
  if [[ -n "${dirty}" ]]; then
    die "${tree} has uncommitted changes ($(wc -l <<<"${dirty}") paths, first: $(head -n1 <<<"${dirty}" | cut -c4-)); commit them and run make patches, or discard them"
  fi
  if [[ -f "${record}" ]]; then
    local applied_head
    applied_head=$(cut -d' ' -f1 "${record}")
    if [[ "$("${git[@]}" rev-parse HEAD)" != "${applied_head}" ]]; then
      die "${tree} has commits not exported to ${series#"${REPO_ROOT}"/} (HEAD $("${git[@]}" rev-parse --short HEAD), series applied as ${applied_head:0:12}); run make patches to keep them, or git reset --hard ${applied_head:0:12} to drop them"
    fi
  fi
}
