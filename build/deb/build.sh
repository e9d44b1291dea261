#!/usr/bin/env bash
# Builds the Debian package of the drop-in kubelet from the release tarball
# (make release):
#
#   build/deb/build.sh [OUTDIR]   OUTDIR/podadmission-kubelet_<upstream>+podadmission.<N>_amd64.deb
#
# OUTDIR defaults to _output/deb. The files and where they go are the
# tarball's install.sh --list, so the package and the tarball route install
# the same files; the package adds its copyright and changelog under
# /usr/share/doc. The maintainer scripts (build/deb/*.in) divert the stock
# kubelet and check its minor; build/pkgscripts/common.sh is the part they
# share with the .rpm's scriptlets. Reproducible: every mtime is
# SOURCE_DATE_EPOCH, owners are root, dpkg-deb sorts the members, and xz
# runs single-threaded so the bytes do not depend on the machine's cores.

# shellcheck source=build/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
# shellcheck source=build/pkgscripts/render.sh
source "${REPO_ROOT}/build/pkgscripts/render.sh"

out_dir=${1:-${OUTPUT_DIR}/deb}
deb_src=${REPO_ROOT}/build/deb
version=$("${REPO_ROOT}/build/version.sh" version)
deb_version=${version#v}
minor=$(release_minor "${UPSTREAM_VERSION}")
name=kubelet-${version}-linux-amd64
tarball=${OUTPUT_DIR}/release/${name}.tar.gz
package=podadmission-kubelet
deb=${out_dir}/${package}_${deb_version}_amd64.deb

[[ -f "${tarball}" ]] || die "${tarball} does not exist; run make release first"
(cd "$(dirname "${tarball}")" && sha256sum --check --quiet --strict "${name}.tar.gz.sha256") ||
  die "${tarball} does not match ${tarball}.sha256; run make release again"
command -v dpkg-deb >/dev/null || die "dpkg-deb is missing (Debian: apt-get install dpkg)"

work=$(mktemp -d)
trap 'rm -rf "${work}"' EXIT
tar -xzf "${tarball}" -C "${work}"
release=${work}/${name}
# The tarball's time (SOURCE_DATE_EPOCH when it was made), not HEAD's: the
# same tarball gives the same bytes whatever was committed since.
epoch=$(stat -c %Y "${release}/LICENSE")
root=${work}/root
mkdir -p "${root}/DEBIAN"

log "building ${deb#"${REPO_ROOT}"/} from ${tarball#"${REPO_ROOT}"/}"
conffiles=()
executables=()
while read -r src dest perm; do
  install -D -m "${perm}" "${release}/${src}" "${root}/${dest}"
  [[ "${dest}" != etc/* ]] || conffiles+=("/${dest}")
  [[ "${perm}" != 0755 ]] || executables+=("${dest}")
done < <(bash "${release}/install.sh" --list)

doc=${root}/usr/share/doc/${package}
install -D -m 0644 "${deb_src}/copyright" "${doc}/copyright"
cat <<EOF | gzip -n -9 >"${doc}/changelog.gz"
${package} (${deb_version}) unstable; urgency=medium

  * Kubernetes ${UPSTREAM_VERSION} with the podadmission patch series
    patches/${MINOR} (series version ${SERIES_VERSION}).

 -- podadmission <build@podadmission.invalid>  $(date -u -R --date="@${epoch}")
EOF
chmod 0644 "${doc}/changelog.gz"
# The executables are Go binaries built with CGO_ENABLED=0, static as
# upstream's release kubelet is; lintian exempts Go binaries only when it sees
# a source package that build-depends on golang-go.
overrides=${root}/usr/share/lintian/overrides/${package}
mkdir -p "$(dirname "${overrides}")"
{
  echo "# Static Go binaries (CGO_ENABLED=0), as upstream's release kubelet."
  for dest in "${executables[@]}"; do
    [[ "$(head -c 4 "${root}/${dest}" | od -An -c | tr -d ' ')" != '177ELF' ]] ||
      echo "${package}: statically-linked-binary [${dest}]"
  done
} >"${overrides}"
chmod 0644 "${overrides}"

substitute() {
  sed -e "s/@VERSION@/${deb_version}/g" -e "s/@MINOR@/${minor}/g" \
    -e "s/@UPSTREAM@/${UPSTREAM_VERSION#v}/g" -e "s/@INSTALLED_SIZE@/${installed_size:-}/g" "$1"
}
PKG_MINOR=${minor} PKG_VERSION=${deb_version}
for script in preinst postinst prerm postrm; do
  render_script "${deb_src}/${script}.in" dpkg/apt >"${root}/DEBIAN/${script}"
  chmod 0755 "${root}/DEBIAN/${script}"
done
install -m 0644 "${deb_src}/triggers" "${root}/DEBIAN/triggers"
printf '%s\n' "${conffiles[@]}" >"${root}/DEBIAN/conffiles"
chmod 0644 "${root}/DEBIAN/conffiles"

(cd "${root}" && find . -path ./DEBIAN -prune -o -type f -printf '%P\n' | LC_ALL=C sort | xargs -d '\n' md5sum) >"${root}/DEBIAN/md5sums"
chmod 0644 "${root}/DEBIAN/md5sums"

# Installed-Size as dpkg-gencontrol counts it: KiB per file, rounded up, and
# one per directory.
installed_size=$(find "${root}" -mindepth 1 -path "${root}/DEBIAN" -prune -o -printf '%y %s\n' |
  awk '$1 == "f" { n += int(($2 + 1023) / 1024); next } { n += 1 } END { print n }')
substitute "${deb_src}/control.in" >"${root}/DEBIAN/control"
chmod 0644 "${root}/DEBIAN/control"

find "${root}" -type d -exec chmod 0755 {} +
find "${root}" -exec touch -h --date="@${epoch}" {} +

mkdir -p "${out_dir}"
SOURCE_DATE_EPOCH=${epoch} dpkg-deb --root-owner-group --uniform-compression -Zxz -z6 --threads-max=1 \
  --build "${root}" "${deb}.tmp" >/dev/null
mv "${deb}.tmp" "${deb}"
(cd "${out_dir}" && sha256sum "$(basename "${deb}")" >"$(basename "${deb}").sha256")
cat "${deb}.sha256"
