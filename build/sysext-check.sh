#!/usr/bin/env bash
# The proof that the systemd-sysext image is what systemd-sysext and the
# bakery's layout expect (make test-images, part of make test-packages):
#
#   build/sysext-check.sh SYSEXT_DIR
#
# A second build has the same bytes; unsquashfs reads it as a squashfs of
# /usr only, every file root-owned with the mode and bytes the tarball's
# install.sh --list gives it; extension-release.podadmission-kubelet has
# ID, SYSEXT_LEVEL and ARCHITECTURE; the kubelet in it runs --version and
# podadmctl in it validates the sample with the plugin in it; where
# systemd-dissect is installed (Debian: systemd-container), it lists the
# same files and reads the extension-release.

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

sysext_dir=$(cd "${1:?usage: $0 SYSEXT_DIR}" && pwd)
version=$("${REPO_ROOT}/build/version.sh" version)
raw=${sysext_dir}/podadmission-kubelet-${version}-x86-64.raw
name=kubelet-${version}-linux-amd64
tarball=${OUTPUT_DIR}/release/${name}.tar.gz
[[ -f "${raw}" ]] || die "${raw} does not exist; run make sysext first"
for tool in unsquashfs mksquashfs; do
  command -v "${tool}" >/dev/null || die "${tool} is missing (Debian: squashfs-tools)"
done

checks=0
ok() {
  checks=$((checks + 1))
  echo "ok ${checks}: $*"
}
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
sha() { sha256sum "$1" | cut -d' ' -f1; }

work=$(mktemp -d)
cd "${work}" || exit 1
trap 'rm -rf "${work}"' EXIT

echo ">>> the sysext image ${raw##*/}"
(umask 0077 && "${REPO_ROOT}/build/sysext.sh" "${work}/rebuild" >/dev/null)
[[ "$(sha "${work}/rebuild/${raw##*/}")" == "$(sha "${raw}")" ]] || fail "a second build of ${raw##*/} differs"
ok "a second build has the same bytes: sha256 $(sha "${raw}"), $(stat -c %s "${raw}") bytes"

listing=$(unsquashfs -lln -d '' "${raw}") || fail "unsquashfs cannot read ${raw}"
bad=$(awk '$2 != "0/0"' <<<"${listing}")
[[ -z "${bad}" ]] || fail "entries not owned by root:"$'\n'"${bad}"
tops=$(unsquashfs -l -d '' "${raw}" | awk -F/ 'NF > 1 && $2 != "" { print $2 }' | sort -u | paste -sd' ')
[[ "${tops}" == usr ]] || fail "the image holds ${tops}, want usr only"
ok "a squashfs of /usr only, every entry owned by 0/0 ($(wc -l <<<"${listing}") entries)"

unsquashfs -q -n -d "${work}/root" "${raw}" >/dev/null
tar -xzf "${tarball}" -C "${work}"
release=${work}/${name}
while read -r src dest perm; do
  [[ "${dest}" != etc/kubernetes/pod-admission/* ]] || dest=usr/share/podadmission-kubelet/pod-admission/${dest##*/}
  [[ -f "${work}/root/${dest}" ]] || fail "/${dest} is not in the image"
  cmp -s "${release}/${src}" "${work}/root/${dest}" || fail "/${dest} differs from the tarball's ${src}"
  [[ "$(stat -c %a "${work}/root/${dest}")" == "${perm#0}" ]] || fail "/${dest} has mode $(stat -c %a "${work}/root/${dest}"), want ${perm}"
done < <(bash "${release}/install.sh" --list)
ok "every file of install.sh --list is in it with its bytes and mode (the sample under usr/share/podadmission-kubelet/pod-admission)"

release_file=usr/lib/extension-release.d/extension-release.podadmission-kubelet
fields=$(cat "${work}/root/${release_file}") || fail "no ${release_file}"
for want in "ID=${SYSEXT_ID:-flatcar}" "SYSEXT_LEVEL=1.0" "ARCHITECTURE=x86-64"; do
  grep -qxF "${want}" <<<"${fields}" || fail "${release_file} has no ${want}:"$'\n'"${fields}"
done
ok "${release_file}: $(paste -sd' ' <<<"${fields}")"

out=$("${work}/root/usr/bin/kubelet" --version) || fail "the image's kubelet does not run"
[[ "${out}" == "Kubernetes ${version}" ]] || fail "the image's kubelet says ${out}, want Kubernetes ${version}"
# podadmctl's trust checks want root-owned directories from / down: run it
# in a chroot of the extracted image, with the sample enabled in its /etc.
mkdir -p "${work}/root/etc/kubernetes/pod-admission"
cp "${work}/root/usr/share/podadmission-kubelet/pod-admission/10-pod-security.yaml.sample" "${work}/root/etc/kubernetes/pod-admission/10-pod-security.yaml"
chmod 0755 "${work}/root"
out=$(chroot "${work}/root" /usr/bin/podadmctl validate /etc/kubernetes/pod-admission --bin-dir /usr/libexec/kubernetes/pod-admission 2>&1) ||
  fail "the image's podadmctl does not validate its sample with its plugin:"$'\n'"${out}"
ok "its kubelet runs: $("${work}/root/usr/bin/kubelet" --version); its podadmctl validates its sample with its plugin: ${out}"

if command -v systemd-dissect >/dev/null; then
  out=$(systemd-dissect --list "${raw}" 2>&1) || fail "systemd-dissect --list ${raw} failed:"$'\n'"${out}"
  grep -q 'usr/bin/kubelet' <<<"${out}" || fail "systemd-dissect --list does not list usr/bin/kubelet:"$'\n'"${out}"
  ok "systemd-dissect --list reads it"
else
  echo "    (systemd-dissect is not installed here: Debian 12 ships it in systemd-container, which upgrades systemd; unsquashfs did the checks)"
fi
echo ">>> sysext checks passed: ${checks} checks"
