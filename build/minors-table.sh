#!/usr/bin/env bash
# The README's table of maintained minors, from every series' facts:
#
#   build/minors-table.sh           prints it
#   build/minors-table.sh --write   rewrites it in README.md (make rebase does)
#   build/minors-table.sh --check   fails if README.md's differs (make verify-patches)
#
# The table sits between <!-- begin minors --> and <!-- end minors -->.
# Its "Newest served" column is what the Go module proxy served when the
# table was written (build/upstream-status.sh newest); --check compares
# every other column, so a new upstream release never fails it: make
# upstream-status says which series are behind.

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# table [--offline]: the table; --offline leaves the newest-served column
# empty instead of asking the proxy.
table() {
  local default m newest=""
  default=$(default_minor)
  echo "| Series | Upstream | Newest served ($(date -u +%Y-%m-%d)) | Revision | Go | Buildable here |"
  echo "|---|---|---|---|---|---|"
  for m in $(all_minors); do
    read_facts "${PATCHES_DIR}/${m}/UPSTREAM"
    local buildable="yes"
    [[ "${m}" == "${default}" ]] && buildable="yes (the default)"
    if [[ -n "${FACT_proxy_refuses:-}" ]]; then
      buildable="no: the Go module proxy does not serve $(sed 's/ /, /g' <<<"${FACT_proxy_refuses}")"
    fi
    [[ "${1:-}" == --offline ]] || newest=$("${REPO_ROOT}/build/upstream-status.sh" newest "${m}")
    echo "| \`patches/${m}\` | ${FACT_version} | ${newest} | $(tr -d '[:space:]' <"${PATCHES_DIR}/${m}/SERIES_VERSION") | ${FACT_toolchain} | ${buildable} |"
  done
}

readme=${REPO_ROOT}/README.md
begin="<!-- begin minors -->"
end="<!-- end minors -->"
current() { awk -v b="${begin}" -v e="${end}" '$0 == e { p = 0 } p { print } $0 == b { p = 1 }' "${readme}"; }
# without_newest: a table without its newest-served column (the third).
without_newest() { awk -F'|' -v OFS='|' '{ $4 = "" } 1'; }

case "${1:-}" in
"") table ;;
--check)
  grep -qxF "${begin}" "${readme}" || die "README.md has no ${begin} line"
  if ! diff <(current | without_newest) <(table --offline | without_newest) >/dev/null; then
    die "README.md's table of maintained minors is not what the facts files say; run build/minors-table.sh --write:"$'\n'"$(diff <(current | without_newest) <(table --offline | without_newest) || true)"
  fi
  ;;
--write)
  grep -qxF "${begin}" "${readme}" || die "README.md has no ${begin} line"
  tmp=$(mktemp)
  awk -v b="${begin}" -v e="${end}" -v t="$(table)" '
    $0 == b { print; print t; skip = 1; next }
    $0 == e { skip = 0 }
    !skip { print }
  ' "${readme}" >"${tmp}"
  cat "${tmp}" >"${readme}"
  rm -f "${tmp}"
  ;;
*) die "usage: build/minors-table.sh [--check|--write]" ;;
esac
