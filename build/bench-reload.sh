#!/usr/bin/env bash
# The configuration reload's cost on a directory of 10,000 plugin files, for
# the BENCHMARKS.md section "reload": the periodic resync when nothing
# changed (a stat per file, nothing read) next to a full load of the same
# directory, in one run.

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

cd "${REPO_ROOT}"
command=(go test -run '^$' -bench '^Benchmark(ResyncUnchanged10000Files|Load10000Files)$' -benchmem -count 3 ./pkg/kubelet/podadmission/)
out=$("${command[@]}")

echo "## Configuration reload: a directory of 10,000 files"
echo
echo "Command: \`${command[*]}\` ($(nproc) CPUs, $(go env GOVERSION), load before the run: $(cut -d' ' -f1-3 /proc/loadavg); $(date -u +%Y-%m-%d))."
echo
echo "| Benchmark | run | time per reload | bytes allocated | allocations |"
echo "|---|---:|---:|---:|---:|"
awk '/^Benchmark/ {
  name = $1; sub(/^Benchmark/, "", name); sub(/-[0-9]+$/, "", name)
  n[name]++
  for (i = 2; i <= NF; i++) {
    if ($(i+1) == "ns/op") ns = $i
    if ($(i+1) == "B/op") bytes = $i
    if ($(i+1) == "allocs/op") allocs = $i
  }
  printf "| %s | %d | %.1f ms | %.2f MB | %d |\n", name, n[name], ns / 1e6, bytes / 1e6, allocs
}' <<<"${out}"
grep -q '^Benchmark' <<<"${out}" || die "no benchmark results: ${out}"
