#!/usr/bin/env bash
# Tests of build/deps.sh, the rule that the upstream tree decides every
# dependency version: a miniature upstream tree (a git repository whose
# tagged first commit is "pristine"), a series commit that requires a
# staged module, and go build with minimal version selection, offline
# (every module is a local directory).
#
#   build/deps_test.sh      (make test-build)

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "${REPO_ROOT}/build/deps.sh"

# Only local modules: no proxy, no checksum database, this Go release.
export GOPROXY=off GOFLAGS=-mod=mod
GO_TOOLCHAIN=local

source "${REPO_ROOT}/build/testing.sh"

# module DIR PATH [REQUIRE...]: a module with one package exporting V.
module() {
  local dir=$1 path=$2
  shift 2
  mkdir -p "${dir}"
  printf 'module %s\n\ngo 1.22\n' "${path}" >"${dir}/go.mod"
  local r
  for r in "$@"; do
    printf 'require %s\n' "${r}" >>"${dir}/go.mod"
  done
  printf 'package %s\n\nconst V = "%s"\n' "$(basename "${path}")" "${dir##*/}" >"${dir}/$(basename "${path}").go"
}

# new_tree NAME: the miniature upstream tree. Pristine (tag v1.0.0) pins
# example.com/dep at v1.0.0; v1.1.0 exists too (as the proxy would serve
# it). The series commit requires example.com/staged, this repository's
# module, replaced with ./third_party/staged.
new_tree() {
  local t=${work}/$1
  module "${t}/deps/dep-v1.0.0" example.com/dep
  module "${t}/deps/dep-v1.1.0" example.com/dep
  cat >"${t}/go.mod" <<EOF
module example.com/tree

go 1.22

require example.com/dep v1.0.0

replace (
	example.com/dep v1.0.0 => ./deps/dep-v1.0.0
	example.com/dep v1.1.0 => ./deps/dep-v1.1.0
	example.com/extra v1.0.0 => ./deps/extra-v1.0.0
)
EOF
  : >"${t}/go.sum"
  mkdir -p "${t}/cmd/tree"
  printf 'package main\n\nimport "example.com/dep"\n\nfunc main() { println(dep.V) }\n' >"${t}/cmd/tree/main.go"
  git -C "${t}" init -q -b upstream
  echo "/third_party/" >"${t}/.git/info/exclude"
  git -C "${t}" add -A
  git -C "${t}" commit -q -m pristine
  git -C "${t}" tag v1.0.0

  GOTOOLCHAIN=local go mod edit -require=example.com/staged@v0.0.0 -replace=example.com/staged=./third_party/staged "${t}/go.mod"
  printf 'package main\n\nimport "example.com/staged"\n\nfunc main() { println(staged.V) }\n' >"${t}/cmd/tree/main.go"
  git -C "${t}" commit -q -am "series: require the staged module"
  echo "${t}"
}

# stage TREE REQUIRE...: this repository's module as the build stages it,
# written against newer dependencies than the tree's.
stage() {
  local t=$1
  shift
  module "${t}/third_party/staged" example.com/staged "$@"
  printf '\nreplace example.com/dep => example.com/dep v1.1.0\n' >>"${t}/third_party/staged/go.mod"
}

build() { tree_go "$1" build -o /dev/null ./cmd/tree; }

# 1. pin_to_tree: the tree's versions for what it pins, the rest added,
# replace directives dropped.
t=$(new_tree pin)
stage "${t}" "example.com/dep v1.1.0" "example.com/extra v1.0.0"
pin_to_tree "${t}/third_party/staged/go.mod" "${t}/go.mod"
got=$(gomod_pins "${t}/third_party/staged/go.mod" | paste -sd' ')
if [[ "${got}" == "example.com/dep v1.0.0 example.com/extra v1.0.0 go 1.22" ]] && [[ -z "$(gomod_replaced "${t}/third_party/staged/go.mod")" ]]; then
  pass "pin_to_tree rewrites pinned modules to the tree's versions, keeps new ones, drops replaces"
else
  fail "pin_to_tree" "staged go.mod pins: ${got}; replaces: $(gomod_replaced "${t}/third_party/staged/go.mod" | paste -sd' ')"
fi

# 2. Staged as it is, minimal version selection raises the tree's pin: the
# check fails and names the module, both versions and who raised it.
t=$(new_tree raised)
stage "${t}" "example.com/dep v1.1.0"
build "${t}" 2>/dev/null || true
if out=$(check_no_drift "${t}" v1.0.0); then
  fail "a dependency raised through the staged module" "check_no_drift passed; go.mod: $(gomod_pins "${t}/go.mod" | paste -sd' ')"
elif [[ "${out}" == *"example.com/dep is v1.1.0 in ${t}/go.mod, pristine v1.0.0 pins v1.0.0 (required at v1.1.0 by example.com/staged@v0.0.0)"* ]]; then
  pass "a dependency raised through the staged module fails the check, naming it"
else
  fail "a dependency raised through the staged module" "unexpected report: ${out}"
fi

# 3. The same module staged with pin_to_tree builds against the tree's pins.
t=$(new_tree pinned)
stage "${t}" "example.com/dep v1.1.0"
pin_to_tree "${t}/third_party/staged/go.mod" "${t}/go.mod"
if ! build "${t}"; then
  fail "pinned staging" "the miniature tree does not build"
elif out=$(check_no_drift "${t}" v1.0.0); then
  pass "staged with pin_to_tree, the build keeps every pristine pin"
else
  fail "pinned staging" "check_no_drift failed: ${out}"
fi

# 4. A module new to the tree that needs a newer version of a pinned one:
# pinning cannot help, the check catches it.
t=$(new_tree transitive)
module "${t}/deps/extra-v1.0.0" example.com/extra "example.com/dep v1.1.0"
stage "${t}" "example.com/extra v1.0.0"
printf 'package staged\n\nimport "example.com/extra"\n\nvar _ = extra.V\n' >"${t}/third_party/staged/uses.go"
pin_to_tree "${t}/third_party/staged/go.mod" "${t}/go.mod"
build "${t}" 2>/dev/null || true
if out=$(check_no_drift "${t}" v1.0.0); then
  fail "a dependency raised by a module new to the tree" "check_no_drift passed"
elif [[ "${out}" == *"example.com/dep is v1.1.0"*"required at v1.1.0 by example.com/extra@v1.0.0"* ]]; then
  pass "a dependency raised by a module new to the tree fails the check, naming who raised it"
else
  fail "a dependency raised by a module new to the tree" "unexpected report: ${out}"
fi

# 5. A series patch that raises a pin itself, or the go directive.
t=$(new_tree series)
stage "${t}"
GOTOOLCHAIN=local go mod edit -require=example.com/dep@v1.1.0 -go=1.23 "${t}/go.mod"
out=$(check_no_drift "${t}" v1.0.0) && rc=0 || rc=$?
if [[ "${rc}" != 0 && "${out}" == *"example.com/dep is v1.1.0"* && "${out}" == *"go is 1.23 in ${t}/go.mod, pristine v1.0.0 pins 1.22"* ]]; then
  pass "a pin or the go directive raised in the tree's go.mod fails the check"
else
  fail "raised in the tree's go.mod" "rc ${rc}: ${out}"
fi

# 6. verify_no_drift restores go.mod and go.sum so the tree stays clean.
t=$(new_tree restore)
stage "${t}" "example.com/dep v1.1.0"
build "${t}" 2>/dev/null || true
if (verify_no_drift "${t}" v1.0.0 "the test build" 2>/dev/null); then
  fail "verify_no_drift" "passed on a drifted tree"
elif [[ -n "$(git -C "${t}" status --porcelain -- go.mod go.sum)" ]]; then
  fail "verify_no_drift" "left go.mod/go.sum changed: $(git -C "${t}" status --porcelain -- go.mod go.sum | paste -sd' ')"
else
  pass "verify_no_drift fails on drift and restores go.mod and go.sum"
fi

test_summary
