#!/usr/bin/env bash
# Counts what one call of an Exec plugin costs in instructions: the
# transport benchmark's Exec plugins (test/transportbench/plugins: the
# stdlib-only minimal, the SDK's sdkexec, sdkquantity doing arithmetic on
# the SDK's quantities with apimachinery's resource package, apilinked
# linking what corepod links without calling it, and corepod asking for
# the k8s.io/api Pod) and the shipped pod-security-plugin (its default
# flags), built as the release builds plugins (static, stripped), each run
# on the benchmark's request under valgrind's callgrind. Unlike time, the
# count is the same run after run whatever else the machine does. Prints a
# markdown table: instructions (the median of RUNS runs), package
# initialisations (GODEBUG=inittrace=1), packages linked (go list -deps)
# and binary size.
#
#   build/bench-instructions.sh            # RUNS=5 by default
#
# GOMAXPROCS=1 keeps the runtime's idle threads from adding counts of their
# own; asyncpreemptoff keeps callgrind clear of the signals the Go
# scheduler preempts with. Valgrind 3.19 does not know RDTSCP, which the
# runtime executes now and then (contended locks): such a run dies of
# SIGILL and is run again, not counted.

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

RUNS=${RUNS:-5}
PLUGINS=(
  ./test/transportbench/plugins/{minimal,sdkexec,sdkquantity,apilinked,corepod}
  ./cmd/pod-security-plugin
)
command -v valgrind >/dev/null || die "valgrind is required (Debian/Ubuntu: apt-get install valgrind)"

cd "${REPO_ROOT}"
work=$(mktemp -d)
trap 'rm -rf "${work}"' EXIT
go run ./test/transportbench/request >"${work}/request.json"

echo "## One Exec plugin call in instructions"
echo
echo "| plugin | instructions per call | package inits | packages linked | binary |"
echo "|---|---|---|---|---|"
for pkg in "${PLUGINS[@]}"; do
  p=${pkg##*/}
  CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "${work}/${p}" "${pkg}"
  counts=()
  for attempt in $(seq $((4 * RUNS))); do
    [[ ${#counts[@]} -lt "${RUNS}" ]] || break
    if GOMAXPROCS=1 GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --callgrind-out-file=/dev/null \
      "${work}/${p}" <"${work}/request.json" >/dev/null 2>"${work}/callgrind.log"; then
      counts+=("$(sed -n 's/.*Collected : //p' "${work}/callgrind.log")")
    fi
  done
  [[ ${#counts[@]} -eq "${RUNS}" ]] || die "${p}: only ${#counts[@]} of ${attempt} runs under callgrind completed"
  median=$(printf '%s\n' "${counts[@]}" | sort -n | sed -n "$(((RUNS + 1) / 2))p")
  [[ -n "${median}" ]] || die "${p}: callgrind counted nothing"
  inits=$(GODEBUG=inittrace=1 "${work}/${p}" <"${work}/request.json" 2>&1 >/dev/null | grep -c '^init ')
  deps=$(go list -deps "${pkg}" | wc -l)
  size=$(stat -c %s "${work}/${p}")
  printf '| %s | %.2f M | %d | %d | %.1f MiB |\n' "${p}" "$(echo "${median} / 1000000" | bc -l)" "${inits}" "${deps}" "$(echo "${size} / 1048576" | bc -l)"
done
printf '\nThe request is the transport benchmark'"'"'s (%d bytes, `go run ./test/transportbench/request`). Command: `make bench-instructions` (RUNS=%d, the median), Go %s.\n' \
  "$(stat -c %s "${work}/request.json")" "${RUNS}" "$(go env GOVERSION)"
