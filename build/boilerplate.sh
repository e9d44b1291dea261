#!/usr/bin/env bash
# Checks, or with --fix adds, the licence header (build/boilerplate.go.txt)
# of every Go file of this repository, as upstream's
# hack/verify-boilerplate.sh does: the header opens the file, after the
# build constraint if there is one. protoc's output (*.pb.go) is exempt:
# it is generated from api.proto, whose own comments open it.
#
#   build/boilerplate.sh [--fix]

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "${REPO_ROOT}"

header=build/boilerplate.go.txt
fix=false
[[ "${1:-}" != --fix ]] || fix=true

# has_header FILE: the header is the first comment block of FILE that is
# not a build constraint.
has_header() {
  awk -v header="${header}" '
    BEGIN { while ((getline line < header) > 0) want[n++] = line }
    /^\/\/go:build / || /^\/\/ \+build / || (NR == seen + 1 && /^$/ && constraint) { seen = NR; constraint = 1; next }
    { if ($0 != want[i + 0]) exit 1; if (++i == n) { found = 1; exit 0 } }
    END { exit found ? 0 : 1 }
  ' "$1"
}

add_header() {
  local file=$1 tmp
  tmp=$(mktemp)
  awk -v header="${header}" '
    function emit() { while ((getline line < header) > 0) print line; print ""; done = 1 }
    !done && !/^\/\/go:build / && !/^\/\/ \+build / && !(constraint && /^$/) { emit() }
    /^\/\/go:build / || /^\/\/ \+build / { constraint = 1 }
    { print }
    END { if (!done) emit() }
  ' "${file}" >"${tmp}"
  cat "${tmp}" >"${file}"
  rm -f "${tmp}"
}

missing=()
while IFS= read -r file; do
  has_header "${file}" && continue
  if ${fix}; then
    add_header "${file}"
  else
    missing+=("${file}")
  fi
done < <(git ls-files --cached --others --exclude-standard -- '*.go' ':!:*.pb.go')

if [[ ${#missing[@]} -gt 0 ]]; then
  printf 'error: %s: no licence header (build/boilerplate.go.txt); run build/boilerplate.sh --fix\n' "${missing[@]}" >&2
  exit 1
fi
