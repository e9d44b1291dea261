#!/usr/bin/env bash
# Writes RESULTS.md (on stdout) from the parts of one run of
# test/upstream-e2e/run.sh: results.sh RUNS-DIR RUN COMMAND CONFIGURATION...
# The parts are the directories RUNS-DIR/RUN-<part> (conformance and serial
# for make test-upstream-e2e-node).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
runs=$1 run=$2 command=$3
shift 3
parts=()
for part in "${runs}/${run}"-*; do
  [[ -d "${part}" ]] && parts+=("${part}")
done
[[ ${#parts[@]} -gt 0 ]] || { echo "results.sh: no part of run ${run} in ${runs}" >&2; exit 2; }
selection="run ${run}: $(for p in "${parts[@]}"; do printf '%s: %s; ' "${p##*-}" "$(paste -sd' ' "${p}/$1/selection" 2>/dev/null)"; done)"
cd "${here}/../.."
go run ./test/upstream-e2e/cmd/results -runs "$(IFS=,; echo "${parts[*]}")" -causes "${here}/causes.tsv" \
  -command "${command}" -selection "${selection%; }" "$@"
