#!/usr/bin/env bash
# What the go command reports about modules, read by build/modinfo (a Go
# program of this module) rather than by sed and awk. Sourced, once
# REPO_ROOT is set, by lib.sh and containerd.sh:
#
#   module_download M@V Dir Sum        go mod download -json M@V, two fields
#   gomod_json FILE | modinfo requires
#
# build/modinfo/main.go describes the subcommands.

# modinfo ARGS...: build/modinfo, reading stdin; its output and exit code.
modinfo() {
  [[ -x "${MODINFO_BIN:-}" ]] || MODINFO_BIN=$(modinfo_build) || return 1
  "${MODINFO_BIN}" "$@"
}

# modinfo_build: builds build/modinfo, once for its source and the Go
# release, into _output/modinfo/<hash>/ (without the caller's go.work,
# GOFLAGS and GOTOOLCHAIN) and prints the executable's path. go run would
# take 0.1 s a call, print "exit status N" and exit 1 for any N.
modinfo_build() {
  local env=(GOWORK=off GOFLAGS=-buildvcs=false GOTOOLCHAIN=local)
  local out=${OUTPUT_DIR:-${REPO_ROOT}/_output}/modinfo hash
  hash=$(cat "${REPO_ROOT}"/build/modinfo/*.go <(env "${env[@]}" go version) | sha256sum | cut -c1-16)
  local bin=${out}/${hash}/modinfo
  if [[ ! -x "${bin}" ]]; then
    mkdir -p "${out}/${hash}"
    (cd "${REPO_ROOT}" && env "${env[@]}" go build -o "${bin}.tmp.$$" ./build/modinfo) || {
      rm -f "${bin}.tmp.$$"
      echo "error: cannot build build/modinfo" >&2
      return 1
    }
    mv -f "${bin}.tmp.$$" "${bin}"
    # Executables of older sources; a process that runs one keeps its file.
    find "${out}" -mindepth 1 -maxdepth 1 -type d ! -name "${hash}" -exec rm -rf {} +
  fi
  echo "${bin}"
}

# gomod_json FILE: the go.mod FILE as go mod edit -json prints it.
gomod_json() {
  GOWORK=off GOFLAGS=-buildvcs=false GOTOOLCHAIN=local go mod edit -json "$1"
}

# module_download MODULE@VERSION FIELD...: downloads MODULE@VERSION (go mod
# download -json outside any module, with the caller's GOTOOLCHAIN and
# GOPROXY) and prints the FIELDs of its JSON (Dir, Sum, Info, ...), tab
# separated. When it cannot, it says why on stderr, naming the module and
# the proxy, and fails.
module_download() {
  local mv=$1 tmp out reason
  shift
  tmp=$(mktemp -d)
  if out=$( (cd /tmp && GOFLAGS=-mod=mod go mod download -json "${mv}" 2>"${tmp}/go") | modinfo fields "$@" 2>"${tmp}/modinfo"); then
    rm -rf "${tmp}"
    echo "${out}"
    return 0
  fi
  # The module's error from the JSON, else the go command's own error, on
  # one line (it printed no JSON: a toolchain it could not get, say).
  reason=$(head -n1 "${tmp}/modinfo")
  reason=${reason#"modinfo fields: "}
  reason=${reason#"module ${mv}: "}
  if [[ "${reason}" == "no JSON object on stdin"* ]]; then
    local line
    reason=
    while IFS= read -r line; do
      line=${line#"${line%%[![:space:]]*}"}
      [[ -n "${line}" && "${line}" != "go: downloading "* ]] && reason+=${reason:+; }${line}
    done <"${tmp}/go"
  fi
  rm -rf "${tmp}"
  echo "error: cannot download ${mv} through GOPROXY=$(GOTOOLCHAIN=local go env GOPROXY): ${reason:-go mod download -json printed nothing}" >&2
  return 1
}
