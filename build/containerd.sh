#!/usr/bin/env bash
# Builds containerd 2.x and runc from the Go module proxy (no git, no
# GitHub: the modules github.com/containerd/containerd/v2 and
# github.com/opencontainers/runc), stamped and cached.
#
#   build/containerd.sh [build]   build if the stamp is not current; print the bin dir
#   build/containerd.sh dir       print the bin dir only
#   build/containerd.sh version   print the containerd and runc versions
#
# Output, in _output/containerd/<CONTAINERD_VERSION>/:
#   bin/containerd bin/containerd-shim-runc-v2 bin/ctr   containerd
#   bin/runc                                            runc RUNC_VERSION
#   bin/SHA256SUMS                                      the four binaries
#   stamp                                               what they were built from
# A build is skipped when the stamp names the same inputs (versions, module
# sums, Go release, this script) and every binary is there; concurrent
# callers wait for one build (flock on <version>/.lock).
#
# Both are built the way their own Makefiles build a release:
#   containerd, ctr  go build -buildmode=pie -tags urfave_cli_no_docs, cgo
#                    as the Go default (on; btrfs headers from
#                    linux-libc-dev), -X version.{Version,Revision,Package}
#   the shim         CGO_ENABLED=0, -tags "urfave_cli_no_docs no_grpc"
#   runc             `make static` without libpathrs (a Rust library that
#                    Debian 12 does not package; runc then uses its Go
#                    pathrs-lite): cgo against libseccomp (libseccomp-dev),
#                    -tags "seccomp urfave_cli_no_docs netgo osusergo",
#                    a static PIE
# The module proxy serves no git commit, so version.Revision and runc's
# gitCommit are the module's checksum (the h1: line of go.sum), which names
# the source exactly.
#
# runc: containerd v2.4 is tested with runc v1.5.2
# (script/setup/runc-version; docs/RUNC.md asks for that or newer), Debian
# 12 ships 1.1.5, so runc is built too.

set -euo pipefail

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUTPUT_DIR=${OUTPUT_DIR:-${REPO_ROOT}/_output}

# The newest v2.4.x and runc release the proxy serves (go list -m -versions).
CONTAINERD_VERSION=${CONTAINERD_VERSION:-v2.4.2}
RUNC_VERSION=${RUNC_VERSION:-v1.5.3}

CONTAINERD_MODULE=github.com/containerd/containerd/v2
RUNC_MODULE=github.com/opencontainers/runc

OUT=${OUTPUT_DIR}/containerd/${CONTAINERD_VERSION}
BIN=${OUT}/bin
BINARIES=(containerd containerd-shim-runc-v2 ctr runc)

die() {
  echo "error: $*" >&2
  exit 1
}

log() {
  echo ">>> $*" >&2
}

# The modules' own go.mod and go.sum decide every dependency; the Go
# release here builds them (containerd v2.4 needs go 1.26).
export GOWORK=off GOFLAGS="-buildvcs=false -mod=mod" GOTOOLCHAIN=local
# shellcheck source=build/modinfo.sh
source "${REPO_ROOT}/build/modinfo.sh"

# module_field MODULE@VERSION FIELD: Dir or Sum of the downloaded module.
module_field() {
  module_download "$1" "$2" || exit 1
}

# ensure_libseccomp: runc's seccomp support links libseccomp statically.
ensure_libseccomp() {
  [[ -f /usr/include/seccomp.h && "$(gcc -print-file-name=libseccomp.a)" == /* ]] && return 0
  if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null; then
    die "runc needs libseccomp's headers and static library: install them (Debian: apt-get install libseccomp-dev)"
  fi
  log "installing libseccomp-dev (runc's seccomp support)"
  export DEBIAN_FRONTEND=noninteractive
  # Other builds on the machine may hold apt's lock: wait for it.
  local apt=(apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends libseccomp-dev)
  if ! "${apt[@]}" >/dev/null; then
    apt-get -o DPkg::Lock::Timeout=900 update -qq
    "${apt[@]}" >/dev/null
  fi
}

# stamp_text: every input of the build; a change of any rebuilds.
stamp_text() {
  cat <<EOF
containerd ${CONTAINERD_MODULE}@${CONTAINERD_VERSION} ${containerd_sum}
runc ${RUNC_MODULE}@${RUNC_VERSION} ${runc_sum}
$(go version)
script $(sha256sum <"${BASH_SOURCE[0]}" | cut -d' ' -f1)
EOF
}

current() {
  local b
  for b in "${BINARIES[@]}"; do
    [[ -x "${BIN}/${b}" ]] || return 1
  done
  [[ -f "${OUT}/stamp" ]] && [[ "$(cat "${OUT}/stamp")" == "$(stamp_text)" ]]
}

build_containerd() {
  local dir=$1 tmp=$2 pkg=${CONTAINERD_MODULE}
  local ldflags="-X ${pkg}/version.Version=${CONTAINERD_VERSION} -X ${pkg}/version.Revision=${containerd_sum} -X ${pkg}/version.Package=${pkg}"
  local cmd
  for cmd in containerd ctr; do
    log "building ${cmd} ${CONTAINERD_VERSION}"
    (cd "${dir}" && go build -trimpath -buildmode=pie -tags urfave_cli_no_docs \
      -ldflags "${ldflags}" -o "${tmp}/${cmd}" "./cmd/${cmd}")
  done
  log "building containerd-shim-runc-v2 ${CONTAINERD_VERSION}"
  (cd "${dir}" && CGO_ENABLED=0 go build -trimpath -tags "urfave_cli_no_docs no_grpc" \
    -ldflags "${ldflags} -extldflags -static" -o "${tmp}/containerd-shim-runc-v2" ./cmd/containerd-shim-runc-v2)
}

build_runc() {
  local dir=$1 tmp=$2
  ensure_libseccomp
  log "building runc ${RUNC_VERSION}"
  (cd "${dir}" && CGO_ENABLED=1 go build -trimpath -buildmode=pie \
    -tags "seccomp urfave_cli_no_docs netgo osusergo" \
    -ldflags "-X main.gitCommit=${runc_sum} -linkmode external -extldflags -static-pie" \
    -o "${tmp}/runc" .)
}

action=${1:-build}
case "${action}" in
dir)
  echo "${BIN}"
  exit 0
  ;;
version)
  echo "containerd ${CONTAINERD_VERSION} runc ${RUNC_VERSION}"
  exit 0
  ;;
build) ;;
*) die "usage: $0 [build|dir|version]" ;;
esac

containerd_dir=$(module_field "${CONTAINERD_MODULE}@${CONTAINERD_VERSION}" Dir)
containerd_sum=$(module_field "${CONTAINERD_MODULE}@${CONTAINERD_VERSION}" Sum)
runc_dir=$(module_field "${RUNC_MODULE}@${RUNC_VERSION}" Dir)
runc_sum=$(module_field "${RUNC_MODULE}@${RUNC_VERSION}" Sum)
[[ -d "${containerd_dir}" && -d "${runc_dir}" ]] || die "the Go module proxy did not serve ${CONTAINERD_MODULE}@${CONTAINERD_VERSION} or ${RUNC_MODULE}@${RUNC_VERSION}"

if current; then
  echo "${BIN}"
  exit 0
fi

# One build at a time (CI starts one early in the background; make test's
# e2e step then waits here for it and finds the stamp current).
mkdir -p "${OUT}"
exec 9>"${OUT}/.lock"
flock 9
if current; then
  echo "${BIN}"
  exit 0
fi

start=$(date +%s)
tmp=$(mktemp -d "${OUT}/bin.tmp.XXXXXX")
trap 'rm -rf "${tmp}"' EXIT
build_containerd "${containerd_dir}" "${tmp}"
build_runc "${runc_dir}" "${tmp}"
(cd "${tmp}" && sha256sum "${BINARIES[@]}" >SHA256SUMS)
# The check that the stamp is current reads the binaries first: replace
# them whole, then write the stamp.
rm -f "${OUT}/stamp"
rm -rf "${BIN}"
mv "${tmp}" "${BIN}"
chmod 0755 "${BIN}"
trap - EXIT
stamp_text >"${OUT}/stamp"
"${BIN}/containerd" --version >&2
"${BIN}/runc" --version >&2
log "containerd and runc built in $(($(date +%s) - start))s"
echo "${BIN}"
