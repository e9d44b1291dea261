#!/usr/bin/env bash
# Benchmarks the cost of one pod admission, in one run: the manager's own
# work with no transport (pkg/kubelet/podadmission), then Exec and GRPC
# plugins written with the SDK through the manager, each next to its
# reference, a bare fork+exec of a stdlib-only static binary answering the
# same JSON and a bare gRPC unary echo on a unix socket
# (test/transportbench). Prints a markdown table of per-call latency
# percentiles, the ratios to the references and whether each goal is met.
#
#   build/bench-transports.sh            # BENCHTIME=10s by default
#   BENCHTIME=5s build/bench-transports.sh
#
# The raw `go test -bench` output is written to stderr, the table to stdout.

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

BENCHTIME=${BENCHTIME:-10s}
CMD=(go test -run '^$' -bench '^BenchmarkAdmit' -benchtime "${BENCHTIME}" -count 1
  ./pkg/kubelet/podadmission/ ./test/transportbench/)

cd "${REPO_ROOT}"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
log "${CMD[*]}"
raw=$("${CMD[@]}")
echo "${raw}" >&2
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# Each benchmark line: name, iterations, then value/unit pairs.
awk -v cmd="${CMD[*]}" -v cpus="$(nproc)" -v load="${load_before}" -v load_after="${load_after}" \
  -v cpu="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')" '
function dur(us) {
  if (us == "") return "n/a"
  if (us >= 1000) return sprintf("%.2f ms", us / 1000)
  if (us >= 100) return sprintf("%.0f µs", us)
  return sprintf("%.1f µs", us)
}
function ratio(k, ref) {
  if (!(k in n) || !(ref in n)) return "n/a"
  return sprintf("%.2f× / %.2f×", p50[k] / p50[ref], p99[k] / p99[ref])
}
function met(ok) { return ok ? "met" : "**missed**" }
# BenchmarkAdmitExec and BenchmarkAdmitGRPC time several paths side by
# side and report <path>-<metric>; the benchmark of the manager reports <metric>
# for the path of its name.
/^BenchmarkAdmit/ {
  bench = $1; sub(/^BenchmarkAdmit/, "", bench); sub(/-[0-9]+$/, "", bench)
  for (i = 3; i < NF; i += 2) {
    unit = $(i + 1); k = bench
    if (match(unit, /-(p50-µs|p99-µs|max-µs|mean-µs|allocs)$/)) { k = substr(unit, 1, RSTART - 1); unit = substr(unit, RSTART + 1) }
    if (unit == "ns/op") { if (!(k in mean)) mean[k] = $i / 1000; continue }
    if (unit == "allocs/op" || unit == "allocs") allocs[k] = $i
    if (unit == "p50-µs") p50[k] = $i
    if (unit == "p99-µs") p99[k] = $i
    if (unit == "max-µs") max[k] = $i
    if (unit == "mean-µs") mean[k] = $i
    n[k] = $2
  }
}
END {
  label["ManagerNoTransport"] = "Manager, no transport: SoftAdmit of a new pod, one in-process plugin"
  label["BareExec"] = "Reference: bare fork+exec of a stdlib-only static binary answering the JSON"
  label["ExecSDK"] = "Exec plugin written with the SDK, through the manager"
  label["ExecStdlib"] = "Exec plugin, the same stdlib-only binary, through the manager"
  label["ExecAPILinked"] = "Exec plugin written with the SDK, linking k8s.io/api as corepod does without calling it, through the manager"
  label["ExecCorePod"] = "Exec plugin written with the SDK that gets the k8s.io/api Pod (package corepod), through the manager"
  label["ExecPodSecurity"] = "The shipped pod-security-plugin (--level=baseline, on the k8s.io/api Pod of package corepod), through the manager"
  label["BareGRPC"] = "Reference: bare gRPC unary echo of the JSON on a unix socket"
  label["GRPCSDK"] = "GRPC plugin daemon written with the SDK, through the manager"
  label["GRPCPodSecurity"] = "The pod-security-plugin policy as a GRPC plugin daemon, pod-security-plugin-grpc (--level=baseline), through the manager"
  ref["ExecSDK"] = "BareExec"; ref["ExecStdlib"] = "BareExec"; ref["ExecCorePod"] = "BareExec"; ref["ExecAPILinked"] = "BareExec"; ref["ExecPodSecurity"] = "BareExec"; ref["GRPCSDK"] = "BareGRPC"; ref["GRPCPodSecurity"] = "BareGRPC"
  if ("ManagerNoTransport" in n) {
    goal["ManagerNoTransport"] = "p50 <= 15 µs, <= 60 allocs: " met(p50["ManagerNoTransport"] <= 15 && allocs["ManagerNoTransport"] <= 60)
  }
  if ("ExecSDK" in n && "BareExec" in n) {
    goal["ExecSDK"] = "<= 1.3× the bare exec (p50, p99): " met(p50["ExecSDK"] <= 1.3 * p50["BareExec"] && p99["ExecSDK"] <= 1.3 * p99["BareExec"])
  }
  if ("GRPCSDK" in n && "BareGRPC" in n) {
    goal["GRPCSDK"] = "<= 2× the bare gRPC (p50, p99): " met(p50["GRPCSDK"] <= 2 * p50["BareGRPC"] && p99["GRPCSDK"] <= 2 * p99["BareGRPC"])
  }
  print "| Admission path | p50 | p99 | max | mean | calls | allocs per call (kubelet side) | × reference p50 / p99 | goal |"
  print "|---|---|---|---|---|---|---|---|---|"
  rows = split("ManagerNoTransport BareExec ExecSDK ExecStdlib ExecAPILinked ExecCorePod ExecPodSecurity BareGRPC GRPCSDK GRPCPodSecurity", order, " ")
  for (i = 1; i <= rows; i++) {
    k = order[i]
    g = (k in goal) ? goal[k] : "-"
    if (!(k in n)) { printf "| %s | missing | | | | | | | %s |\n", label[k], g; continue }
    r = (k in ref) ? ratio(k, ref[k]) : "-"
    printf "| %s | %s | %s | %s | %s | %d | %d | %s | %s |\n", label[k], dur(p50[k]), dur(p99[k]), dur(max[k]), dur(mean[k]), n[k], allocs[k], r, g
  }
  printf "\nOne admission of a two-container pod (a request of about 2.5 KB of JSON) that the plugin admits. The Exec and GRPC rows are the kubelet'"'"'s whole path: SoftAdmit, the chain (timeout, call slot, metrics), the transport (for Exec: trust checks, a cgroup per call, the process; for GRPC: the checked connection) and the plugin, built like the release'"'"'s plugins (static, stripped). Each transport'"'"'s rows are timed call by call side by side, in rounds of one call of each in rotating order, so that a reference and the paths compared with it see the same machine. Command: `%s` on %d CPUs (%s), load average before the run: %s, after: %s.\n", cmd, cpus, cpu, load, load_after
}' <<<"${raw}"
