#!/usr/bin/env bash
# The proof that the OCI image of the kubelet runs in containerd (make
# test-images, part of make test-packages; root):
#
#   build/image-check.sh IMAGE_DIR
#
# A second build has the same bytes and digest; the image's config runs
# /usr/local/bin/kubelet (where Talos runs it) for linux/amd64; the node e2e
# suite's containerd 2.x (make containerd), started on its own (root, state
# and socket in a scratch directory, under the node e2e machine lock
# /run/podadmission-e2e.lock), imports both the OCI layout
# tarball (with the image's digest) and the `docker save` tarball, and `ctr run`
# runs the kubelet in it with --version and podadmctl in it validating the
# sample with the plugin in it.

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=build/machine-lock.sh
source "${REPO_ROOT}/build/machine-lock.sh"

image_dir=$(cd "${1:?usage: $0 IMAGE_DIR}" && pwd)
version=$("${REPO_ROOT}/build/version.sh" version)
base=kubelet-${version}
oci=${image_dir}/${base}.oci.tar
docker_tar=${image_dir}/${base}.docker.tar
[[ -f "${oci}" && -f "${docker_tar}" ]] || die "${oci} or ${docker_tar} does not exist; run make image first"
ref=$(cut -d@ -f1 "${image_dir}/${base}.image-ref")
digest=$(cut -d@ -f2 "${image_dir}/${base}.image-ref")
# The node e2e suite's containerd 2.x, its shim and runc (make containerd),
# ahead of Debian's containerd 1.6 in PATH: containerd finds the shim, the
# shim runc there.
containerd_bin=$("${REPO_ROOT}/build/containerd.sh" dir)
for tool in containerd containerd-shim-runc-v2 ctr runc; do
  [[ -x "${containerd_bin}/${tool}" ]] || die "${containerd_bin}/${tool} is missing; run make containerd"
done
export PATH=${containerd_bin}:${PATH}
command -v python3 >/dev/null || die "python3 is missing"

checks=0
ok() {
  checks=$((checks + 1))
  echo "ok ${checks}: $*"
}
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
sha() { sha256sum "$1" | cut -d' ' -f1; }

work=$(mktemp -d)
cd "${work}" || exit 1
containerd_pid=
locked=false
cleanup() {
  local rc=$? m
  set +e
  if [[ -n "${containerd_pid}" ]]; then
    kill "${containerd_pid}" 2>/dev/null
    wait "${containerd_pid}" 2>/dev/null
  fi
  # Snapshots a failed run left mounted, deepest first.
  while read -r m; do umount "${m}"; done < <(awk -v w="${work}/" 'index($2, w) == 1 { print $2 }' /proc/mounts | sort -r)
  rm -rf "${work}"
  ! ${locked} || release_lock /run/podadmission-e2e.lock 8
  exit "${rc}"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo ">>> the OCI image ${ref}"
out=$( (umask 0077 && "${REPO_ROOT}/build/image.sh" "${work}/rebuild") 2>/dev/null)
for f in "${oci}" "${docker_tar}"; do
  [[ "$(sha "${work}/rebuild/${f##*/}")" == "$(sha "${f}")" ]] || fail "a second build of ${f##*/} differs"
done
[[ "$(head -n1 <<<"${out}")" == "${ref}@${digest}" ]] || fail "a second build is $(head -n1 <<<"${out}"), want ${ref}@${digest}"
ok "a second build has the same bytes and digest ${digest}: ${oci##*/} $(sha "${oci}"), ${docker_tar##*/} $(sha "${docker_tar}")"

config=$(tar -xOf "${docker_tar}" manifest.json | python3 -c 'import json, sys; print(json.load(sys.stdin)[0]["Config"])')
tar -xOf "${docker_tar}" "${config}" | python3 -c '
import json, sys
c = json.load(sys.stdin)
want = {"entrypoint": ["/usr/local/bin/kubelet"], "os": "linux", "architecture": "amd64"}
got = {"entrypoint": c["config"].get("Entrypoint"), "os": c["os"], "architecture": c["architecture"]}
sys.exit(0 if got == want else "the image config is %s, want %s" % (got, want))
' || fail "the image's configuration is not what Talos runs"
ok "its config: entrypoint /usr/local/bin/kubelet, linux/amd64"

log "taking /run/podadmission-e2e.lock to start a containerd"
take_lock /run/podadmission-e2e.lock 8
locked=true
mkdir -p "${work}/containerd"
socket=${work}/containerd/containerd.sock
# No CRI (ctr needs none), no /opt/containerd, no snapshotter that probes
# devices: the node e2e suite's configuration without its CRI part.
cat >"${work}/containerd/config.toml" <<EOT
version = 3
root = "${work}/containerd/root"
state = "${work}/containerd/state"
disabled_plugins = [
  "io.containerd.cri.v1.images",
  "io.containerd.cri.v1.runtime",
  "io.containerd.grpc.v1.cri",
  "io.containerd.internal.v1.opt",
  "io.containerd.snapshotter.v1.blockfile",
  "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.snapshotter.v1.erofs",
  "io.containerd.snapshotter.v1.zfs",
  "io.containerd.tracing.processor.v1.otlp",
]
[grpc]
  address = "${socket}"
[ttrpc]
  address = "${socket}.ttrpc"
EOT
containerd --config "${work}/containerd/config.toml" >"${work}/containerd.log" 2>&1 &
containerd_pid=$!
for _ in $(seq 1 100); do
  ctr -a "${socket}" version >/dev/null 2>&1 && break
  kill -0 "${containerd_pid}" 2>/dev/null || fail "containerd exited:"$'\n'"$(tail -n 20 "${work}/containerd.log")"
  sleep 0.2
done
ctr_() { ctr -a "${socket}" -n podadmission-image-check "$@"; }
# ctr run's stdout is the container's; ctr's own warnings (containerd 2.2+
# warns of cgroup v1 on every call) go to stderr, kept for a failure.
run_in_image() {
  ctr_ run --rm --snapshotter=overlayfs "docker.io/${ref}" podadmission-image-check "$@" 2>"${work}/ctr-run.err"
}
containerd_version=$(ctr -a "${socket}" version | awk '/Server:/ { s = 1 } s && /Version:/ { print $2; exit }')

for archive in "${oci}" "${docker_tar}"; do
  out=$(ctr_ images import --snapshotter=overlayfs "${archive}" 2>&1) || fail "ctr images import ${archive##*/} failed:"$'\n'"${out}"
  listed=$(ctr_ images ls -q)
  grep -qxF "docker.io/${ref}" <<<"${listed}" || fail "${archive##*/} imported as ${listed}, want docker.io/${ref}"
  got=$(ctr_ images ls | awk -v r="docker.io/${ref}" '$1 == r { print $3 }')
  # A docker save archive holds no manifest: containerd writes one of its own.
  [[ "${archive}" != "${oci}" || "${got}" == "${digest}" ]] || fail "${archive##*/} imported with digest ${got}, want ${digest}"
  out=$(run_in_image /usr/local/bin/kubelet --version) ||
    fail "ctr run of the kubelet in ${archive##*/} failed:"$'\n'"${out}"$'\n'"$(cat "${work}/ctr-run.err")"
  [[ "${out}" == "Kubernetes ${version}" ]] || fail "the kubelet in ${archive##*/} says ${out}, want Kubernetes ${version}"
  kubelet_version=${out}
  out=$(run_in_image /usr/local/bin/podadmctl validate /usr/local/share/podadmission-kubelet/pod-admission --bin-dir /usr/local/lib/pod-admission) ||
    fail "podadmctl validate in ${archive##*/} failed:"$'\n'"${out}"$'\n'"$(cat "${work}/ctr-run.err")"
  ok "containerd ${containerd_version} imports ${archive##*/} as docker.io/${ref}@${got}; ctr run: ${kubelet_version}; podadmctl validate: ${out}"
  ctr_ images rm --sync "docker.io/${ref}" >/dev/null
done
echo ">>> image checks passed: ${checks} checks, ${lock_wait}s waiting for the machine lock"
