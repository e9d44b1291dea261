#!/usr/bin/env bash
# Patch currency: for each maintained minor, the upstream release its series
# targets (patches/1-NN/UPSTREAM) next to the newest release of that minor
# the Go module proxy serves, with its staging modules, and which series are
# behind (make upstream-status):
#
#   build/upstream-status.sh           the report; exits 0 whatever upstream released
#   build/upstream-status.sh newest M  the newest release of series M the proxy serves
#
# `go list -m -versions` does not list every served version (v1.36.4 and
# v1.36.5 are served but not listed), so from the newest listed or targeted
# release it also asks the proxy for the releases that would come next
# (the next patch; for a pre-release the next of its kind, the first rc and
# the final release) until none is served. Nothing is downloaded but the
# .info and .mod files.

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# served MODULE@VERSION...: "MODULE VERSION yes|no" each, from the proxy.
served() {
  [[ $# -gt 0 ]] || return 0
  local path version error
  (cd / && GOFLAGS=-mod=mod GOTOOLCHAIN=local GOWORK=off go list -m -e -json "$@" 2>/dev/null) | modinfo fields -e Path Version Error |
    while IFS=$'\t' read -r path version error; do
      if [[ -z "${error}" ]]; then
        echo "${path} ${version} yes"
      else
        echo "${path} ${version} no"
      fi
    done
}

# sort_key VERSION: "MAJOR MINOR PATCH RANK N", which sorts releases in
# order (alpha < beta < rc < final).
sort_key() {
  local major minor patch pre n rank
  read -r major minor patch pre n <<<"$(release_parts "$1")"
  case "${pre}" in alpha) rank=0 ;; beta) rank=1 ;; rc) rank=2 ;; *) rank=3 ;; esac
  echo "${major} ${minor} ${patch} ${rank} ${n} $1"
}

newest_of() {
  local v
  for v in "$@"; do sort_key "${v}"; done | sort -k1,1n -k2,2n -k3,3n -k4,4n -k5,5n | tail -n1 | cut -d' ' -f6
}

# next_releases VERSION: the releases that could come right after VERSION.
next_releases() {
  local major minor patch pre n base
  read -r major minor patch pre n <<<"$(release_parts "$1")"
  base=v${major}.${minor}.${patch}
  case "${pre}" in
  -) echo "v${major}.${minor}.$((patch + 1))" ;;
  alpha) echo "${base}-alpha.$((n + 1)) ${base}-beta.0 ${base}-rc.0 ${base}" ;;
  beta) echo "${base}-beta.$((n + 1)) ${base}-rc.0 ${base}" ;;
  rc) echo "${base}-rc.$((n + 1)) ${base}" ;;
  esac
}

# newest_served TARGET: the newest release of TARGET's minor the proxy
# serves (TARGET itself at least, if it is served).
newest_served() {
  local target=$1 major minor listed newest next found
  read -r major minor _ <<<"$(release_parts "${target}")"
  mapfile -t listed < <( (cd / && GOFLAGS=-mod=mod GOTOOLCHAIN=local GOWORK=off go list -m -versions k8s.io/kubernetes 2>/dev/null) |
    tr ' ' '\n' | grep -E "^v${major}\.${minor}\.[0-9]+(-(alpha|beta|rc)\.[0-9]+)?$" || true)
  newest=$(newest_of "${target}" "${listed[@]}")
  while :; do
    read -r -a next <<<"$(next_releases "${newest}")"
    mapfile -t found < <(served "${next[@]/#/k8s.io/kubernetes@}" | awk '$3 == "yes" { print $2 }')
    [[ ${#found[@]} -gt 0 ]] || break
    newest=$(newest_of "${found[@]}")
  done
  echo "${newest}"
}

# staging_report VERSION: the staging modules of k8s.io/kubernetes@VERSION
# at their version, served or not.
staging_report() {
  local v=$1 staging_v mod dir names=() served_list unserved
  staging_v=$(staging_version "${v}")
  mod=$( (cd / && GOFLAGS=-mod=mod GOTOOLCHAIN=local GOWORK=off go list -m -json "k8s.io/kubernetes@${v}" 2>/dev/null) |
    modinfo fields GoMod 2>/dev/null) || true
  [[ -f "${mod}" ]] || { echo "staging modules unknown (no go.mod of k8s.io/kubernetes@${v})"; return 0; }
  dir=$(mktemp -d)
  cp "${mod}" "${dir}/go.mod"
  mapfile -t names < <(staging_modules "${dir}")
  rm -rf "${dir}"
  local mods=() n
  for n in "${names[@]}"; do mods+=("k8s.io/${n}@${staging_v}"); done
  served_list=$(served "${mods[@]}")
  unserved=$(awk '$3 == "no" { sub(/^k8s.io\//, "", $1); print $1 }' <<<"${served_list}" | paste -sd' ')
  echo "staging ${staging_v}: $(awk '$3 == "yes"' <<<"${served_list}" | wc -l) of ${#names[@]} served${unserved:+ (not: ${unserved})}"
}

if [[ "${1:-}" == newest ]]; then
  [[ -n "${2:-}" ]] || die "usage: $0 newest 1-NN"
  read_facts "${PATCHES_DIR}/$2/UPSTREAM"
  newest_served "${FACT_version}"
  exit 0
fi
[[ $# -eq 0 ]] || die "usage: $0 [newest 1-NN]"

behind=()
printf '%-13s %-16s %-16s %s\n' Series Targets "Newest served" "Staging modules of the newest"
for m in $(all_minors); do
  read_facts "${PATCHES_DIR}/${m}/UPSTREAM"
  target=${FACT_version}
  newest=$(newest_served "${target}")
  if [[ "$(served "k8s.io/kubernetes@${newest}" | cut -d' ' -f3)" != yes ]]; then
    printf '%-13s %-16s %-16s %s\n' "patches/${m}" "${target}" "?" "the proxy does not answer for k8s.io/kubernetes@${target}"
    continue
  fi
  printf '%-13s %-16s %-16s %s\n' "patches/${m}" "${target}" "${newest}" "$(staging_report "${newest}")"
  [[ "${newest}" == "${target}" ]] || behind+=("patches/${m} targets ${target}, the proxy serves ${newest}: make rebase FROM=$(default_minor) TO=${newest}")
done
if [[ ${#behind[@]} -eq 0 ]]; then
  echo "every series targets the newest release of its minor that the proxy serves"
else
  printf 'behind: %s\n' "${behind[@]}"
fi
