#!/usr/bin/env bash
# The proof that the RPM goes on a node and comes off it cleanly (make
# test-packages; needs root, rpm, rpmlint, shellcheck and busybox-static):
#
#   build/rpm/test-cycle.sh RPM_DIR
#
#   1. the .rpm: built again (another umask) it has the same bytes; rpmlint
#      reports no error (its warnings are listed); the rendered scriptlets
#      are shellcheck-clean;
#   2. in a scratch rpm root (rpm --root, scriptlets chrooted into it, a
#      base package of busybox providing /bin/sh and the tools they run):
#      over a stock kubelet of another minor it is refused with nothing
#      changed, forced it installs, and erase gives the stock kubelet back;
#   3. over a stock kubelet of its minor: installed, /usr/bin/kubelet links
#      to ours, the stock kubelet kept aside byte for byte, every file of
#      the package in place with its mode, podadmctl validate in %post (an
#      operator's broken file reported, the install not failed), the
#      kubelet package upgraded underneath (the new stock kubelet kept
#      aside, ours stays), the gate's link made and the GRPC daemon's unit
#      enabled; then rpm -e: the upgraded stock kubelet is back byte for
#      byte (rpm -V kubelet is clean), both links and every path of the
#      package gone, the operator's file kept;
#   4. with no stock kubelet: installed; a kubelet package installed later
#      is kept aside; erasing it keeps ours; erasing ours leaves the root
#      as it was.
#
# The stock kubelet is a stand-in (pkgs.k8s.io is not reachable here): a
# package named kubelet, version <upstream>-150500.1.1 as pkgs.k8s.io names
# them, whose /usr/bin/kubelet is a shell script printing
# "Kubernetes v<upstream>" for --version. Nothing on this machine outside
# the scratch root is touched, so no machine lock is needed.

# shellcheck source=build/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
# shellcheck source=build/pkgscripts/render.sh
source "${REPO_ROOT}/build/pkgscripts/render.sh"

rpm_dir=${1:?usage: $0 RPM_DIR}
rpm_dir=$(cd "${rpm_dir}" && pwd)
version=$("${REPO_ROOT}/build/version.sh" version)
rpm_version=${version#v}
rpm_file=${rpm_dir}/podadmission-kubelet-${rpm_version}-1.x86_64.rpm
name=kubelet-${version}-linux-amd64
tarball=${OUTPUT_DIR}/release/${name}.tar.gz
read -r major minor patch _ <<<"$(release_parts "${UPSTREAM_VERSION}")"
stock_version=${major}.${minor}.${patch}
upgraded_version=${major}.${minor}.$((patch + 1))
other_minor_version=${major}.$((minor + 1)).0

[[ $(id -u) -eq 0 ]] || die "the rpm cycles chroot into a scratch root: run as root"
[[ -f "${rpm_file}" ]] || die "${rpm_file} does not exist; run make rpm first"
[[ -f "${tarball}" ]] || die "${tarball} does not exist; run make release first"
for tool in rpm rpmbuild rpmlint shellcheck; do
  command -v "${tool}" >/dev/null || die "${tool} is missing"
done
[[ -x /bin/busybox ]] || die "/bin/busybox (Debian: busybox-static) is missing"

start=$(date +%s)
checks=0
ok() {
  checks=$((checks + 1))
  echo "ok ${checks}: $*"
}
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
expect_in() {
  grep -qF -- "$2" <<<"$1" || fail "$3: the output does not contain \"$2\"; it was:"$'\n'"$1"
}
expect_eq() {
  [[ "$1" == "$2" ]] || fail "$3: got \"$1\", want \"$2\""
}
sha() {
  sha256sum "$1" | cut -d' ' -f1
}

# Everything happens in a scratch directory, never in the clone or the
# working directory: the cycle runs the same wherever the clone lives.
work=$(mktemp -d)
cd "${work}" || exit 1
finish() {
  local rc=$?
  rm -rf "${work}"
  if [[ ${rc} -eq 0 ]]; then
    echo ">>> rpm cycles passed: ${checks} checks in $(($(date +%s) - start))s"
  else
    echo ">>> rpm cycles FAILED after ${checks} checks ($(($(date +%s) - start))s)" >&2
  fi
  exit "${rc}"
}
trap finish EXIT

tar -xzf "${tarball}" -C "${work}"
release=${work}/${name}
our_kubelet_sha=$(cut -d' ' -f1 "${release}/kubelet.sha256")

echo ">>> 1. the package: reproducible, rpmlint, shellcheck"
(umask 0077 && "${REPO_ROOT}/build/rpm/build.sh" "${work}/rebuild" >/dev/null)
expect_eq "$(sha "${work}/rebuild/${rpm_file##*/}")" "$(sha "${rpm_file}")" "a second build of ${rpm_file##*/} (umask 0077)"
ok "a second build has the same bytes: sha256 $(sha "${rpm_file}"), $(stat -c %s "${rpm_file}") bytes"

rc=0
lint_out=$(HOME=${work} rpmlint -r "${REPO_ROOT}/build/rpm/rpmlintrc" "${rpm_file}" 2>&1) || rc=$?
if [[ ${rc} -ne 0 ]] || grep -q ': E: ' <<<"${lint_out}"; then
  fail "rpmlint reports errors on ${rpm_file}:"$'\n'"${lint_out}"
fi
ok "rpmlint: no error; its warnings:"
grep -E ': W: |badness' <<<"${lint_out}" | sed 's/^/    /' || true

PKG_MINOR=${major}.${minor} PKG_VERSION=${rpm_version}
mkdir -p "${work}/scripts"
for s in pre post posttrans preun triggerin triggerpostun; do
  render_script "${REPO_ROOT}/build/rpm/${s}.sh" rpm/dnf |
    sed -e "/^@RPM_COMMON@\$/{r ${REPO_ROOT}/build/rpm/common.sh" -e 'd}' >"${work}/scripts/${s}"
done
# SC2317: each script carries the whole of build/pkgscripts/common.sh and
# calls only some of its functions; shellcheck takes the others as unreachable.
shellcheck -s sh -e SC2317 "${work}/scripts/"*
shellcheck -x -P "${REPO_ROOT}" "${REPO_ROOT}/build/rpm/build.sh" "${REPO_ROOT}/build/rpm/test-cycle.sh"
ok "shellcheck: the scriptlets, build.sh and test-cycle.sh are clean"

# rpmpkg NAME VERSION RELEASE DIR [DIRS]: an rpm of the files under DIR (as
# they are, root-owned), with autoreq/autoprov off but file provides; with
# DIRS=dirs it owns DIR's directories too, as a distribution's filesystem
# package owns the system's.
rpmpkg() {
  local pkg=$1 v=$2 r=$3 dir=$4 with_dirs=${5:-} spec=${work}/$1-$2.spec
  {
    echo "Name: ${pkg}"
    echo "Version: ${v}"
    echo "Release: ${r}"
    echo "Summary: stand-in ${pkg} for build/rpm/test-cycle.sh"
    echo "License: Apache-2.0"
    echo "BuildArch: x86_64"
    echo "AutoReqProv: no"
    echo "%description"
    echo "A stand-in for build/rpm/test-cycle.sh."
    echo "%install"
    echo "cp -a '${dir}/.' %{buildroot}/"
    echo "%files"
    (cd "${dir}" && find . -mindepth 1 \( -type f -o -type l \) -printf '/%P\n' | LC_ALL=C sort)
    if [[ "${with_dirs}" == dirs ]]; then
      (cd "${dir}" && find . -mindepth 1 -type d -printf '%%dir /%P\n' | LC_ALL=C sort)
    fi
  } >"${spec}"
  rpmbuild -bb --quiet --define "_topdir ${work}/rpmbuild" --define "_rpmdir ${work}/rpms" \
    --define "_build_name_fmt %%{NAME}-%%{VERSION}-%%{RELEASE}.%%{ARCH}.rpm" \
    --define "debug_package %{nil}" --define "__os_install_post %{nil}" --define "_build_id_links none" \
    --target x86_64-linux "${spec}" >/dev/null
  echo "${work}/rpms/${pkg}-${v}-${r}.x86_64.rpm"
}

# standin_kubelet VERSION: the stand-in kubelet package of VERSION.
standin_kubelet() {
  local v=$1 dir=${work}/standin-$1
  mkdir -p "${dir}/usr/bin"
  cat >"${dir}/usr/bin/kubelet" <<EOS
#!/bin/sh
# Stand-in for the stock kubelet v${v} (build/rpm/test-cycle.sh): --version only.
if [ "\$1" = --version ]; then echo "Kubernetes v${v}"; exit 0; fi
echo "stand-in kubelet v${v}: only --version" >&2
exit 1
EOS
  chmod 0755 "${dir}/usr/bin/kubelet"
  rpmpkg kubelet "${v}" 150500.1.1 "${dir}"
}

# The base of the scratch root: busybox as /bin/sh and every tool the
# scriptlets run, and the system directories a distribution's filesystem
# package owns (podadmission-kubelet owns only its own).
base_dir=${work}/base
mkdir -p "${base_dir}/bin" "${base_dir}/usr/bin" "${base_dir}/etc/systemd/system" \
  "${base_dir}/usr/libexec" "${base_dir}/usr/share/licenses" "${base_dir}/usr/lib/systemd/system"
cp /bin/busybox "${base_dir}/bin/busybox"
for applet in sh sed head timeout readlink ln mv rm cp cat printf echo mkdir; do
  ln -s busybox "${base_dir}/bin/${applet}"
done
base_rpm=$(rpmpkg standin-base 1 1 "${base_dir}" dirs)

root=${work}/root
# rpm_root ARGS...: rpm on the scratch root, with its database where an
# RPM distribution keeps it (Debian's rpm defaults to ~/.rpmdb).
rpm_root() {
  rpm --root "${root}" --dbpath /var/lib/rpm "$@"
}
# tree: every path of the root but rpm's database, with type, mode, owner,
# size and link target, and every file's hash.
tree() {
  (
    cd "${root}" || exit 1
    find . -path ./var/lib/rpm -prune -o -path ./usr/lib/sysimage -prune -o -printf '%p %y %m %U:%G %s %l\n' | LC_ALL=C sort
    find . -path ./var/lib/rpm -prune -o -path ./usr/lib/sysimage -prune -o -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum
  )
}
new_root() {
  rm -rf "${root}"
  mkdir -p "${root}/dev" "${root}/tmp" "${root}/var/tmp"
  : >"${root}/dev/null"
  rpm_root --initdb
  rpm_root -i "${base_rpm}"
}
in_root() {
  chroot "${root}" "$@"
}
# root_sha PATH: the sha256 of PATH as the root sees it (its links resolved
# in the root, not on this machine).
root_sha() {
  in_root /bin/busybox sha256sum "$1" | cut -d' ' -f1
}

echo ">>> 2. over a stock kubelet of another minor (v${other_minor_version})"
new_root
other_rpm=$(standin_kubelet "${other_minor_version}")
rpm_root -i "${other_rpm}"
before=$(tree)
rc=0
out=$(rpm_root -i "${rpm_file}" 2>&1) || rc=$?
[[ ${rc} -ne 0 ]] || fail "rpm -i over a v${other_minor_version} kubelet succeeded; want a refusal. Output:"$'\n'"${out}"
expect_in "${out}" "podadmission-kubelet: refusing to install: the stock kubelet /usr/bin/kubelet is a v${major}.$((minor + 1)) kubelet" "the refusal"
expect_in "${out}" "but this package is the v${major}.${minor} kubelet ${rpm_version}" "the refusal"
expect_in "${out}" "set PODADMISSION_FORCE_MINOR=1 for rpm/dnf or create" "the refusal says how to force it"
rpm_root -q podadmission-kubelet >/dev/null 2>&1 && fail "podadmission-kubelet is installed after the refusal"
expect_eq "$(tree)" "${before}" "the root after the refusal"
ok "refused over a v${major}.$((minor + 1)) kubelet, nothing changed:"
grep -A5 'refusing to install' <<<"${out}" | sed 's/^/    /'

out=$(PODADMISSION_FORCE_MINOR=1 rpm_root -i "${rpm_file}" 2>&1) || fail "a forced install failed:"$'\n'"${out}"
expect_in "${out}" "installing anyway (forced)" "the forced install"
expect_eq "$(root_sha /usr/bin/kubelet)" "${our_kubelet_sha}" "/usr/bin/kubelet after the forced install"
ok "PODADMISSION_FORCE_MINOR=1 installs it anyway"
out=$(rpm_root -e podadmission-kubelet 2>&1) || fail "rpm -e failed:"$'\n'"${out}"
expect_eq "$(tree)" "${before}" "the root after rpm -e"
ok "rpm -e: the v${other_minor_version} stock kubelet is back byte for byte, the root as before"

echo ">>> 3. over a stock kubelet v${stock_version}: install, upgrade underneath, erase"
new_root
rpm_root -i "$(standin_kubelet "${stock_version}")"
stock_sha=$(sha "${root}/usr/bin/kubelet")
before=$(tree)
out=$(rpm_root -i "${rpm_file}" 2>&1) || fail "rpm -i failed:"$'\n'"${out}"
expect_in "${out}" "the stock kubelet /usr/bin/kubelet is v${major}.${minor}" "%pre"
expect_in "${out}" "valid: 0 plugins in 0 files" "%post runs podadmctl validate"
expect_in "${out}" "keeping the stock kubelet /usr/bin/kubelet as /usr/libexec/podadmission-kubelet/kubelet.stock" "%posttrans"
expect_in "${out}" "the PodAdmissionPlugin gate is off; to turn it on" "%posttrans says the gate is off"
expect_in "${out}" "nothing was restarted" "%posttrans"
ok "rpm -i: minor checked, configuration validated, nothing restarted"
expect_eq "$(readlink "${root}/usr/bin/kubelet")" /usr/libexec/podadmission-kubelet/kubelet "/usr/bin/kubelet"
expect_eq "$(sha "${root}/usr/libexec/podadmission-kubelet/kubelet.stock")" "${stock_sha}" "the stock kubelet kept aside"
expect_eq "$(root_sha /usr/bin/kubelet)" "${our_kubelet_sha}" "/usr/bin/kubelet, resolved in the root"
expect_eq "$(in_root /usr/bin/kubelet --version)" "Kubernetes ${version}" "/usr/bin/kubelet --version in the root"
expect_eq "$(rpm_root -qf /usr/libexec/podadmission-kubelet/kubelet.stock)" "podadmission-kubelet-${rpm_version}-1.x86_64" "rpm -qf of the kept kubelet"
ok "/usr/bin/kubelet -> /usr/libexec/podadmission-kubelet/kubelet ($(in_root /usr/bin/kubelet --version)); the stock kubelet kept aside byte for byte"

# Every file of the package, as rpm lists it, against the tarball.
while read -r src dest perm; do
  [[ "${dest}" != usr/bin/kubelet ]] || dest=usr/libexec/podadmission-kubelet/kubelet
  [[ -f "${root}/${dest}" ]] || fail "/${dest} is not installed"
  cmp -s "${release}/${src}" "${root}/${dest}" || fail "/${dest} differs from the tarball's ${src}"
  expect_eq "$(stat -c '%a %U %G' "${root}/${dest}")" "${perm#0} root root" "/${dest}"
done < <(bash "${release}/install.sh" --list)
expect_eq "$(stat -c '%F %a %U %G' "${root}/etc/kubernetes/pod-admission")" "directory 755 root root" "/etc/kubernetes/pod-admission"
expect_in "$(rpm_root -qc podadmission-kubelet)" /etc/kubernetes/pod-admission/10-pod-security.yaml.sample "the config files"
expect_in "$(rpm_root -qc podadmission-kubelet)" /etc/kubernetes/pod-admission/10-pod-security-grpc.yaml.sample "the config files"
[[ ! -e "${root}/etc/systemd/system/kubelet.service.d/10-podadmission.conf" ]] || fail "the drop-in is active after install"
rpm_root -V podadmission-kubelet || fail "rpm -V podadmission-kubelet reports changed files"
ok "every file of install.sh --list in place with its bytes and mode, the sample a config file, the drop-in inactive, rpm -V clean"

install -m 0644 /dev/stdin "${root}/etc/kubernetes/pod-admission/30-typo.yaml" <<'EOS'
apiVersion: podadmission.kubelet.config.k8s.io/v1alpha1
kind: PodAdmissionConfiguration
plugins:
- name: pod-security-plugin
  type: Exec
  timeot: 5s
EOS
out=$(rpm_root -U --replacepkgs "${rpm_file}" 2>&1) || fail "a reinstall with a broken configuration failed; %post must only report it:"$'\n'"${out}"
expect_in "${out}" '/etc/kubernetes/pod-admission/30-typo.yaml: strict decoding error: unknown field "plugins[0].timeot"' "%post names the broken file and field"
expect_in "${out}" "warning: fix the errors above in /etc/kubernetes/pod-admission" "%post says what to fix"
expect_eq "$(readlink "${root}/usr/bin/kubelet")" /usr/libexec/podadmission-kubelet/kubelet "/usr/bin/kubelet after the reinstall"
expect_eq "$(sha "${root}/usr/libexec/podadmission-kubelet/kubelet.stock")" "${stock_sha}" "the kept kubelet after the reinstall"
ok "a reinstall (rpm -U --replacepkgs) reports an operator's broken file with its field, fails nothing and keeps the stock kubelet:"
grep 'timeot\|fix the errors' <<<"${out}" | sed 's/^/    /'
rm "${root}/etc/kubernetes/pod-admission/30-typo.yaml"
install -m 0644 "${root}/etc/kubernetes/pod-admission/10-pod-security.yaml.sample" "${root}/etc/kubernetes/pod-admission/10-pod-security.yaml"
out=$(in_root /usr/bin/podadmctl validate /etc/kubernetes/pod-admission --bin-dir /usr/libexec/kubernetes/pod-admission) ||
  fail "the installed sample does not validate with the installed plugin:"$'\n'"${out}"
expect_in "${out}" "valid: 1 plugin in 1 file" "podadmctl validate of the enabled sample"
ok "the sample, copied to 10-pod-security.yaml, validates with the installed plugin"

out=$(rpm_root -U "$(standin_kubelet "${upgraded_version}")" 2>&1) || fail "upgrading the kubelet package underneath failed:"$'\n'"${out}"
upgraded_sha=$(sha "${work}/standin-${upgraded_version}/usr/bin/kubelet")
expect_eq "$(readlink "${root}/usr/bin/kubelet")" /usr/libexec/podadmission-kubelet/kubelet "/usr/bin/kubelet after the kubelet package upgrade"
expect_eq "$(sha "${root}/usr/libexec/podadmission-kubelet/kubelet.stock")" "${upgraded_sha}" "the kept kubelet after the kubelet package upgrade"
expect_in "${out}" "the stock kubelet kept as /usr/libexec/podadmission-kubelet/kubelet.stock is now Kubernetes v${upgraded_version}" "the file trigger"
ok "the kubelet package upgrades to ${upgraded_version}-150500.1.1 underneath: the file trigger keeps it aside, /usr/bin/kubelet stays ours"

mkdir -p "${root}/etc/systemd/system/kubelet.service.d"
ln -s /usr/share/podadmission-kubelet/10-podadmission.conf "${root}/etc/systemd/system/kubelet.service.d/10-podadmission.conf"
# The operator enabled the GRPC daemon, as systemctl enable links it.
wants=${root}/etc/systemd/system/multi-user.target.wants
mkdir -p "${wants}"
ln -s /usr/lib/systemd/system/pod-security-plugin-grpc.service "${wants}/pod-security-plugin-grpc.service"
mapfile -t package_files < <(rpm_root -ql podadmission-kubelet)
out=$(rpm_root -e podadmission-kubelet 2>&1) || fail "rpm -e failed:"$'\n'"${out}"
expect_in "${out}" "removing /etc/systemd/system/kubelet.service.d/10-podadmission.conf" "%preun removes the drop-in link"
expect_in "${out}" "removing /etc/systemd/system/multi-user.target.wants/pod-security-plugin-grpc.service, which enabled pod-security-plugin-grpc.service" "%preun disables the daemon"
[[ ! -L "${wants}/pod-security-plugin-grpc.service" ]] || fail "rpm -e left the link that enabled pod-security-plugin-grpc.service"
rmdir "${wants}"
expect_in "${out}" "/usr/bin/kubelet is the stock kubelet again" "%preun"
[[ -f "${root}/usr/bin/kubelet" && ! -L "${root}/usr/bin/kubelet" ]] || fail "/usr/bin/kubelet is not a file after rpm -e"
expect_eq "$(sha "${root}/usr/bin/kubelet")" "${upgraded_sha}" "/usr/bin/kubelet after rpm -e"
rpm_root -V kubelet || fail "rpm -V kubelet reports changes after rpm -e: the stock kubelet is not its package's"
ok "rpm -e: /usr/bin/kubelet is the upgraded stock kubelet byte for byte (sha256 ${upgraded_sha}); rpm -V kubelet is clean"
left=()
for p in "${package_files[@]}"; do
  case "${p}" in
  /etc/kubernetes | /etc/kubernetes/pod-admission) ;; # the operator's file is in it
  *) [[ ! (-e "${root}${p}" || -L "${root}${p}") ]] || left+=("${p}") ;;
  esac
done
[[ ${#left[@]} -eq 0 ]] || fail "rpm -e left the package's files: ${left[*]}"
expect_eq "$(cd "${root}" && find etc/kubernetes | LC_ALL=C sort | tr '\n' ' ')" \
  "etc/kubernetes etc/kubernetes/pod-admission etc/kubernetes/pod-admission/10-pod-security.yaml " "/etc/kubernetes after rpm -e"
rm -r "${root}/etc/kubernetes"
rmdir "${root}/etc/systemd/system/kubelet.service.d"
expect_eq "$(tree | grep -v '^\./usr/bin/kubelet \|  \./usr/bin/kubelet$')" "$(grep -v '^\./usr/bin/kubelet \|  \./usr/bin/kubelet$' <<<"${before}")" "the root after rpm -e, but the upgraded kubelet"
ok "nothing of the ${#package_files[@]} paths of rpm -ql is left; the drop-in link and the daemon's enablement are gone; the operator's file is kept"

echo ">>> 4. with no stock kubelet; a kubelet package installed and erased under it"
new_root
before=$(tree)
out=$(rpm_root -i "${rpm_file}" 2>&1) || fail "rpm -i with no kubelet failed:"$'\n'"${out}"
expect_in "${out}" "there is no stock kubelet at /usr/bin/kubelet" "%pre with no kubelet"
expect_eq "$(readlink "${root}/usr/bin/kubelet")" /usr/libexec/podadmission-kubelet/kubelet "/usr/bin/kubelet with no stock kubelet"
[[ ! -e "${root}/usr/libexec/podadmission-kubelet/kubelet.stock" ]] || fail "a stock kubelet is kept where there was none"
out=$(rpm_root -i "$(standin_kubelet "${stock_version}")" 2>&1) || fail "installing the kubelet package under ours failed:"$'\n'"${out}"
expect_eq "$(readlink "${root}/usr/bin/kubelet")" /usr/libexec/podadmission-kubelet/kubelet "/usr/bin/kubelet after the kubelet package"
expect_eq "$(sha "${root}/usr/libexec/podadmission-kubelet/kubelet.stock")" "${stock_sha}" "the kubelet package's kubelet, kept aside"
ok "a kubelet package installed after ours is kept aside; /usr/bin/kubelet stays ours"
out=$(rpm_root -e kubelet 2>&1) || fail "erasing the kubelet package under ours failed:"$'\n'"${out}"
expect_eq "$(readlink "${root}/usr/bin/kubelet")" /usr/libexec/podadmission-kubelet/kubelet "/usr/bin/kubelet after erasing the kubelet package"
[[ ! -e "${root}/usr/libexec/podadmission-kubelet/kubelet.stock" ]] || fail "the erased kubelet package's kubelet is still kept aside"
ok "erasing the kubelet package keeps ours at /usr/bin/kubelet and drops its kubelet kept aside"
out=$(rpm_root -e podadmission-kubelet 2>&1) || fail "rpm -e failed:"$'\n'"${out}"
expect_in "${out}" "there was no stock kubelet to put back" "%preun with no stock kubelet"
expect_eq "$(tree)" "${before}" "the root after rpm -e"
ok "rpm -e with no stock kubelet: no /usr/bin/kubelet, the root exactly as before"
