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
# podadmctl in it validates the sample with the plugin in it; systemd's
# systemd-dissect (Debian: systemd-container) takes it for a system
# extension under the name /etc/extensions gives it, reads the same
# extension-release and the same kubelet out of it.

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
command -v systemd-dissect >/dev/null || die "systemd-dissect is missing (Debian: systemd-container, of the installed systemd's version)"
command -v python3 >/dev/null || die "python3 is missing"

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

# systemd's own reading of it, as systemd-sysext does on a node: under the
# name /etc/extensions gives it (podadmission-kubelet.raw, here a link to
# the image as Flatcar links its sysexts) it is an extension for the
# system with its extension-release; under its file name it is not (the
# name must match the extension-release file's). --copy-from mounts it
# through a loop device and reads the kubelet out of it.
named=${work}/extensions/podadmission-kubelet.raw
mkdir -p "${work}/extensions"
ln -s "${raw}" "${named}"
dissect_json() {
  systemd-dissect --json=short "$1" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print("system" if d.get("useSystemExtension") else "not-system")
print("\n".join(d.get("extensionRelease") or []))'
}
out=$(dissect_json "${named}") || fail "systemd-dissect cannot read ${named}"
[[ "$(head -n1 <<<"${out}")" == system ]] || fail "systemd-dissect does not take ${named} for a system extension:"$'\n'"${out}"
[[ "$(tail -n +2 <<<"${out}")" == "${fields}" ]] || fail "systemd-dissect reads the extension-release"$'\n'"$(tail -n +2 <<<"${out}")"$'\n'"want"$'\n'"${fields}"
out=$(dissect_json "${raw}") || fail "systemd-dissect cannot read ${raw}"
[[ "$(head -n1 <<<"${out}")" == not-system ]] || fail "systemd-dissect takes ${raw##*/} for a system extension under its file name: the README's rename is wrong"
systemd-dissect --copy-from "${named}" /usr/bin/kubelet "${work}/dissected-kubelet" ||
  fail "systemd-dissect --copy-from ${named} /usr/bin/kubelet failed"
cmp -s "${work}/dissected-kubelet" "${release}/kubelet" || fail "the kubelet systemd-dissect reads from the image differs from the tarball's"
ok "$(systemd-dissect --version | head -n1): a system extension as podadmission-kubelet.raw (not under its file name), the same extension-release, and its /usr/bin/kubelet is the tarball's"
echo ">>> sysext checks passed: ${checks} checks"
