#!/usr/bin/env bash
# The dependency rules of a kubelet built from an upstream tree with this
# module staged into it. Sourced by source.sh, kubelet.sh, test-patched.sh
# and rebase.sh (and build/deps_test.sh), after lib.sh.
#
# The upstream tree decides every dependency version: the kubelet of each
# minor is built against exactly the module versions its upstream go.mod
# pins. This module's go.mod is written for the newest minor, so staging it
# as it is would let minimal version selection raise the older trees' pins
# (grpc, otel, x/net, ...). Hence:
#   pin_to_tree  rewrites the staged go.mod's requirements to the tree's
#                version for every module the tree's go.mod pins; it only
#                adds modules the tree does not have;
#   check_no_drift, after a build or test in the tree, fails naming every
#                module whose version differs from the pristine go.mod, and
#                every go.sum line for a new version of a pinned module.

# gomod_pins FILE: "path version" for every requirement of the go.mod FILE,
# and "go VERSION" / "toolchain NAME" for those directives.
gomod_pins() {
  gomod_json "$1" | modinfo requires | LC_ALL=C sort -u
}

# gomod_replaced FILE: the left-hand side (path or path@version) of every
# replace directive of the go.mod FILE.
gomod_replaced() {
  gomod_json "$1" | modinfo replaced
}

# pin_to_tree STAGED_GOMOD TREE_GOMOD: rewrites STAGED_GOMOD so that every
# module TREE_GOMOD requires is required at the tree's version, and drops
# its replace directives (they name this module's own dependency versions
# and do not apply to a dependency anyway).
pin_to_tree() {
  local staged=$1 tree=$2
  local -A tree_version=()
  local path version
  while read -r path version; do
    tree_version[${path}]=${version}
  done < <(gomod_pins "${tree}")
  local edits=()
  while read -r path version; do
    [[ "${path}" == go || "${path}" == toolchain ]] && continue
    if [[ -n "${tree_version[${path}]:-}" && "${tree_version[${path}]}" != "${version}" ]]; then
      edits+=("-require=${path}@${tree_version[${path}]}")
    fi
  done < <(gomod_pins "${staged}")
  while read -r path; do
    edits+=("-dropreplace=${path}")
  done < <(gomod_replaced "${staged}")
  if [[ ${#edits[@]} -gt 0 ]]; then
    GOTOOLCHAIN=local go mod edit "${edits[@]}" "${staged}"
  fi
}

# check_no_drift TREE REF: compares TREE's go.mod and go.sum with REF's (the
# pristine upstream commit). Prints every drift and returns non-zero when
# there is any: a pinned module at another version or gone, another go or
# toolchain directive, a pristine go.sum line gone, or go.sum source hashes
# for another version of a pinned module (that version was built).
check_no_drift() {
  local tree=$1 ref=$2 tmp rc=0
  tmp=$(mktemp -d)
  git -C "${tree}" show "${ref}:go.mod" >"${tmp}/pristine.mod"
  git -C "${tree}" show "${ref}:go.sum" >"${tmp}/pristine.sum"
  gomod_pins "${tmp}/pristine.mod" >"${tmp}/pristine.pins"
  gomod_pins "${tree}/go.mod" >"${tmp}/now.pins"

  local path version now
  while read -r path version; do
    now=$(awk -v p="${path}" '$1 == p { print $2 }' "${tmp}/now.pins")
    [[ "${now}" == "${version}" ]] && continue
    rc=1
    if [[ -z "${now}" ]]; then
      echo "dependency drift: ${path} ${version} is pinned by pristine ${ref} and no longer required in ${tree}/go.mod"
    else
      local why=""
      [[ "${path}" == go || "${path}" == toolchain ]] || why=$(raised_by "${tree}" "${path}" "${now}")
      echo "dependency drift: ${path} is ${now} in ${tree}/go.mod, pristine ${ref} pins ${version}${why}"
    fi
  done <"${tmp}/pristine.pins"

  local line
  while IFS= read -r line; do
    rc=1
    echo "dependency drift: go.sum lost the pristine line: ${line}"
  done < <(LC_ALL=C comm -23 <(LC_ALL=C sort -u "${tmp}/pristine.sum") <(LC_ALL=C sort -u "${tree}/go.sum"))
  local mod ver
  while read -r mod ver _; do
    version=$(awk -v p="${mod}" '$1 == p { print $2 }' "${tmp}/pristine.pins")
    [[ -n "${version}" && "${version}" != "${ver}" ]] || continue
    rc=1
    echo "dependency drift: go.sum has the source of ${mod} ${ver}, pristine ${ref} pins ${version}"
  done < <(LC_ALL=C comm -13 <(LC_ALL=C sort -u "${tmp}/pristine.sum") <(LC_ALL=C sort -u "${tree}/go.sum") | grep -v '/go.mod h1:' || true)
  rm -rf "${tmp}"
  return "${rc}"
}

# raised_by TREE PATH VERSION: " (required at VERSION by A, B)", the
# dependencies (not the tree itself) that require that version, from the
# module graph, when it can tell.
raised_by() {
  local by
  by=$(tree_go "$1" mod graph 2>/dev/null | awk -v t="$2@$3" '$2 == t && $1 ~ /@/ { print $1 }' | sort -u | head -n 3 | paste -sd, | sed 's/,/, /g') || true
  [[ -n "${by}" ]] && echo " (required at $3 by ${by})"
  return 0
}

# verify_no_drift TREE REF WHAT: check_no_drift for a build or test (WHAT)
# that just ran in TREE; on drift it restores go.mod and go.sum (so the tree
# stays clean) and fails.
verify_no_drift() {
  local tree=$1 ref=$2 what=$3 out
  if out=$(check_no_drift "${tree}" "${ref}"); then
    return 0
  fi
  echo "${out}" >&2
  git -C "${tree}" checkout -q HEAD -- go.mod go.sum
  die "${what} changed dependency versions upstream ${ref} pins (above); the kubelet must build against exactly upstream's versions"
}
