#!/usr/bin/env bash
# Runs every Go fuzz target of this module for a bounded time each.
#
#   build/fuzz.sh [DURATION]     DURATION per target, default 20s
#
# Seed corpora live in each package's testdata/fuzz and also run as plain
# unit tests; a failure found here is written there to be committed.
#
# Go 1.26's fuzz coordinator can report its own -fuzztime deadline as a
# failure, "context deadline exceeded", without any failing input
# (go.dev/issue/75804, fixed in Go 1.27). A failure that says only that and
# wrote no input to testdata/fuzz is reported as that bug, not as a finding;
# any other failure, or any written input, fails the run.

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "${REPO_ROOT}"

fuzztime=${1:-20s}
out=$(mktemp)
trap 'rm -f "${out}"' EXIT

# fuzz PKG DIR TARGET: one target; non-zero when it found something.
fuzz() {
  local pkg=$1 dir=$2 target=$3 corpus=$2/testdata/fuzz/$3 before rc=0
  before=$(ls "${corpus}" 2>/dev/null || true)
  go test -run '^$' -fuzz "^${target}\$" -fuzztime "${fuzztime}" "${pkg}" 2>&1 | tee "${out}" || rc=$?
  [[ "${rc}" -eq 0 ]] && return 0
  local written
  written=$(comm -13 <(echo "${before}") <(ls "${corpus}" 2>/dev/null || true) | sed '/^$/d')
  if [[ -n "${written}" ]]; then
    echo "${target}: failing input written to ${corpus#"${REPO_ROOT}/"}/: ${written//$'\n'/ }" >&2
    return 1
  fi
  if grep -qx -- "--- FAIL: ${target} ([0-9.]*s)" "${out}" &&
    [[ "$(sed -n "/^--- FAIL: ${target} /,/^FAIL\$/p" "${out}" | sed '1d;$d')" == "    context deadline exceeded" ]]; then
    log "${target}: no failing input; the failure is the fuzz coordinator's deadline race of Go $(go env GOVERSION) (go.dev/issue/75804)"
    return 0
  fi
  echo "${target}: go test -fuzz failed (see above)" >&2
  return 1
}

n=0
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "${pkg}")
  for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "${dir}"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
    log "fuzzing ${pkg} ${target} for ${fuzztime}"
    fuzz "${pkg}" "${dir}" "${target}" || die "fuzzing ${target} failed"
    n=$((n + 1))
  done
done
[[ "${n}" -gt 0 ]] || die "no fuzz targets found"
log "${n} fuzz targets ran for ${fuzztime} each"
