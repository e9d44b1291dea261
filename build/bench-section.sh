#!/usr/bin/env bash
# Replaces one section of BENCHMARKS.md with stdin:
#   some-benchmark | build/bench-section.sh NAME
# A section is everything between <!-- begin NAME --> and <!-- end NAME -->;
# a new section is appended. Other sections are left as they are, so each
# benchmark rewrites only the rows it measured, with the command it ran.

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

name=${1:?usage: build/bench-section.sh NAME <content}
file=${BENCHMARKS_FILE:-${REPO_ROOT}/BENCHMARKS.md}
content=$(cat)
[[ -n "${content}" ]] || die "no content for section ${name}"

if [[ ! -f "${file}" ]]; then
  printf '# Benchmarks\n\nEvery table below was written by the command named with it (`make bench` runs them all), on the machine it names.\n' >"${file}"
fi
begin="<!-- begin ${name} -->"
end="<!-- end ${name} -->"
section=$(printf '%s\n%s\n%s\n' "${begin}" "${content}" "${end}")
tmp=$(mktemp)
if grep -qxF "${begin}" "${file}"; then
  awk -v begin="${begin}" -v end="${end}" -v section="${section}" '
    $0 == begin { print section; skip = 1; next }
    $0 == end { skip = 0; next }
    !skip { print }
  ' "${file}" >"${tmp}"
else
  { cat "${file}"; printf '\n%s\n' "${section}"; } >"${tmp}"
fi
mv "${tmp}" "${file}"
log "BENCHMARKS.md: section ${name} updated"
