#!/usr/bin/env bash
# Builds the RPM of the drop-in kubelet from the release tarball (make
# release):
#
#   build/rpm/build.sh [OUTDIR]   OUTDIR/podadmission-kubelet-<upstream>+podadmission.<N>-1.x86_64.rpm
#
# OUTDIR defaults to _output/rpm. The files are the tarball's install.sh
# --list, as in the .deb, but the kubelet goes to
# /usr/libexec/podadmission-kubelet/kubelet: the kubelet package owns
# /usr/bin/kubelet, and rpm has no diversions, so the scriptlets
# (build/rpm/*.sh on build/pkgscripts/common.sh) link /usr/bin/kubelet to
# it and keep the stock kubelet aside (see build/rpm/common.sh).
# Reproducible: build time, file mtimes and the changelog date are
# SOURCE_DATE_EPOCH, the build host is fixed, owners are root, and the
# payload is single-threaded xz (every rpm since RHEL 7 reads it) at level
# 2, which keeps the build short on a loaded 2-core machine.

# shellcheck source=build/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
# shellcheck source=build/pkgscripts/render.sh
source "${REPO_ROOT}/build/pkgscripts/render.sh"

out_dir=${1:-${OUTPUT_DIR}/rpm}
rpm_src=${REPO_ROOT}/build/rpm
version=$("${REPO_ROOT}/build/version.sh" version)
rpm_version=${version#v}
minor=$(release_minor "${UPSTREAM_VERSION}")
name=kubelet-${version}-linux-amd64
tarball=${OUTPUT_DIR}/release/${name}.tar.gz
rpm_file=podadmission-kubelet-${rpm_version}-1.x86_64.rpm

[[ -f "${tarball}" ]] || die "${tarball} does not exist; run make release first"
(cd "$(dirname "${tarball}")" && sha256sum --check --quiet --strict "${name}.tar.gz.sha256") ||
  die "${tarball} does not match ${tarball}.sha256; run make release again"
command -v rpmbuild >/dev/null || die "rpmbuild is missing (Debian: apt-get install rpm)"

work=$(mktemp -d)
trap 'rm -rf "${work}"' EXIT
tar -xzf "${tarball}" -C "${work}"
release=${work}/${name}
# The tarball's time (SOURCE_DATE_EPOCH when it was made), not HEAD's: the
# same tarball gives the same bytes whatever was committed since.
epoch=$(stat -c %Y "${release}/LICENSE")

log "building ${out_dir#"${REPO_ROOT}"/}/${rpm_file} from ${tarball#"${REPO_ROOT}"/}"
# %install copies the tarball's files; %files lists them, the directories
# the package creates, and the kept stock kubelet as a %ghost (rpm -qf names
# this package for it; it is never in the payload).
install_lines=() file_lines=()
declare -A dirs=()
while read -r src dest perm; do
  [[ "${dest}" != usr/bin/kubelet ]] || dest=usr/libexec/podadmission-kubelet/kubelet
  install_lines+=("install -D -m ${perm} '${release}/${src}' %{buildroot}/${dest}")
  if [[ "${dest}" == etc/* ]]; then
    file_lines+=("%config(noreplace) %attr(${perm},root,root) /${dest}")
  else
    file_lines+=("%attr(${perm},root,root) /${dest}")
  fi
  d=$(dirname "${dest}")
  while [[ "${d}" != . ]]; do
    dirs[${d}]=1
    d=$(dirname "${d}")
  done
done < <(bash "${release}/install.sh" --list)
install_lines+=("install -D -m 0644 '${release}/LICENSE' %{buildroot}/usr/share/licenses/podadmission-kubelet/LICENSE")
file_lines+=("%license %attr(0644,root,root) /usr/share/licenses/podadmission-kubelet/LICENSE")
dirs[usr/share/licenses/podadmission-kubelet]=1
file_lines+=("%ghost %attr(0755,root,root) /usr/libexec/podadmission-kubelet/kubelet.stock")
# Only the directories that are the package's own, not the system's.
for d in "${!dirs[@]}"; do
  case "${d}" in
  usr | usr/bin | usr/libexec | usr/share | usr/share/licenses | etc | etc/systemd | etc/systemd/system | usr/lib | usr/lib/systemd | usr/lib/systemd/system) ;;
  *) file_lines+=("%dir %attr(0755,root,root) /${d}") ;;
  esac
done

# render PLACEHOLDER LINES...: the lines, with every % doubled for rpm's
# macro expansion when they are shell code.
script() {
  render_script "${rpm_src}/$1.sh" rpm/dnf | sed -e "/^@RPM_COMMON@\$/{r ${rpm_src}/common.sh" -e 'd}' | sed 's/%/%%/g'
}
PKG_MINOR=${minor} PKG_VERSION=${rpm_version}
spec=${work}/podadmission-kubelet.spec
{
  while IFS= read -r line; do
    case "${line}" in
    "@INSTALL@") printf '%s\n' "${install_lines[@]}" ;;
    "@FILES@") printf '%s\n' "${file_lines[@]}" | LC_ALL=C sort ;;
    "@SCRIPT "*"@")
      s=${line#@SCRIPT }
      script "${s%@}"
      ;;
    *)
      sed -e "s/@VERSION@/${rpm_version}/g" -e "s/@MINOR@/${minor}/g" -e "s/@UPSTREAM@/${UPSTREAM_VERSION#v}/g" \
        -e "s/@UPSTREAM_V@/${UPSTREAM_VERSION}/g" -e "s/@SERIES@/${MINOR}/g" -e "s/@SERIES_VERSION@/${SERIES_VERSION}/g" \
        -e "s/@DATE@/$(LC_ALL=C date -u --date="@${epoch}" +'%a %b %d %Y')/g" <<<"${line}"
      ;;
    esac
  done <"${rpm_src}/podadmission-kubelet.spec.in"
} >"${spec}"

mkdir -p "${out_dir}"
# No debuginfo, no build-id links, no brp scripts: the binaries are
# upstream's static, stripped Go builds, packaged as they are.
SOURCE_DATE_EPOCH=${epoch} rpmbuild -bb --quiet \
  --define "_topdir ${work}/rpmbuild" \
  --define "_rpmdir ${work}/out" \
  --define "_build_name_fmt %%{NAME}-%%{VERSION}-%%{RELEASE}.%%{ARCH}.rpm" \
  --define "_buildhost podadmission.invalid" \
  --define "use_source_date_epoch_as_buildtime 1" \
  --define "clamp_mtime_to_source_date_epoch 1" \
  --define "source_date_epoch_from_changelog 0" \
  --define "_use_weak_usergroup_deps 1" \
  --define "_binary_payload w2.xzdio" \
  --define "_binary_filedigest_algorithm 8" \
  --define "debug_package %{nil}" \
  --define "_build_id_links none" \
  --define "__os_install_post %{nil}" \
  --define "_target_os linux" \
  --target x86_64-linux \
  "${spec}" >&2
mv "${work}/out/${rpm_file}" "${out_dir}/${rpm_file}.tmp"
mv "${out_dir}/${rpm_file}.tmp" "${out_dir}/${rpm_file}"
(cd "${out_dir}" && sha256sum "${rpm_file}" >"${rpm_file}.sha256")
cat "${out_dir}/${rpm_file}.sha256"
