#!/usr/bin/env bash
# am_one TREE PATCH: applies one patch of the series as one commit. On failure
# it says which patch failed and why, and leaves the tree as it was before.
# Sourced by source.sh and verify-patches.sh.

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
