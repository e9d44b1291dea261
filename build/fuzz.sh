#!/usr/bin/env bash
# Runs every Go fuzz target of this module for a bounded time each.
#
#   build/fuzz.sh [DURATION]     DURATION per target, default 20s
#
# Seed corpora live in each package's testdata/fuzz and also run as plain
# unit tests; a failure found here is written there to be committed.

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "${REPO_ROOT}"

fuzztime=${1:-20s}
n=0
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "${pkg}")
  for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "${dir}"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
    log "fuzzing ${pkg} ${target} for ${fuzztime}"
    go test -run '^$' -fuzz "^${target}\$" -fuzztime "${fuzztime}" "${pkg}"
    n=$((n + 1))
  done
done
[[ "${n}" -gt 0 ]] || die "no fuzz targets found"
log "${n} fuzz targets ran for ${fuzztime} each"
