#!/usr/bin/env bash
# What a GRPC plugin's pushes cost, for the BENCHMARKS.md section "push",
# in one run on the real clock with in-process plugins: a plugin pushing
# All in a loop next to no pushing plugin, while another plugin holds 50 or
# 110 pods (the calls per second the pushes drive into that other plugin,
# and a new pod's first evaluation meanwhile); and the release of the
# pushing plugin's own held pods by its push.

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

cd "${REPO_ROOT}"
command=(go test -run '^$' -bench '^BenchmarkPush(Flood|ReleasesOwnPods)$' -benchtime 1x -count 3 ./pkg/kubelet/podadmission/)
out=$("${command[@]}")
grep -q '^Benchmark' <<<"${out}" || die "no benchmark results: ${out}"

echo "## GRPC pushes: only the pushing plugin's pods, rate-limited per pod"
echo
echo "Command: \`${command[*]}\` ($(nproc) CPUs, $(go env GOVERSION), load before the run: $(cut -d' ' -f1-3 /proc/loadavg); $(date -u +%Y-%m-%d))."
echo "Chain: \"other\" (in process, answering at once or after 500 ms, 4 call slots as an Exec plugin) then \"pusher\"; a pod worker per held pod evaluates it whenever the Manager wakes it. Each figure is the median of the runs, the range in brackets."
echo
# field: the metric's value in a benchmark line, by its unit.
summarize() {
  awk -v unit="$1" '/^Benchmark/ {
    name = $1; sub(/^Benchmark[^\/]*\//, "", name); sub(/-[0-9]+$/, "", name)
    for (i = 2; i <= NF; i++) if ($(i+1) == unit) v[name] = v[name] " " $i
    if (!(name in seen)) { seen[name] = 1; order[++n] = name }
  }
  END {
    for (k = 1; k <= n; k++) {
      name = order[k]; m = split(substr(v[name], 2), x, " ")
      for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (x[j] + 0 < x[i] + 0) { t = x[i]; x[i] = x[j]; x[j] = t }
      printf "%s\t%s\t%s\t%s\n", name, x[int((m + 1) / 2)], x[1], x[m]
    }
  }' <<<"${out}"
}
echo "| Other plugin's answer | Pods it holds | Pushing plugin | Calls/s into the other plugin | A new pod's first evaluation |"
echo "|---|---:|---|---:|---:|"
join -t $'\t' <(summarize other-calls/s | grep '^other' | sort) <(summarize new-pod-first-evaluation-s | grep '^other' | sort) |
  sort -t $'\t' -k1,1V |
  awk -F '\t' '{
    split($1, p, "/"); sub(/^other=/, "", p[1]); sub(/^held=/, "", p[2]); sub(/^pusher=/, "", p[3]); gsub(/-/, " ", p[3])
    printf "| %s | %s | %s | %.1f [%.1f-%.1f] | %.3f s [%.3f-%.3f] |\n", p[1], p[2], p[3], $2, $3, $4, $5, $6, $7
  }'
echo
echo "| Pods the pushing plugin holds | Push | Push to admitted, p50 | Push to admitted, slowest pod |"
echo "|---:|---|---:|---:|"
join -t $'\t' <(summarize release-p50-ms | grep '^held' | sort) <(summarize release-max-ms | grep '^held' | sort) |
  sort -t $'\t' -k1,1V |
  awk -F '\t' '{
    split($1, p, "/"); sub(/^held=/, "", p[1])
    push = p[2] == "first-push" ? "its first" : "right after the All its transport sends when it connects"
    printf "| %s | %s | %.1f ms [%.1f-%.1f] | %.1f ms [%.1f-%.1f] |\n", p[1], push, $2, $3, $4, $5, $6, $7
  }'
