#!/usr/bin/env bash
# Shows that the node e2e suite's no-pod-cgroup assertions catch a series
# that stops hiding held pods from the pod cgroup set-up: it builds the
# default minor's kubelet from a scratch copy of the patched tree in which
# SyncPod makes the pod's cgroup before the soft admission stage
# (testdata/unhide-held-pod-cgroups.go.sed), runs TestHeldPodHoldsNothing
# and TestHeldPodHoldsNoCPU against it, and succeeds only if both fail, on
# the cgroup assertions.
#
#   test/e2e_node/check-cgroup-hiding.sh [E2E_NODE_TEST_FLAGS...]
#
# Needs make source, make e2e-binaries e2e-node-binaries plugins containerd.

source "$(dirname "${BASH_SOURCE[0]}")/../../build/lib.sh"

scratch=${OUTPUT_DIR}/cgroup-hiding
src=${scratch}/kubernetes
kubelet=${scratch}/kubelet
[[ -d "${SRC_DIR}/.git" ]] || die "${SRC_DIR} does not exist; run make source first"

rm -rf "${src}"
mkdir -p "${scratch}"
log "scratch copy of the patched tree in ${src#"${REPO_ROOT}"/}"
git -C "${SRC_DIR}" worktree prune
git -C "${SRC_DIR}" worktree add --quiet --detach --force "${src}" HEAD
trap 'git -C "${SRC_DIR}" worktree remove --force "${src}" || true' EXIT
# The staged copy of this module is not committed in the tree.
cp -a "${SRC_DIR}/third_party/podadmission" "${src}/third_party/"
sed -i -f "${REPO_ROOT}/test/e2e_node/testdata/unhide-held-pod-cgroups.go.sed" "${src}/pkg/kubelet/kubelet.go"
grep -q 'check-cgroup-hiding.sh' "${src}/pkg/kubelet/kubelet.go" || die "the sed script no longer applies to pkg/kubelet/kubelet.go"

log "building the kubelet that makes held pods' cgroups"
(cd "${src}" && GOWORK=off GOFLAGS="-buildvcs=false -mod=mod" GOTOOLCHAIN=${GO_TOOLCHAIN} CGO_ENABLED=0 \
  go build -trimpath -o "${kubelet}" ./cmd/kubelet)

out=${scratch}/e2e.log
log "running the held-pod tests against it (log: ${out#"${REPO_ROOT}"/})"
rc=0
"${OUTPUT_DIR}/bin/e2e/e2e_node.test" -test.v -test.timeout=20m \
  -test.run='^(TestHeldPodHoldsNothing|TestHeldPodHoldsNoCPU)$' \
  -e2e.bin-dir="${OUTPUT_DIR}/bin" -e2e.kubelet="${kubelet}" \
  -e2e.containerd-bin-dir="$("${REPO_ROOT}/build/containerd.sh" dir)" "$@" >"${out}" 2>&1 || rc=$?
"${OUTPUT_DIR}/bin/e2e/e2e-cluster" clean || true

grep -E '^\s+--- (FAIL|PASS)|cgroups of pod' "${out}" >&2 || true
[[ ${rc} -ne 0 ]] || die "the held-pod tests passed against a kubelet that makes held pods' cgroups: the assertions do not catch it"
for t in TestHeldPodHoldsNothing TestHeldPodHoldsNoCPU; do
  grep -q -- "--- FAIL: ${t} " "${out}" || die "${t} did not fail"
done
grep -q 'cgroups of pod .*which was never admitted' "${out}" || die "the tests failed, but not on the no-pod-cgroup assertion; see ${out}"
log "the no-pod-cgroup assertions catch a kubelet that makes held pods' cgroups"
