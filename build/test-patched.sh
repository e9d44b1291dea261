#!/usr/bin/env bash
# Runs upstream's own tests of every package the series touches, inside the
# patched tree: the series' new tests and, with the feature gate off (the
# default), every upstream test of those packages unchanged.

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ -d "${SRC_DIR}/.git" ]] || die "${SRC_DIR} does not exist; run make source first"

# Packages the series changes (kept in step with the patches: the check
# below fails when a patch touches a package that is not listed).
PACKAGES=(
  ./pkg/features/
  ./cmd/kubelet/app/options/
  ./cmd/kubelet/app/
  ./pkg/kubelet/lifecycle/
  ./pkg/kubelet/pleg/
  ./pkg/kubelet/types/
  ./pkg/kubelet/
)
# Packages whose behaviour the series changes from the outside: soft
# admission defers allocation, hides held pods from the volume manager and
# adds a kubelet-owned pod condition the status manager merges.
AFFECTED_PACKAGES=(
  ./pkg/kubelet/allocation/
  ./pkg/kubelet/status/
  ./pkg/kubelet/volumemanager/...
)

touched=$(git -C "${SRC_DIR}" diff --name-only "refs/tags/${UPSTREAM_VERSION}" HEAD -- '*.go' |
  xargs -r -n1 dirname | sort -u)
for dir in ${touched}; do
  listed=0
  for pkg in "${PACKAGES[@]}"; do
    [[ "./${dir}/" == "${pkg}" ]] && listed=1
  done
  [[ "${listed}" == 1 ]] || die "the series changes ${dir} but build/test-patched.sh does not test it"
done

log "feature gate list (test/compatibility_lifecycle)"
upstream_go run ./test/compatibility_lifecycle/main.go feature-gates verify >/dev/null

log "go test ${PACKAGES[*]} ${AFFECTED_PACKAGES[*]}"
upstream_go test -count=1 "${PACKAGES[@]}" "${AFFECTED_PACKAGES[@]}"
