#!/usr/bin/env bash
# Benchmarks one pod admission through each plugin transport, next to an
# in-process baseline, in one run, and prints a markdown table of per-call
# latency percentiles (test/transportbench records every call's duration).
#
#   build/bench-transports.sh            # BENCHTIME=2s by default
#   BENCHTIME=5s build/bench-transports.sh
#
# The raw `go test -bench` output is written to stderr, the table to stdout.

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

BENCHTIME=${BENCHTIME:-2s}
PKG=./test/transportbench/
CMD=(go test -run '^$' -bench . -benchtime "${BENCHTIME}" -count 1 "${PKG}")

cd "${REPO_ROOT}"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
log "${CMD[*]}"
raw=$("${CMD[@]}")
echo "${raw}" >&2

# Each benchmark line: name, iterations, then value/unit pairs.
awk -v cmd="${CMD[*]}" -v cpus="$(nproc)" -v load="${load_before}" \
  -v cpu="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')" '
function dur(us) {
  if (us == "") return "n/a"
  if (us >= 1000) return sprintf("%.2f ms", us / 1000)
  return sprintf("%.0f µs", us)
}
/^BenchmarkAdmit/ {
  name = $1; sub(/^BenchmarkAdmit/, "", name); sub(/-[0-9]+$/, "", name)
  delete v
  for (i = 3; i < NF; i += 2) v[$(i + 1)] = $i
  p50[name] = v["p50-µs"]; p99[name] = v["p99-µs"]; max[name] = v["max-µs"]
  mean[name] = v["ns/op"] / 1000; allocs[name] = v["allocs/op"]; n[name] = $2
}
END {
  label["InProcess"] = "No plugin transport (in-process baseline)"; goal["InProcess"] = "-"
  label["Exec"] = "Exec (test plugin binary, one process per call)"; goal["Exec"] = "<= 2 ms / <= 5 ms"
  label["ExecMinimal"] = "Exec (stdlib-only Go plugin: transport + process, no SDK)"; goal["ExecMinimal"] = "-"
  label["GRPC"] = "GRPC (test plugin daemon, unix socket)"; goal["GRPC"] = "<= 0.15 ms / <= 1 ms"
  print "| Admission path | p50 | p99 | max | mean | calls | allocs/op (kubelet side) | goal p50 / p99 |"
  print "|---|---|---|---|---|---|---|---|"
  split("InProcess Exec ExecMinimal GRPC", order, " ")
  for (i = 1; i <= 4; i++) {
    k = order[i]
    if (!(k in n)) { printf "| %s | missing | | | | | | %s |\n", label[k], goal[k]; continue }
    printf "| %s | %s | %s | %s | %s | %d | %d | %s |\n", label[k], dur(p50[k]), dur(p99[k]), dur(max[k]), dur(mean[k]), n[k], allocs[k], goal[k]
  }
  printf "\nOne request for a two-container pod (about 3 KB of JSON), answered \"allow\". Command: `%s` on %d CPUs (%s), load average before the run: %s.\n", cmd, cpus, cpu, load
}' <<<"${raw}"
