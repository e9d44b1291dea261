#!/usr/bin/env bash
# Runs upstream's node e2e suite (built by test/upstream-e2e/build.sh) with
# upstream's local runner and flags, as hack/make-rules/test-e2e-node.sh
# runs it locally, against one kubelet configuration after another, on the
# same node set-up, and writes each run's JUnit report and logs to
# _output/upstream-e2e/1-NN/runs/<run>/<configuration>/:
#
#   vanilla       upstream's kubelet of the same release
#   gate-off      the drop-in kubelet, PodAdmissionPlugin off
#   gate-on       the drop-in kubelet, gate on, an Exec and a GRPC plugin
#                 (test/testplugin) that admit every pod
#   gate-on-hold  gate on, an Exec plugin that admits and a GRPC plugin that
#                 holds every pod for HOLD (2s) and then admits it by a push
#
#   test/upstream-e2e/run.sh [-n NAME] CONFIGURATION...
#
# The environment chooses the tests (see README.md): LABEL_FILTER, FOCUS,
# SKIP, PARALLELISM (ginkgo -nodes). One node e2e cluster runs per machine:
# the run holds /run/podadmission-e2e.lock (waiting LOCK_WAIT, 4h) and
# leaves the host as it found it (containerd, mounts, cgroups, the CNI
# bridge, /var/lib/kubelet and the other host paths the suite uses).

source "$(dirname "${BASH_SOURCE[0]}")/../../build/lib.sh"
cd "${REPO_ROOT}"

OUT=${OUTPUT_DIR}/upstream-e2e/${MINOR}
LOCK=/run/podadmission-e2e.lock
LOCK_WAIT=${LOCK_WAIT:-4h}
HOLD=${HOLD:-2s}
PARALLELISM=${PARALLELISM:-8}
LABEL_FILTER=${LABEL_FILTER:-}
FOCUS=${FOCUS:-}
SKIP=${SKIP:-}
CONFIGURATIONS=(vanilla gate-off gate-on gate-on-hold)

run_name=$(date -u +%Y%m%dT%H%M%SZ)
if [[ "${1:-}" == -n ]]; then
  run_name=$2
  shift 2
fi
[[ $# -gt 0 ]] || die "usage: $0 [-n NAME] CONFIGURATION... (${CONFIGURATIONS[*]})"
for c in "$@"; do
  [[ " ${CONFIGURATIONS[*]} " == *" ${c} "* ]] || die "unknown configuration ${c} (${CONFIGURATIONS[*]})"
done
[[ $(id -u) -eq 0 ]] || die "upstream's node e2e suite runs the kubelet and containerd: run as root"
need=(bin/e2e_node.test bin/ginkgo bin/run-local tools/units tools/testplugin tools/containerd-config images/Pause.ref)
for c in "$@"; do
  if [[ "${c}" == vanilla ]]; then need+=(kubelet/vanilla); else need+=(kubelet/dropin); fi
done
for f in "${need[@]}"; do
  [[ -e "${OUT}/${f}" ]] || die "${OUT#"${REPO_ROOT}"/}/${f} is missing: run test/upstream-e2e/build.sh (make upstream-e2e-build)"
done
# containerd 2.x and runc, built by make containerd (build/containerd.sh).
CONTAINERD_BIN=$(build/containerd.sh dir)
for f in containerd containerd-shim-runc-v2 ctr runc; do
  [[ -x "${CONTAINERD_BIN}/${f}" ]] || die "${CONTAINERD_BIN#"${REPO_ROOT}"/}/${f} is missing: run make containerd"
done

# The descriptor of the lock, once taken (take_lock); none before.
lock_fd=99
# take_lock WAIT_S: the machine's node e2e lock, held on a descriptor of
# this shell, so that a signal sent to this script reaches the script and
# not a flock process around it. The Go harness
# (test/e2e_node/framework/lock.go) removes the file before it unlocks: a
# lock taken on a removed file is taken again on the new one. What this
# script starts gets the descriptor closed ({lock_fd}>&-): a process of
# its left running must not keep the next run out.
take_lock() {
  local deadline=$((EPOCHSECONDS + $1)) left
  while :; do
    left=$((deadline - EPOCHSECONDS))
    ((left > 0)) || die "${LOCK} is still held after ${LOCK_WAIT}: $(cat "${LOCK}" 2>/dev/null)"
    exec {lock_fd}<>"${LOCK}"
    if flock -w "${left}" "${lock_fd}" &&
      [[ "$(stat -Lc %d:%i "/proc/$$/fd/${lock_fd}")" == "$(stat -c %d:%i "${LOCK}" 2>/dev/null)" ]]; then
      echo "pid $$: $0 -n ${run_name} ${*:2}" >"/proc/$$/fd/${lock_fd}"
      return
    fi
    exec {lock_fd}>&-
  done
}

if [[ -z "${UPSTREAM_E2E_LOCKED:-}" ]]; then
  log "waiting up to ${LOCK_WAIT} for ${LOCK} (one node e2e cluster per machine)"
  wait_s=${LOCK_WAIT%[hms]}
  case "${LOCK_WAIT}" in
  *h) wait_s=$((wait_s * 3600)) ;;
  *m) wait_s=$((wait_s * 60)) ;;
  esac
  take_lock "${wait_s}" "$@"
  export UPSTREAM_E2E_LOCKED=1
fi

RUNS=${OUT}/runs/${run_name}
STATE=/var/lib/upstream-e2e
RUNDIR=/run/upstream-e2e
# containerd's default socket, as on a production node: the kubelet's
# embedded cAdvisor looks for containerd there and nowhere else (its
# --containerd flag, which the kubelet does not set), and without it
# reports the containers' cgroups without their pods' and containers'
# names. containerd serves ttrpc next to it (.ttrpc). Everything else of
# containerd's is the run's own (STATE, RUNDIR).
CONTAINERD_SOCK=/run/containerd/containerd.sock
PLUGIN_CONFIG_DIR=${RUNDIR}/pod-admission/config
PLUGIN_BIN_DIR=${RUNDIR}/pod-admission/bin
PLUGIN_SOCKET=${RUNDIR}/pod-admission/sockets/admit.sock
# The node's disk: a file system of its own for the kubelet's root
# directory and containerd's, as on a node with a kubelet disk, so that the
# kubelet's image garbage collection and disk-pressure eviction (upstream's
# configuration: above 85% of use, below 10% free) see the run's own use,
# not the build machine's. A sparse file; NODE_DISK_SIZE is its size.
NODE_DISK=/var/lib/upstream-e2e-node-disk.img
NODE_DISK_SIZE=${NODE_DISK_SIZE:-32G}
# The host must have room for what the run actually writes to that disk.
NODE_DISK_HOST_FREE_GIB=8
CNI_BRIDGE=upstreame2e0
CNI_SUBNET=10.100.0.0/24 # the podCIDR of test/e2e_node/jenkins/default-kubelet-config.yaml
# Host paths the suite and the kubelet create; the ones that exist before a
# run are kept.
# containerd's CDI spec directory is its default, /var/run/cdi, where
# upstream's sample device plugin writes its specs (the manifests mount it
# from the host), as on a production node.
CDI_SPEC_DIR=/var/run/cdi
HOST_PATHS=(/var/lib/kubelet /var/log/pods /var/log/containers /etc/kubernetes /usr/libexec/kubernetes /var/lib/cni /run/containerd /run/cdi /tmp/node-e2e-*)
CGROUP_NAMES=(kubepods kubepods.slice kubelet.slice kubelet system runtime.slice)

export UNITS_STATE_DIR=${RUNDIR}/units
UNITS_KEEPER_ARG=__units-keeper # keeperArg of cmd/units
export PATH=${OUT}/tools:${PATH}
if [[ -d /run/systemd/system ]]; then
  # A real systemd runs the kubelet's transient unit itself.
  export PATH=${PATH#"${OUT}/tools:"}
fi

existing_paths=()
for p in ${HOST_PATHS[@]}; do
  [[ -e "${p}" ]] && existing_paths+=("${p}")
done
for c in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do
  for d in "${CGROUP_NAMES[@]}"; do
    [[ -d "${c}${d}" ]] && existing_paths+=("${c}${d}")
  done
done

# The bridge plugin turns IP forwarding on for a gateway; put it back.
ip_forward=$(cat /proc/sys/net/ipv4/ip_forward)
containerd_pid=
# Set once this run has claimed CONTAINERD_SOCK (claim_containerd_socket):
# teardown removes the sockets then, and only then.
containerd_sock_ours=
plugin_pid=
suite_pid=

# kill_tree PID: PID and every process below it, TERM first, then KILL
# what is left after 10 s.
kill_tree() {
  local pids=("$1") i=0 child
  while ((i < ${#pids[@]})); do
    for child in $(pgrep -P "${pids[i]}" || true); do
      pids+=("${child}")
    done
    i=$((i + 1))
  done
  kill -TERM "${pids[@]}" 2>/dev/null || true
  for _ in {1..20}; do
    kill -0 "${pids[@]}" 2>/dev/null || return 0
    sleep 0.5
  done
  kill -KILL "${pids[@]}" 2>/dev/null || true
}

# mounts_under DIR: the mount points at or below DIR, deepest first, once
# for each mount (a mount point with mounts stacked on it comes as often).
mounts_under() {
  awk -v d="$1" '$5 == d || index($5, d "/") == 1 { print $5 }' /proc/self/mountinfo | sort -r
}

# unmount_under DIR: every mount at or below DIR, deepest first, lazily.
# /var/lib/kubelet is a shared mount: what propagates into it while it is
# taken down is taken down by the next pass; what is still there after
# five is named.
unmount_under() {
  local m left
  for _ in 1 2 3 4 5; do
    left=$(mounts_under "$1")
    [[ -n "${left}" ]] || return 0
    for m in ${left}; do
      umount -l "${m}" 2>/dev/null || true
    done
  done
  left=$(mounts_under "$1")
  [[ -z "${left}" ]] || echo "teardown: still mounted after five passes: $(paste -sd' ' <<<"${left}")" >&2
}

teardown() {
  # A run stopped by a signal: the suite (the runner, ginkgo, the API
  # server it started) goes first, so nothing restarts what follows ends.
  if [[ -n "${suite_pid}" ]]; then
    kill_tree "${suite_pid}"
    wait "${suite_pid}" 2>/dev/null || true
    suite_pid=
  fi
  local u
  for u in "${UNITS_STATE_DIR}"/*.json; do
    [[ -e "${u}" ]] && systemctl stop "$(basename "${u}" .json)" >/dev/null 2>&1
  done
  # A unit whose state file is gone still has its keeper: the first serial
  # run left a kubelet running that way, and the next configuration's
  # kubelet could not bind its ports. End every keeper of this run's units
  # tool and what it runs.
  local keeper
  for keeper in $(pgrep -f "^${OUT}/tools/units ${UNITS_KEEPER_ARG} " || true); do
    echo "teardown: ending a unit whose state was lost: $(tr '\0' ' ' </proc/"${keeper}"/cmdline 2>/dev/null)" >&2
    pkill -KILL -P "${keeper}" 2>/dev/null || true
    kill -KILL "${keeper}" 2>/dev/null || true
  done
  [[ -n "${plugin_pid}" ]] && kill "${plugin_pid}" 2>/dev/null && wait "${plugin_pid}" 2>/dev/null
  plugin_pid=
  if [[ -n "${containerd_pid}" ]]; then
    # Pods first, so that their shims end with them.
    "${CONTAINERD_BIN}/ctr" -a "${CONTAINERD_SOCK}" -n k8s.io tasks ls -q 2>/dev/null | while read -r t; do
      "${CONTAINERD_BIN}/ctr" -a "${CONTAINERD_SOCK}" -n k8s.io tasks kill -s SIGKILL "${t}" >/dev/null 2>&1
    done
    kill "${containerd_pid}" 2>/dev/null && wait "${containerd_pid}" 2>/dev/null
  fi
  containerd_pid=
  # The shims of this run's containerd: its address is containerd's
  # default, which a host containerd's shims name too, so only those
  # whose bundle (their working directory) is in this run's state
  # directory, or that run this run's shim binary.
  local pid
  for pid in $(pgrep -f "containerd-shim-runc-v2 .*-address ${CONTAINERD_SOCK}" || true); do
    [[ "$(readlink "/proc/${pid}/cwd" 2>/dev/null)" == "${RUNDIR}/containerd/state/"* ||
      "/proc/${pid}/exe" -ef "${CONTAINERD_BIN}/containerd-shim-runc-v2" ]] || continue
    kill -9 "${pid}" 2>/dev/null || true
  done
  if [[ -n "${containerd_sock_ours}" ]]; then
    rm -f "${CONTAINERD_SOCK}" "${CONTAINERD_SOCK}.ttrpc"
    containerd_sock_ours=
  fi
  unmount_under /var/lib/kubelet
  unmount_under "${STATE}"
  unmount_under "${RUNDIR}"
  local ns
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep '^cni-' || true); do
    ip netns delete "${ns}" 2>/dev/null || true
  done
  ip link delete "${CNI_BRIDGE}" 2>/dev/null || true
  echo "${ip_forward}" >/proc/sys/net/ipv4/ip_forward
  local c d
  for c in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do
    for d in "${CGROUP_NAMES[@]}"; do
      [[ -d "${c}${d}" && " ${existing_paths[*]} " != *" ${c}${d} "* ]] || continue
      find "${c}${d}" -depth -type d -exec rmdir {} + 2>/dev/null
    done
  done
  rm -rf "${STATE}" "${RUNDIR}" "${NODE_DISK}"
  local p keep e
  for p in ${HOST_PATHS[@]}; do
    [[ -e "${p}" ]] || continue
    keep=
    for e in "${existing_paths[@]}"; do
      [[ "${e}" == "${p}" ]] && keep=1
    done
    if [[ -z "${keep}" ]]; then
      unmount_under "${p}"
      rm -rf "${p}"
    fi
  done
  return 0
}
trap 'teardown' EXIT
trap 'exit 130' INT TERM

# mount_node_disk: a fresh ext4 file system on NODE_DISK, at ${STATE}/disk,
# with /var/lib/kubelet bound to its kubelet directory. The loop device goes
# with the last unmount. /var/lib/kubelet is made a shared mount (recursively),
# as systemd makes every mount of a production node. Left private, the
# kubelet binds its root directory over itself and makes that rshared
# (MakeRShared), but containerd, checking a bidirectional mount's source
# (upstream's "Mount recursive read-only" test has one), reads the first of
# the two stacked mounts at /var/lib/kubelet, the private one, and refuses
# ("is mounted on /var/lib/kubelet but it is not a shared mount"). Shared
# from the start, the kubelet leaves it as it is: one mount. The disk's own
# mount is made private first, so that the bind is a peer group of its own
# and the kubelet's mounts do not show under ${STATE}/disk/kubelet too.
mount_node_disk() {
  local avail
  avail=$(df -B1 --output=avail "$(dirname "${NODE_DISK}")" | tail -n1)
  ((avail >= NODE_DISK_HOST_FREE_GIB << 30)) ||
    die "$(dirname "${NODE_DISK}") has $((avail >> 30)) GiB free: the node's disk (${NODE_DISK}, sparse) needs at least ${NODE_DISK_HOST_FREE_GIB} GiB for what the run writes"
  rm -f "${NODE_DISK}"
  truncate -s "${NODE_DISK_SIZE}" "${NODE_DISK}"
  mkfs.ext4 -q -F -L upstream-e2e -E lazy_itable_init=1,lazy_journal_init=1 "${NODE_DISK}" ||
    die "mkfs.ext4 ${NODE_DISK} failed"
  mkdir -p "${STATE}/disk"
  mount -o loop "${NODE_DISK}" "${STATE}/disk" || die "cannot mount ${NODE_DISK} (a loop device is needed)"
  mount --make-private "${STATE}/disk" || die "cannot make ${STATE}/disk a private mount"
  mkdir -p "${STATE}/disk/kubelet" "${STATE}/disk/containerd" /var/lib/kubelet
  mount --bind "${STATE}/disk/kubelet" /var/lib/kubelet || die "cannot bind ${STATE}/disk/kubelet at /var/lib/kubelet"
  mount --make-rshared /var/lib/kubelet || die "cannot make /var/lib/kubelet a shared mount"
}

# claim_containerd_socket: CONTAINERD_SOCK (and its .ttrpc) for this run's
# containerd, which would unlink and take over whatever is there. Dies
# when something listens there (another containerd: stop it first) or the
# path is not a socket; removes a stale socket nothing listens on.
claim_containerd_socket() {
  local s users
  for s in "${CONTAINERD_SOCK}" "${CONTAINERD_SOCK}.ttrpc"; do
    [[ -e "${s}" || -L "${s}" ]] || continue
    [[ -S "${s}" ]] || die "${s} exists and is not a socket; upstream's suite runs its containerd there (containerd's default socket, where the kubelet's cAdvisor looks for it): remove it first"
    users=$(ss -Hxlp src "${s}" 2>/dev/null | grep -o 'users:.*' | paste -sd' ' || true)
    if ss -Hxl src "${s}" 2>/dev/null | grep -q . ||
      { [[ "${s}" == "${CONTAINERD_SOCK}" ]] && timeout 10 "${CONTAINERD_BIN}/ctr" -a "${s}" version >/dev/null 2>&1; }; then
      die "${s} is in use, another containerd's? (${users:-a listener ss does not show: another network namespace?}):" \
        "upstream's suite runs its own containerd at containerd's default socket, where the kubelet's cAdvisor looks for it;" \
        "stop that containerd first (systemctl stop containerd) and run again"
    fi
    echo "run.sh: removing ${s}, a stale socket nothing listens on" >&2
    rm -f "${s}"
  done
  containerd_sock_ours=1
}

start_containerd() { # start_containerd ARTIFACTS
  local dir=${STATE}/containerd cni_dir=${STATE}/cni/net.d
  mkdir -p "${CDI_SPEC_DIR}" "${dir}/nri/plugins" "${dir}/nri/conf.d" "${RUNDIR}/containerd" "${cni_dir}" "${STATE}/cni/ipam"
  # The configuration of the project's own node e2e harness
  # (test/e2e_node/containerdconfig); the host is the pods' gateway, so
  # that the suite's probes and port checks reach pods. test-handler is
  # the runtime handler upstream's node e2e jobs configure (runc, as the
  # default) and the suite's RuntimeClass tests name.
  "${OUT}/tools/containerd-config" -version 3 \
    -config "${dir}/config.toml" -root "${STATE}/disk/containerd" -state "${RUNDIR}/containerd/state" \
    -socket "${CONTAINERD_SOCK}" -extra-runtime-handlers test-handler -shim "${CONTAINERD_BIN}/containerd-shim-runc-v2" \
    -runc "${CONTAINERD_BIN}/runc" -runc-root "${RUNDIR}/containerd/runc" \
    -cni-conf-dir "${cni_dir}" -cdi-spec-dir "${CDI_SPEC_DIR}" -sandbox-image "$(cat "${OUT}/images/Pause.ref")" \
    -nri-socket "${RUNDIR}/containerd/nri.sock" -nri-plugin-dir "${dir}/nri/plugins" -nri-plugin-config-dir "${dir}/nri/conf.d" \
    -cni-config "${cni_dir}/10-upstream-e2e.conflist" -cni-name upstream-e2e -cni-bridge "${CNI_BRIDGE}" \
    -cni-subnet "${CNI_SUBNET}" -cni-ipam-dir "${STATE}/cni/ipam" -cni-gateway -cni-hairpin
  cp "${dir}/config.toml" "$1/containerd-config.toml"
  cp "${cni_dir}/10-upstream-e2e.conflist" "$1/cni.conflist"
  { "${CONTAINERD_BIN}/containerd" --version && "${CONTAINERD_BIN}/runc" --version; } >"$1/runtime-versions.txt"
  claim_containerd_socket
  # containerd runs as under its systemd unit (Restart=always,
  # RestartSec=5): upstream's "Restart Container Runtime" test SIGKILLs it
  # six times and expects it back. The supervisor restarts it until it is
  # sent TERM (teardown), which it passes on. Whatever containerd starts by
  # name comes from its own build first.
  (
    set +e # a containerd that was killed is no reason to stop
    trap 'kill "${child}" 2>/dev/null; wait "${child}" 2>/dev/null; exit 0' TERM
    while :; do
      PATH=${CONTAINERD_BIN}:${PATH} "${CONTAINERD_BIN}/containerd" --config "${dir}/config.toml" >>"$1/containerd.log" 2>&1 &
      child=$!
      wait "${child}"
      echo "run.sh: containerd exited ($?); starting it again in 5 s, as its systemd unit does" >>"$1/containerd.log"
      sleep 5 &
      wait $!
    done
  ) {lock_fd}>&- &
  containerd_pid=$!
  local i
  for i in $(seq 100); do
    "${CONTAINERD_BIN}/ctr" -a "${CONTAINERD_SOCK}" version >/dev/null 2>&1 && break
    ((i < 100)) || die "containerd did not answer within 20 s: see $1/containerd.log"
    sleep 0.2
  done
  local tar
  for tar in "${OUT}"/images/*.tar; do
    "${CONTAINERD_BIN}/ctr" -a "${CONTAINERD_SOCK}" -n k8s.io images import --snapshotter=overlayfs "${tar}" >/dev/null
  done
  "${CONTAINERD_BIN}/ctr" -a "${CONTAINERD_SOCK}" -n k8s.io images ls -q | sed 's/^/  image: /' >&2
}

# start_plugins CONFIGURATION ARTIFACTS: the plugin chain of a gate-on run.
start_plugins() {
  local grpc_args=(--mode=allow)
  if [[ "$1" == gate-on-hold ]]; then
    # retryAfterSeconds far beyond the hold: the push releases each pod.
    grpc_args+=(--hold="${HOLD}" --retry-after=10m --reason=HeldByUpstreamE2E --message="held for ${HOLD}, then admitted by a push")
  fi
  install -d -m 0755 "${PLUGIN_CONFIG_DIR}" "${PLUGIN_BIN_DIR}" "$(dirname "${PLUGIN_SOCKET}")"
  install -m 0755 "${OUT}/tools/testplugin" "${PLUGIN_BIN_DIR}/admit-exec"
  "${OUT}/tools/testplugin" --serve="unix://${PLUGIN_SOCKET}" "${grpc_args[@]}" >"$2/grpc-plugin.log" 2>&1 {lock_fd}>&- &
  plugin_pid=$!
  cat >"${PLUGIN_CONFIG_DIR}/10-upstream-e2e.yaml" <<YAML
apiVersion: podadmission.kubelet.config.k8s.io/v1alpha1
kind: PodAdmissionConfiguration
plugins:
- name: admit-exec
  type: Exec
  args: ["--mode=allow"]
- name: admit-grpc
  type: GRPC
  endpoint: ${PLUGIN_SOCKET}
YAML
  cp "${PLUGIN_CONFIG_DIR}/10-upstream-e2e.yaml" "$2/"
}

# percent_of [BLOCK.]KEY DEFAULT FILE: the percentage "KEY: N" or "KEY: N%"
# sets at the top level of the kubelet configuration FILE, or in its map
# BLOCK (evictionHard.nodefs.available); DEFAULT without one (or when it is
# a quantity, not a percentage).
percent_of() {
  awk -v key="$1" -v def="$2" '
    function value(v) { gsub(/[" ]/, "", v); if (v ~ /^[0-9]+%?$/) { sub(/%/, "", v); print v; found = 1; exit } }
    BEGIN { block = ""; name = key; if (index(key, ".")) { block = substr(key, 1, index(key, ".") - 1); name = substr(key, index(key, ".") + 1) } }
    /^[^ #]/ { inblock = ($0 ~ "^" block ":") }
    block == "" && index($0, name ":") == 1 { value(substr($0, length(name) + 2)) }
    block != "" && inblock && $0 ~ /^ +/ { line = $0; sub(/^ +/, "", line); if (index(line, name ":") == 1) value(substr(line, length(name) + 2)) }
    END { if (!found) print def }' "$3"
}

# check_disk KUBELET_CONFIG: refuse to run when the node's disk (the file
# system of the kubelet's and containerd's state) is so full that the kubelet of that
# configuration would collect images (above imageGCHighThresholdPercent of
# use, 85 by default) or evict pods (below evictionHard nodefs.available):
# the suite's images are built here and cannot be pulled again, so every
# test after that fails for a reason that is not the kubelet's.
check_disk() {
  local gc_high evict_pct need size avail target
  gc_high=$(percent_of imageGCHighThresholdPercent 85 "$1")
  evict_pct=$(percent_of evictionHard.nodefs.available 10 "$1")
  read -r target size avail < <(df -B1 --output=target,size,avail "${STATE}/disk" | tail -n1)
  need=$((size * (100 - gc_high) / 100))
  ((size * evict_pct / 100 > need)) && need=$((size * evict_pct / 100))
  need=$((need + (2 << 30))) # the run's own images, logs and pods
  ((avail >= need)) && return 0
  die "${target} has $((avail >> 30)) GiB free of $((size >> 30)) GiB: the kubelet of upstream's node e2e configuration" \
    "(imageGCHighThresholdPercent ${gc_high}, evictionHard nodefs.available ${evict_pct}%) would remove the suite's images," \
    "which cannot be pulled here, and evict its pods; free at least $(((need - avail + (1 << 30) - 1) >> 30)) GiB on ${target}"
}

run_configuration() {
  local config=$1
  local artifacts=${RUNS}/${config}
  rm -rf "${artifacts}"
  mkdir -p "${artifacts}"
  teardown
  local port
  for port in 10248 10250 10255; do
    ! ss -Hltn "sport = :${port}" | grep -q . ||
      die "${config}: port ${port} of the kubelet is in use on this machine ($(ss -Hltnp "sport = :${port}" | grep -o 'users:.*')); stop that kubelet first"
  done
  mkdir -p "${STATE}" "${RUNDIR}"
  # Upstream's kubelet configuration for node e2e runs; a cgroup v1 host
  # (these machines) needs failCgroupV1: false, or the kubelet refuses to start.
  local kubelet_config=${STATE}/kubelet-config.yaml
  cp "${SRC_DIR}/test/e2e_node/jenkins/default-kubelet-config.yaml" "${kubelet_config}"
  if [[ "$(stat -fc %T /sys/fs/cgroup)" != cgroup2fs ]]; then
    echo "failCgroupV1: false" >>"${kubelet_config}"
  fi
  cp "${kubelet_config}" "${artifacts}/kubelet-config-file.yaml"
  mount_node_disk
  check_disk "${kubelet_config}"
  log "${config}: starting containerd and importing the images"
  start_containerd "${artifacts}"

  # The runner finds ginkgo and the suite in $KUBE_ROOT/_output/local/go/bin,
  # and the suite the kubelet next to itself.
  local root=${STATE}/root
  local bin=${root}/_output/local/go/bin
  mkdir -p "${bin}" "${STATE}/work"
  ln -f "${OUT}/bin/e2e_node.test" "${OUT}/bin/ginkgo" "${bin}/"
  local kubelet=dropin
  [[ "${config}" == vanilla ]] && kubelet=vanilla
  ln -f "${OUT}/kubelet/${kubelet}" "${bin}/kubelet"
  "${bin}/kubelet" --version >"${artifacts}/kubelet-version"

  local test_args="--prepull-images=false --container-runtime-endpoint=unix://${CONTAINERD_SOCK}"
  if [[ "${config}" == gate-on* ]]; then
    start_plugins "${config}" "${artifacts}"
    test_args+=" --feature-gates=PodAdmissionPlugin=true --kubelet-flags=\"--pod-admission-plugin-config=${PLUGIN_CONFIG_DIR} --pod-admission-plugin-bin-dir=${PLUGIN_BIN_DIR}\""
  fi
  # As hack/make-rules/test-e2e-node.sh builds them for a local run.
  test_args="--dns-domain=\"cluster.local\" ${test_args}"
  test_args="--kubelet-flags=\"--cluster-domain=cluster.local\" ${test_args}"
  local ginkgo_flags="-timeout=24h"
  [[ ${PARALLELISM} -gt 1 ]] && ginkgo_flags+=" -nodes=${PARALLELISM}"
  [[ -n "${FOCUS}" ]] && ginkgo_flags+=" -focus=\"${FOCUS}\""
  [[ -n "${SKIP}" ]] && ginkgo_flags+=" -skip=\"${SKIP}\""
  [[ -n "${LABEL_FILTER}" ]] && ginkgo_flags+=" --label-filter=\"${LABEL_FILTER}\""
  printf 'LABEL_FILTER=%s\nFOCUS=%s\nSKIP=%s\nPARALLELISM=%s\n' "${LABEL_FILTER}" "${FOCUS}" "${SKIP}" "${PARALLELISM}" >"${artifacts}/selection"

  log "${config}: running upstream's node e2e suite ($(cat "${artifacts}/kubelet-version")); logs in ${artifacts#"${REPO_ROOT}"/}"
  local start=${EPOCHSECONDS} rc=0
  # In the background, waited for: bash runs a trap only once the
  # foreground command ends, so a TERM sent to this script alone would
  # wait for the whole suite before the teardown.
  (cd "${STATE}/work" && KUBE_ROOT=${root} exec "${OUT}/bin/run-local" \
    --build-dependencies=false \
    --ginkgo-flags="${ginkgo_flags}" \
    --test-flags="--v 4 --report-dir=${artifacts} --node-name $(hostname) ${test_args}" \
    --kubelet-config-file="${kubelet_config}") >"${artifacts}/build-log.txt" 2>&1 {lock_fd}>&- &
  suite_pid=$!
  wait "${suite_pid}" || rc=$?
  suite_pid=
  echo "$((EPOCHSECONDS - start))" >"${artifacts}/seconds"
  echo "${rc}" >"${artifacts}/exit-code"
  log "${config}: exit ${rc} after $((EPOCHSECONDS - start)) s ($(grep -E '^(Ran|PASS|FAIL)' "${artifacts}/build-log.txt" | tail -n2 | paste -sd' '))"
  teardown
}

mkdir -p "${RUNS}"
for config in "$@"; do
  run_configuration "${config}"
done
ln -sfn "${run_name}" "${OUT}/runs/latest"
log "results in ${RUNS#"${REPO_ROOT}"/}"
