#!/usr/bin/env bash
# Static checks CI runs before the tests: licence headers, formatting, vet
# (including the node e2e code, which builds only with its tag), go.mod
# tidiness, and generated code that matches its sources.

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "${REPO_ROOT}"
build/host-deps.sh protoc=protobuf-compiler

failed=0
fail() {
  echo "error: $*" >&2
  failed=1
}

unformatted=$(gofmt -l $(git ls-files '*.go'))
[[ -z "${unformatted}" ]] || fail "not gofmt'ed (run gofmt -w): ${unformatted//$'\n'/ }"

build/boilerplate.sh || fail "Go files without the licence header (run build/boilerplate.sh --fix)"

go vet ./... || fail "go vet ./... failed"
go vet -tags e2e_node ./test/e2e_node/... || fail "go vet -tags e2e_node ./test/e2e_node/... failed"
# build/image is a module of its own (go-containerregistry stays out of
# the kubelet's dependencies).
(cd build/image && GOWORK=off go vet ./... && GOWORK=off go mod tidy -diff >/dev/null) ||
  fail "build/image: go vet failed or go.mod/go.sum are not tidy (cd build/image && go mod tidy)"

backup=$(mktemp -d)
trap 'rm -rf "${backup}"' EXIT
cp go.mod go.sum "${backup}/"
go mod tidy
if ! git diff --quiet -- go.mod go.sum; then
  fail "go.mod/go.sum are not tidy (run go mod tidy):"$'\n'"$(git diff --stat -- go.mod go.sum)"
  cp "${backup}/go.mod" "${backup}/go.sum" .
fi

# The NRI comparison's plugin is a module of its own (test/e2e_node/nriplugin).
nri=test/e2e_node/nriplugin
(cd "${nri}" && GOWORK=off go vet ./...) || fail "go vet in ${nri} failed"
cp "${nri}/go.mod" "${nri}/go.sum" "${backup}/"
(cd "${nri}" && GOWORK=off go mod tidy)
if ! git diff --quiet -- "${nri}/go.mod" "${nri}/go.sum"; then
  fail "${nri}/go.mod/go.sum are not tidy (run go mod tidy there)"
  cp "${backup}/go.mod" "${backup}/go.sum" "${nri}/"
fi

# Regenerate into the work tree and compare with what is committed.
generated=(pkg/apis pkg/plugin/corev1 pkg/plugin/corepod)
if [[ -z "$(git status --porcelain -- "${generated[@]}")" ]]; then
  build/generate.sh >/dev/null 2>&1 || fail "build/generate.sh failed"
  if [[ -n "$(git status --porcelain -- "${generated[@]}")" ]]; then
    fail "generated code is stale (run make generate):"$'\n'"$(git status --short -- "${generated[@]}")"
    git checkout -q -- "${generated[@]}"
    git clean -q -fd -- "${generated[@]}"
  fi
else
  fail "${generated[*]} have uncommitted changes; commit them before verifying generated code"
fi

[[ "${failed}" == 0 ]] || exit 1
log "verify: gofmt, vet, tidy and generated code are clean"
