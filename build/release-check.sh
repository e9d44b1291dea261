#!/usr/bin/env bash
# The proof that make release's tarball is reproducible whatever the
# builder's umask (make test-packages):
#
#   build/release-check.sh
#
# Rebuilds UPSTREAM's tarball under umask 0077 and checks that it has the
# bytes of the one make release wrote, and that every entry is root-owned
# with mode 0755 (directories, executables) or 0644 (the rest).

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

version=$("${REPO_ROOT}/build/version.sh" version)
tarball=${OUTPUT_DIR}/release/kubelet-${version}-linux-amd64.tar.gz
[[ -f "${tarball}" ]] || die "${tarball} does not exist; run make release UPSTREAM=${UPSTREAM_VERSION} first"

work=$(mktemp -d)
trap 'rm -rf "${work}"' EXIT
cp "${tarball}" "${work}/first.tar.gz"
(umask 0077 && "${REPO_ROOT}/build/release.sh" >/dev/null)
if ! cmp -s "${work}/first.tar.gz" "${tarball}"; then
  diff <(tar --numeric-owner -tvzf "${work}/first.tar.gz") <(tar --numeric-owner -tvzf "${tarball}") >&2 || true
  die "${tarball}: a build under umask 0077 has other bytes than the first build (entries that differ above)"
fi

# Executables are what the tarball ships to run: the kubelet, podadmctl,
# the plugins (pod-admission-bin/) and install.sh.
bad=$(tar --numeric-owner -tvzf "${tarball}" | awk '
  $2 != "0/0" { print "owner " $2 ": " $NF; next }
  /^d/ { if ($1 != "drwxr-xr-x") print $1 ": " $NF; next }
  /^h/ { next }
  $NF ~ /(\/kubelet|\/podadmctl|\/pod-admission-bin\/[^\/]+|\/install\.sh)$/ { if ($1 != "-rwxr-xr-x") print $1 ": " $NF; next }
  { if ($1 != "-rw-r--r--") print $1 ": " $NF }')
[[ -z "${bad}" ]] || die "${tarball}: entries with an unexpected owner or mode:"$'\n'"${bad}"
echo "release-check: ${tarball##*/} has the same bytes under umask 0077; $(tar -tzf "${tarball}" | wc -l) entries root-owned, 0755/0644"
