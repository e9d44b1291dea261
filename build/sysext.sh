#!/usr/bin/env bash
# Builds the systemd-sysext image of the drop-in kubelet of one minor
# (UPSTREAM, see lib.sh) from its release tarball (make release), in the
# layout Flatcar's sysext-bakery uses (make sysext):
#
#   build/sysext.sh [OUTDIR]   OUTDIR/podadmission-kubelet-<upstream>+podadmission.<N>-x86-64.raw (+ .sha256)
#
# OUTDIR defaults to _output/sysext. A squashfs of /usr only, as a sysext
# must be: the files of the tarball's install.sh --list under usr/ where
# the .deb puts them (usr/bin/kubelet, usr/bin/podadmctl, the plugins in
# usr/libexec/kubernetes/pod-admission, the inactive systemd drop-in in
# usr/share/podadmission-kubelet), the sample configuration under
# usr/share/podadmission-kubelet/pod-admission/ (a sysext cannot ship
# /etc), LICENSE, and usr/lib/extension-release.d/extension-release.NAME
# with ID, SYSEXT_LEVEL and ARCHITECTURE as the bakery writes them
# (SYSEXT_ID=flatcar selects the OS, _any for every OS). Install it as
# /etc/extensions/podadmission-kubelet.raw (the extension-release name is
# the image name). Reproducible: root owners, every time
# SOURCE_DATE_EPOCH, one compressor thread.

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

out_dir=${1:-${OUTPUT_DIR}/sysext}
version=$("${REPO_ROOT}/build/version.sh" version)
name=kubelet-${version}-linux-amd64
tarball=${OUTPUT_DIR}/release/${name}.tar.gz
extension=podadmission-kubelet
raw=${extension}-${version}-x86-64.raw
os_id=${SYSEXT_ID:-flatcar}

[[ -f "${tarball}" ]] || die "${tarball} does not exist; run make release first"
(cd "$(dirname "${tarball}")" && sha256sum --check --quiet --strict "${name}.tar.gz.sha256") ||
  die "${tarball} does not match ${tarball}.sha256; run make release again"
[[ "${os_id}" =~ ^[a-z0-9._-]+$ ]] || die "SYSEXT_ID=${os_id}: an os-release ID (flatcar, _any, ...)"
command -v mksquashfs >/dev/null || die "mksquashfs is missing (Debian: apt-get install squashfs-tools)"

work=$(mktemp -d)
trap 'rm -rf "${work}"' EXIT
tar -xzf "${tarball}" -C "${work}"
release=${work}/${name}
# The tarball's time (SOURCE_DATE_EPOCH when it was made), not HEAD's: the
# same tarball gives the same bytes whatever was committed since.
epoch=$(stat -c %Y "${release}/LICENSE")
root=${work}/root

log "building ${out_dir#"${REPO_ROOT}"/}/${raw} from ${tarball#"${REPO_ROOT}"/}"
while read -r src dest perm; do
  case "${dest}" in
  usr/*) ;;
  etc/kubernetes/pod-admission/*) dest=usr/share/podadmission-kubelet/pod-admission/${dest##*/} ;;
  *) die "install.sh --list puts ${src} at ${dest}, outside /usr: a sysext cannot ship it" ;;
  esac
  install -D -m "${perm}" "${release}/${src}" "${root}/${dest}"
done < <(bash "${release}/install.sh" --list)
install -D -m 0644 "${release}/LICENSE" "${root}/usr/share/licenses/${extension}/LICENSE"
release_file=${root}/usr/lib/extension-release.d/extension-release.${extension}
mkdir -p "$(dirname "${release_file}")"
{
  echo "ID=${os_id}"
  [[ "${os_id}" == _any ]] || echo "SYSEXT_LEVEL=1.0"
  echo "ARCHITECTURE=x86-64"
  echo "SYSEXT_VERSION_ID=$(tr + _ <<<"${version#v}")"
} >"${release_file}"
chmod 0644 "${release_file}"
find "${root}" -type d -exec chmod 0755 {} +

mkdir -p "${out_dir}"
rm -f "${out_dir}/${raw}.tmp"
env -u SOURCE_DATE_EPOCH mksquashfs "${root}" "${out_dir}/${raw}.tmp" -quiet -no-progress -noappend \
  -all-root -no-xattrs -processors 1 -mkfs-time "${epoch}" -all-time "${epoch}" >&2
mv "${out_dir}/${raw}.tmp" "${out_dir}/${raw}"
(cd "${out_dir}" && sha256sum "${raw}" >"${raw}.sha256")
cat "${out_dir}/${raw}.sha256"
