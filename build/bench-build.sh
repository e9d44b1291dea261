#!/usr/bin/env bash
# Measures the drop-in kubelet build of one minor (UPSTREAM, see lib.sh),
# side by side in one run, and writes its "build-1-NN" section of
# BENCHMARKS.md:
#   - cold build: an empty Go build cache (modules already downloaded);
#   - warm rebuild after a change in pkg/ (what a developer waits for);
#   - no-op `make kubelet` when nothing changed;
#   - binary size next to a vanilla kubelet of the same upstream release,
#     built with the same flags and Go;
#   - reproducibility: the cold and the warm build must be byte-identical.

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "${REPO_ROOT}"

work=${MINOR_OUTPUT_DIR}/bench-build
rm -rf "${work}"
mkdir -p "${work}"

seconds() { # seconds CMD...: runs CMD, prints its wall time in seconds
  local start=${EPOCHREALTIME}
  "$@" >&2
  awk -v s="${start}" -v e="${EPOCHREALTIME}" 'BEGIN { printf "%.0f", e - s }'
}

# One version stamp for every build of this run, whatever else commits.
export KUBE_GIT_COMMIT=$(git rev-parse HEAD)
export SOURCE_DATE_EPOCH=$(build/version.sh epoch)
KUBE_GIT_TREE_STATE=$(build/version.sh ldflags | sed -n "s/.*component-base\/version.gitTreeState=\([a-z]*\)'.*/\1/p")
export KUBE_GIT_TREE_STATE
export UPSTREAM=${MINOR}
make kubelet >&2
sha() { cut -d' ' -f1 <"$1.sha256"; }

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
log "cold build (empty GOCACHE)"
cold_cache=$(mktemp -d)
cold=$(GOCACHE=${cold_cache} seconds build/kubelet.sh ./cmd/kubelet "${work}/kubelet-cold")
rm -rf "${cold_cache}"

log "warm rebuild after a change in the plugin manager"
probe=${SRC_DIR}/${STAGED_MODULE_DIR}/pkg/kubelet/podadmission/zz_bench_probe.go
printf 'package podadmission\n\nconst benchProbe = "%s"\n' "$(date +%s%N)" >"${probe}"
warm=$(seconds build/kubelet.sh ./cmd/kubelet "${work}/kubelet-warm-changed")
rm -f "${probe}"
build/kubelet.sh ./cmd/kubelet "${work}/kubelet-warm" >&2

noop=$(seconds make kubelet)

log "vanilla ${UPSTREAM_VERSION} kubelet with the same flags"
vanilla_src=${work}/vanilla-src
git -C "${SRC_DIR}" worktree add --quiet --detach "${vanilla_src}" "refs/tags/${UPSTREAM_VERSION}"
trap 'git -C "${SRC_DIR}" worktree remove --force "${vanilla_src}" >/dev/null 2>&1; git -C "${SRC_DIR}" worktree prune' EXIT
SRC_DIR=${vanilla_src} KUBE_GIT_VERSION=${UPSTREAM_VERSION} \
  KUBE_GIT_COMMIT=$(git -C "${vanilla_src}" rev-parse HEAD) KUBE_GIT_TREE_STATE=clean \
  build/kubelet.sh ./cmd/kubelet "${work}/kubelet-vanilla" >&2

size() { stat -c %s "$1"; }
patched_size=$(size "${work}/kubelet-cold")
vanilla_size=$(size "${work}/kubelet-vanilla")
if [[ "$(sha "${work}/kubelet-cold")" == "$(sha "${work}/kubelet-warm")" ]]; then
  reproducible="identical: $(sha "${work}/kubelet-cold")"
else
  reproducible="DIFFERENT: cold $(sha "${work}/kubelet-cold"), warm $(sha "${work}/kubelet-warm")"
fi

build/bench-section.sh "build-${MINOR}" <<EOF2
## Building the drop-in kubelet: ${KUBE_GIT_VERSION}

Command: \`make bench-build UPSTREAM=${UPSTREAM_VERSION}\` ($(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), ${GO_TOOLCHAIN}, load before the run: ${load_before}; $(date -u +%Y-%m-%d)).

| What | Measured | Goal |
|---|---|---|
| Cold build of \`./cmd/kubelet\` (empty Go build cache, modules downloaded) | ${cold} s | <= 360 s |
| Warm rebuild after a change in \`pkg/kubelet/podadmission\` | ${warm} s | |
| \`make kubelet\` with nothing changed | ${noop} s | |
| Patched kubelet size | $(numfmt --to=iec-i --suffix=B "${patched_size}") (${patched_size} bytes) | |
| Vanilla ${UPSTREAM_VERSION} kubelet, same flags | $(numfmt --to=iec-i --suffix=B "${vanilla_size}") (${vanilla_size} bytes) | |
| Size difference | $(awk -v p="${patched_size}" -v v="${vanilla_size}" 'BEGIN { printf "%+.2f %%", (p - v) * 100 / v }') | <= +1 % |
| Cold and warm builds of the same source | ${reproducible} | identical |
EOF2
