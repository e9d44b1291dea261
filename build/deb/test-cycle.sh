#!/usr/bin/env bash
# The proof that the node-image packages go on a node and come off it
# cleanly (make test-packages; needs root, dpkg and the node e2e binaries):
#
#   build/deb/test-cycle.sh DEB_DIR
#
#   1. the .deb: built again (another umask) it has the same bytes; lintian
#      reports no error; its maintainer scripts, install.sh and these
#      scripts are shellcheck-clean;
#   2. dpkg over a stock kubelet of another minor: refused with a clear
#      message and nothing changed; forced, it installs, the trigger warns
#      when the kubelet package upgrades underneath, dpkg -r restores the
#      stock kubelet and keeps the conffile, purge removes it; with no
#      kubelet at all it installs and purges;
#   3. dpkg over a stock kubelet of the package's minor: installed with the
#      diversion, ours at /usr/bin/kubelet, podadmctl validate in postinst
#      (an operator's broken file reported, the install not failed), the
#      kubelet package upgraded underneath, the gate turned on, the node e2e
#      suite's TestPodSecurityPlugin run with the installed kubelet and
#      plugin; the GRPC daemon started as its unit starts it and its sample
#      enabled in place of the Exec plugin's, podadmctl check sending pods
#      to it; then, the daemon enabled, dpkg --purge: the stock kubelet is
#      back byte for byte, the daemon's enablement gone, nothing of the
#      package is left, the operator's configuration kept;
#   4. install.sh into a scratch --prefix over the same stock kubelet:
#      --dry-run changes nothing, a tampered file is refused, install puts
#      the same files as the package, a second install changes nothing and
#      keeps the original kubelet, --rollback restores the prefix exactly
#      and is idempotent, a kubelet of another minor is refused unless
#      --force-minor, the operator's configuration and the gate link are
#      handled as documented (a rollback also removes the daemon's
#      enablement).
#
# The stock kubelet is a stand-in: no upstream kubelet package can be
# fetched here, so a package named kubelet (version <upstream>-1.1, as
# pkgs.k8s.io names them) ships a /usr/bin/kubelet shell script that prints
# "Kubernetes v<upstream>" for --version, which is all the package's scripts
# run of it.
#
# This machine is left as it was found: the script refuses to start if any
# path it installs exists, holds the node e2e machine lock whenever the
# package is being installed or removed (a concurrent e2e run's teardown
# removes /etc/kubernetes and /usr/libexec/kubernetes if they were not there
# when it started), and its EXIT trap purges and removes whatever is left.
# The system containerd is not touched (the e2e suite runs its own).
#
# Environment: BIN_DIR (default _output/bin) holds the binaries the e2e
# suite runs, E2E_RUNTIME (containerd), E2E_ARTIFACTS (_output/e2e) and
# CONTAINERD_BIN (build/containerd.sh dir: containerd 2.x) as for make
# test-e2e-node.

# shellcheck source=build/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
# shellcheck source=build/machine-lock.sh
source "${REPO_ROOT}/build/machine-lock.sh"

deb_dir=${1:?usage: $0 DEB_DIR}
deb_dir=$(cd "${deb_dir}" && pwd)
BIN_DIR=$(cd "${BIN_DIR:-${OUTPUT_DIR}/bin}" && pwd)
E2E_RUNTIME=${E2E_RUNTIME:-containerd}
E2E_ARTIFACTS=${E2E_ARTIFACTS:-${OUTPUT_DIR}/e2e}
CONTAINERD_BIN=${CONTAINERD_BIN:-$("${REPO_ROOT}/build/containerd.sh" dir)}

version=$("${REPO_ROOT}/build/version.sh" version)
deb_version=${version#v}
deb=${deb_dir}/podadmission-kubelet_${deb_version}_amd64.deb
name=kubelet-${version}-linux-amd64
tarball=${OUTPUT_DIR}/release/${name}.tar.gz
read -r major minor patch _ <<<"$(release_parts "${UPSTREAM_VERSION}")"
stock_version=${major}.${minor}.${patch}
upgraded_version=${major}.${minor}.$((patch + 1))
other_minor_version=${major}.$((minor + 1)).0

[[ $(id -u) -eq 0 ]] || die "the package cycles install a package on this machine: run as root"
[[ -f "${deb}" ]] || die "${deb} does not exist; run make deb first"
[[ -f "${tarball}" ]] || die "${tarball} does not exist; run make release first"
for tool in dpkg dpkg-deb dpkg-divert lintian shellcheck flock; do
  command -v "${tool}" >/dev/null || die "${tool} is missing"
done

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
# expect_in OUTPUT TEXT WHAT: OUTPUT contains TEXT.
expect_in() {
  grep -qF -- "$2" <<<"$1" || fail "$3: the output does not contain \"$2\"; it was:"$'\n'"$1"
}
expect_eq() {
  [[ "$1" == "$2" ]] || fail "$3: got \"$1\", want \"$2\""
}
sha() {
  sha256sum "$1" | cut -d' ' -f1
}
# status PACKAGE: its dpkg status ("not-installed" when dpkg does not know it).
status() {
  dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null || echo not-installed
}
# snapshot DIR: every path under DIR with type, mode, owner, size, link
# target and content hash; two equal snapshots mean the same tree.
snapshot() {
  (
    cd "$1" || exit 1
    find . -printf '%p %y %m %U:%G %s %l\n' | LC_ALL=C sort
    find . -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum
  )
}
# dpkg_run ARGS...: dpkg, waiting while another dpkg/apt holds its lock.
dpkg_run() {
  local out rc
  for _ in $(seq 1 120); do
    rc=0
    out=$(dpkg "$@" 2>&1) || rc=$?
    if [[ ${rc} -ne 0 ]] && grep -q 'dpkg frontend lock\|dpkg status database is locked' <<<"${out}"; then
      sleep 5
      continue
    fi
    printf '%s\n' "${out}"
    return "${rc}"
  done
  printf '%s\n' "${out}"
  return "${rc}"
}

# The paths the cycles create on this machine; none may exist before.
host_paths=(
  /usr/bin/kubelet /usr/bin/kubelet.distrib /usr/bin/podadmctl
  /usr/libexec/kubernetes/pod-admission /usr/share/podadmission-kubelet
  /usr/share/doc/podadmission-kubelet /usr/share/lintian/overrides/podadmission-kubelet
  /etc/kubernetes /etc/systemd/system/kubelet.service.d
  /usr/lib/systemd/system/pod-security-plugin-grpc.service
  /etc/systemd/system/multi-user.target.wants/pod-security-plugin-grpc.service
  /run/podadmission
)

# /usr/libexec/kubernetes is shared: a kubelet that ran on this machine
# leaves its FlexVolume directory (kubelet-plugins/volume/exec) there. It may
# exist before; then the cycles leave it exactly as they found it (the same
# snapshot at the end), else they remove it like the paths above.
shared_dir=/usr/libexec/kubernetes
shared_before=

# Only one cycle per machine.
packages_lock=/run/podadmission-packages.lock
take_lock "${packages_lock}" 9

# The node e2e machine lock: held whenever the package goes on or off.
e2e_lock=/run/podadmission-e2e.lock
e2e_locked=false
lock_e2e() {
  take_lock "${e2e_lock}" 8
  e2e_locked=true
}
unlock_e2e() {
  if ${e2e_locked}; then
    release_lock "${e2e_lock}" 8
    e2e_locked=false
  fi
}

work=$(mktemp -d)
# What runs as another user must not depend on where the clone is (a clone
# under /root, which only root can enter, is the common case): the cycles
# use a copy of the .deb in ${work} (mode 0700, as mktemp makes it) and run
# from there, so a step that reads the .deb or the working directory as
# another user fails here wherever the clone lives.
cp "${deb}" "${work}/"
deb=${work}/${deb##*/}
cd "${work}"
diversions_before=$(dpkg-divert --list | LC_ALL=C sort)
host_checked=false
daemon_pid=
cleanup() {
  local rc=$?
  set +e
  if [[ -n "${daemon_pid}" ]]; then
    kill "${daemon_pid}"
    wait "${daemon_pid}"
  fi
  rm -rf "${work}"
  if ! ${host_checked}; then
    unlock_e2e
    release_lock "${packages_lock}" 9
    [[ ${rc} -eq 0 ]] || echo ">>> package cycles FAILED after ${checks} checks ($(($(date +%s) - start))s)" >&2
    exit "${rc}"
  fi
  ${e2e_locked} || lock_e2e
  local pkg p leftover=()
  for pkg in podadmission-kubelet kubelet; do
    if [[ "$(status "${pkg}")" != not-installed ]]; then
      echo "cleanup: purging ${pkg}" >&2
      PODADMISSION_FORCE_MINOR=1 dpkg_run --purge "${pkg}" >&2
    fi
  done
  for p in "${host_paths[@]}"; do
    if [[ -e "${p}" || -L "${p}" ]]; then
      leftover+=("${p}")
      rm -rf "${p}"
    fi
  done
  if [[ -z "${shared_before}" ]]; then
    if [[ -e "${shared_dir}" || -L "${shared_dir}" ]]; then
      leftover+=("${shared_dir}")
      rm -rf "${shared_dir}"
    fi
  elif [[ "$(snapshot "${shared_dir}" 2>&1)" != "${shared_before}" ]]; then
    echo "cleanup: FAIL: ${shared_dir} differs from before the cycle:" >&2
    diff <(echo "${shared_before}") <(snapshot "${shared_dir}" 2>&1) >&2
    [[ ${rc} -ne 0 ]] || rc=1
  fi
  if [[ ${#leftover[@]} -gt 0 ]]; then
    echo "cleanup: removed ${leftover[*]}" >&2
    [[ ${rc} -ne 0 ]] || rc=1
  fi
  if [[ "$(dpkg-divert --list | LC_ALL=C sort)" != "${diversions_before}" ]]; then
    echo "cleanup: FAIL: the diversions differ from before the cycle:" >&2
    diff <(echo "${diversions_before}") <(dpkg-divert --list | LC_ALL=C sort) >&2
    [[ ${rc} -ne 0 ]] || rc=1
  fi
  unlock_e2e
  release_lock "${packages_lock}" 9
  if [[ ${rc} -eq 0 ]]; then
    echo ">>> package cycles passed: ${checks} checks in $(($(date +%s) - start))s, ${lock_wait}s of it waiting for other runs' locks"
  else
    echo ">>> package cycles FAILED after ${checks} checks ($(($(date +%s) - start))s)" >&2
  fi
  exit "${rc}"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# standin_deb VERSION: a kubelet package whose /usr/bin/kubelet reports
# Kubernetes vVERSION.
standin_deb() {
  local v=$1 root=${work}/standin-$1
  mkdir -p "${root}/DEBIAN" "${root}/usr/bin"
  cat >"${root}/usr/bin/kubelet" <<EOF
#!/bin/sh
# Stand-in for the stock kubelet v${v} (build/deb/test-cycle.sh): --version only.
if [ "\$1" = --version ]; then echo "Kubernetes v${v}"; exit 0; fi
echo "stand-in kubelet v${v}: only --version" >&2
exit 1
EOF
  chmod 0755 "${root}/usr/bin/kubelet"
  cat >"${root}/DEBIAN/control" <<EOF
Package: kubelet
Version: ${v}-1.1
Architecture: amd64
Maintainer: podadmission test <build@podadmission.invalid>
Description: stand-in for the Kubernetes node agent v${v}
 A shell script that prints the version; used by build/deb/test-cycle.sh.
EOF
  dpkg-deb --root-owner-group --build "${root}" "${work}/kubelet_${v}-1.1_amd64.deb" >/dev/null
  echo "${work}/kubelet_${v}-1.1_amd64.deb"
}

tar -xzf "${tarball}" -C "${work}"
release=${work}/${name}
our_kubelet_sha=$(cut -d' ' -f1 "${release}/kubelet.sha256")

echo ">>> 1. the package: reproducible, lintian, shellcheck"
(umask 0077 && "${REPO_ROOT}/build/deb/build.sh" "${work}/rebuild" >/dev/null)
expect_eq "$(sha "${work}/rebuild/$(basename "${deb}")")" "$(sha "${deb}")" "a second build of ${deb##*/} (umask 0077)"
ok "a second build has the same bytes: sha256 $(sha "${deb}"), $(stat -c %s "${deb}") bytes"

# As nobody, as lintian asks, on a copy it can read wherever the clone is,
# and from that copy's directory: nobody cannot enter a clone under a
# directory only root can (/root/podadmission), and lintian starts by
# changing back to its working directory.
lint=$(mktemp -d)
cp "${deb}" "${lint}/"
chown -R nobody "${lint}"
lintian_out=$(cd "${lint}" && runuser -u nobody -- env HOME="${lint}" TMPDIR="${lint}" lintian --fail-on error --pedantic "${lint}/${deb##*/}" 2>&1) || {
  rm -rf "${lint}"

  fail "lintian reports errors on ${deb}:"$'\n'"${lintian_out}"
}
rm -rf "${lint}"
if grep -q '^E:' <<<"${lintian_out}"; then fail "lintian errors:"$'\n'"${lintian_out}"; fi
ok "lintian: no error; warnings and pedantic notes:"
grep -E '^(W|P):' <<<"${lintian_out}" | sed 's/^/    /' || true

dpkg-deb -e "${deb}" "${work}/control"
# SC2317: each script carries the whole of build/pkgscripts/common.sh and
# calls only some of its functions; shellcheck takes the others as unreachable.
shellcheck -s sh -e SC2317 "${work}/control/preinst" "${work}/control/postinst" "${work}/control/prerm" "${work}/control/postrm"
shellcheck -x -P "${REPO_ROOT}" "${release}/install.sh" "${REPO_ROOT}/build/deb/build.sh" "${REPO_ROOT}/build/deb/test-cycle.sh"
ok "shellcheck: the maintainer scripts, install.sh, build.sh and test-cycle.sh are clean"

dpkg-deb -x "${deb}" "${work}/payload"

echo ">>> this machine: no kubelet, nothing the package installs"
lock_e2e
for pkg in podadmission-kubelet kubelet; do
  [[ "$(status "${pkg}")" == not-installed ]] ||
    die "package ${pkg} is $(status "${pkg}") on this machine; the cycles need a machine without it"
done
for p in "${host_paths[@]}"; do
  [[ ! -e "${p}" && ! -L "${p}" ]] || die "${p} exists on this machine; the cycles install there and need a machine without it"
done
if [[ -L "${shared_dir}" || (-e "${shared_dir}" && ! -d "${shared_dir}") ]]; then
  die "${shared_dir} is not a directory on this machine; the cycles install under it"
elif [[ -d "${shared_dir}" ]]; then
  shared_before=$(snapshot "${shared_dir}")
  echo "    ${shared_dir} exists (${shared_dir}/pod-admission does not): the cycles leave it as they found it"
fi
[[ -z "$(dpkg-divert --list /usr/bin/kubelet)" ]] ||
  die "/usr/bin/kubelet is diverted on this machine: $(dpkg-divert --list /usr/bin/kubelet)"
# The package's paths that exist before (/usr/bin, ...) may exist after.
declare -A existed=()
while read -r p; do
  [[ ! -e "${p}" ]] || existed[${p}]=1
done < <(cd "${work}/payload" && find . -printf '/%P\n')
host_checked=true
ok "no kubelet package, no diversion of /usr/bin/kubelet, none of ${host_paths[*]}"

echo ">>> 2. dpkg over a stock kubelet of another minor (v${other_minor_version})"
other_deb=$(standin_deb "${other_minor_version}")
dpkg_run -i "${other_deb}" >/dev/null
other_sha=$(sha /usr/bin/kubelet)
rc=0
out=$(dpkg_run -i "${deb}") || rc=$?
[[ ${rc} -ne 0 ]] || fail "dpkg -i over a v${other_minor_version} kubelet succeeded; want a refusal. Output:"$'\n'"${out}"
expect_in "${out}" "podadmission-kubelet: refusing to install: the stock kubelet /usr/bin/kubelet is a v${major}.$((minor + 1)) kubelet" "the refusal"
expect_in "${out}" "but this package is the v${major}.${minor} kubelet ${deb_version}" "the refusal"
expect_in "${out}" "set PODADMISSION_FORCE_MINOR=1 for dpkg/apt or create" "the refusal says how to force it"
expect_eq "$(status podadmission-kubelet)" not-installed "podadmission-kubelet after the refusal"
expect_eq "$(dpkg-divert --list /usr/bin/kubelet)" "" "the diversion after the refusal"
expect_eq "$(sha /usr/bin/kubelet)" "${other_sha}" "/usr/bin/kubelet after the refusal"
[[ ! -e /usr/bin/podadmctl && ! -e /etc/kubernetes ]] || fail "the refused install left files behind"
ok "refused over a v${major}.$((minor + 1)) kubelet, nothing changed:"
grep -A5 'refusing to install' <<<"${out}" | sed 's/^/    /'

out=$(PODADMISSION_FORCE_MINOR=1 dpkg_run -i "${deb}") || fail "a forced install failed:"$'\n'"${out}"
expect_in "${out}" "installing anyway (forced)" "the forced install"
expect_eq "$(sha /usr/bin/kubelet)" "${our_kubelet_sha}" "/usr/bin/kubelet after the forced install"
ok "PODADMISSION_FORCE_MINOR=1 installs it anyway"
other_upgraded_deb=$(standin_deb "${major}.$((minor + 1)).1")
out=$(dpkg_run -i "${other_upgraded_deb}") || fail "upgrading the kubelet package underneath failed:"$'\n'"${out}"
other_sha=$(sha /usr/bin/kubelet.distrib)
expect_in "${out}" "warning: the stock kubelet under the diversion is now Kubernetes v${major}.$((minor + 1)).1, not v${major}.${minor}" "the trigger on another minor"
ok "the kubelet package upgraded underneath: the trigger warns that v${major}.$((minor + 1)).1 is not the package's minor"
out=$(dpkg_run -r podadmission-kubelet) || fail "dpkg -r failed:"$'\n'"${out}"
expect_eq "$(sha /usr/bin/kubelet)" "${other_sha}" "/usr/bin/kubelet after dpkg -r"
expect_eq "$(dpkg-divert --list /usr/bin/kubelet)" "" "the diversion after dpkg -r"
expect_eq "$(status podadmission-kubelet)" config-files "podadmission-kubelet after dpkg -r"
[[ -f /etc/kubernetes/pod-admission/10-pod-security.yaml.sample && ! -e /usr/bin/podadmctl ]] ||
  fail "dpkg -r should keep the conffile and remove the rest"
ok "dpkg -r: the stock kubelet is back byte for byte, the sample conffile stays"
out=$(dpkg_run --purge podadmission-kubelet) || fail "dpkg --purge failed:"$'\n'"${out}"
[[ ! -e /etc/kubernetes ]] || fail "purge left /etc/kubernetes with nothing of the operator's in it: $(find /etc/kubernetes)"
ok "dpkg --purge removes the sample and /etc/kubernetes/pod-admission, which held nothing else"
dpkg_run --purge kubelet >/dev/null

out=$(dpkg_run -i "${deb}") || fail "dpkg -i with no kubelet failed:"$'\n'"${out}"
expect_in "${out}" "there is no stock kubelet at /usr/bin/kubelet" "preinst with no kubelet"
expect_eq "$(sha /usr/bin/kubelet)" "${our_kubelet_sha}" "/usr/bin/kubelet installed with no stock kubelet"
out=$(dpkg_run --purge podadmission-kubelet) || fail "dpkg --purge failed:"$'\n'"${out}"
[[ ! -e /usr/bin/kubelet && -z "$(dpkg-divert --list /usr/bin/kubelet)" ]] || fail "purge with no stock kubelet left /usr/bin/kubelet or the diversion"
ok "with no kubelet at all it installs, and purge leaves none"

echo ">>> 3. dpkg over a stock kubelet v${stock_version}: install, e2e, purge"
stock_deb=$(standin_deb "${stock_version}")
dpkg_run -i "${stock_deb}" >/dev/null
stock_sha=$(sha /usr/bin/kubelet)
expect_eq "$(/usr/bin/kubelet --version)" "Kubernetes v${stock_version}" "the stand-in stock kubelet"

out=$(dpkg_run -i "${deb}") || fail "dpkg -i failed:"$'\n'"${out}"
expect_in "${out}" "the stock kubelet /usr/bin/kubelet is v${major}.${minor}" "preinst"
expect_in "${out}" "valid: 0 plugins in 0 files" "postinst runs podadmctl validate"
expect_in "${out}" "the PodAdmissionPlugin gate is off; to turn it on" "postinst says the gate is off"
expect_in "${out}" "nothing was restarted" "postinst"
ok "dpkg -i: minor checked, configuration validated, nothing restarted"
expect_eq "$(dpkg-divert --list /usr/bin/kubelet)" \
  "diversion of /usr/bin/kubelet to /usr/bin/kubelet.distrib by podadmission-kubelet" "dpkg-divert --list"
expect_eq "$(sha /usr/bin/kubelet.distrib)" "${stock_sha}" "the diverted stock kubelet"
expect_eq "$(sha /usr/bin/kubelet)" "${our_kubelet_sha}" "/usr/bin/kubelet"
expect_eq "$(/usr/bin/kubelet --version)" "Kubernetes ${version}" "/usr/bin/kubelet --version"
ok "diverted: /usr/bin/kubelet.distrib is the stock kubelet, /usr/bin/kubelet is ours ($(/usr/bin/kubelet --version))"
expect_eq "$(stat -c '%F %a %U %G' /etc/kubernetes/pod-admission)" "directory 755 root root" "/etc/kubernetes/pod-admission"
expect_eq "$(stat -c '%a %U' /usr/libexec/kubernetes/pod-admission/pod-security-plugin)" "755 root" "the plugin"
expect_in "$(dpkg-query -W -f='${Conffiles}' podadmission-kubelet)" "/etc/kubernetes/pod-admission/10-pod-security.yaml.sample" "the conffiles"
[[ ! -e /etc/systemd/system/kubelet.service.d/10-podadmission.conf ]] || fail "the drop-in is active after install"
dpkg --verify podadmission-kubelet || fail "dpkg --verify podadmission-kubelet reports changed files"
ok "root-owned 0755 config dir, the sample as a conffile, the drop-in inactive, dpkg --verify clean"

dropin_args=$(sed -n 's/^Environment="KUBELET_PODADMISSION_ARGS=\(.*\)"$/\1/p' /usr/share/podadmission-kubelet/10-podadmission.conf)
[[ -n "${dropin_args}" ]] || fail "no KUBELET_PODADMISSION_ARGS in the drop-in"
# shellcheck disable=SC2086 # the flags are words, as systemd splits them
out=$(/usr/bin/kubelet ${dropin_args} --version 2>&1) || fail "the installed kubelet refuses the drop-in's flags:"$'\n'"${out}"
expect_in "${out}" "Kubernetes ${version}" "the installed kubelet with the drop-in's flags"
ok "the installed kubelet parses the drop-in's flags (${dropin_args})"

install -m 0644 /dev/stdin /etc/kubernetes/pod-admission/30-typo.yaml <<'EOF'
apiVersion: podadmission.kubelet.config.k8s.io/v1alpha1
kind: PodAdmissionConfiguration
plugins:
- name: pod-security-plugin
  type: Exec
  timeot: 5s
EOF
out=$(dpkg_run -i "${deb}") || fail "dpkg -i with a broken configuration failed; postinst must only report it:"$'\n'"${out}"
expect_in "${out}" '/etc/kubernetes/pod-admission/30-typo.yaml: strict decoding error: unknown field "plugins[0].timeot"' "postinst names the broken file and field"
expect_in "${out}" "warning: fix the errors above in /etc/kubernetes/pod-admission" "postinst says what to fix"
ok "postinst reports an operator's broken file with its field and does not fail:"
grep 'timeot\|fix the errors' <<<"${out}" | sed 's/^/    /'
rm /etc/kubernetes/pod-admission/30-typo.yaml
# The operator enables the sample: a configuration file of their own.
install -m 0644 /etc/kubernetes/pod-admission/10-pod-security.yaml.sample /etc/kubernetes/pod-admission/10-pod-security.yaml
out=$(/usr/bin/podadmctl validate /etc/kubernetes/pod-admission --bin-dir /usr/libexec/kubernetes/pod-admission) ||
  fail "the installed sample does not validate with the installed plugin:"$'\n'"${out}"
expect_in "${out}" "valid: 1 plugin in 1 file" "podadmctl validate of the enabled sample"
ok "the sample, copied to 10-pod-security.yaml, validates with the installed plugin"

# The GRPC daemon, started with its unit's command line (no systemd here),
# and its sample in place of the Exec plugin's: podadmctl check sends pods
# to it through the kubelet's GRPC transport and trust checks.
unit=/usr/lib/systemd/system/pod-security-plugin-grpc.service
socket=/run/podadmission/pod-security.sock
expect_eq "$(stat -c '%a %U' "${unit}")" "644 root" "the daemon's unit"
expect_eq "$(stat -c '%a %U' /usr/libexec/kubernetes/pod-admission/pod-security-plugin-grpc)" "755 root" "the daemon"
expect_in "$(dpkg-query -W -f='${Conffiles}' podadmission-kubelet)" "/etc/kubernetes/pod-admission/10-pod-security-grpc.yaml.sample" "the conffiles"
out=$(systemd-analyze verify "${unit}" 2>&1) || fail "systemd-analyze verify ${unit}:"$'\n'"${out}"
daemon_args=$(sed -n 's/^Environment="POD_SECURITY_PLUGIN_ARGS=\(.*\)"$/\1/p' "${unit}")
exec_start=$(sed -n 's/^ExecStart=//p' "${unit}")
[[ -n "${daemon_args}" && -n "${exec_start}" ]] || fail "${unit} has no ExecStart or no POD_SECURITY_PLUGIN_ARGS"
read -ra daemon_cmd <<<"${exec_start//\$POD_SECURITY_PLUGIN_ARGS/${daemon_args}}"
install -d -m 0755 /run/podadmission # the unit's RuntimeDirectory
"${daemon_cmd[@]}" >"${work}/pod-security-plugin-grpc.log" 2>&1 &
daemon_pid=$!
for _ in $(seq 1 100); do
  [[ -S "${socket}" ]] && break
  sleep 0.1
done
[[ -S "${socket}" ]] || fail "${daemon_cmd[*]} did not serve ${socket} in 10 s:"$'\n'"$(cat "${work}/pod-security-plugin-grpc.log")"
mv /etc/kubernetes/pod-admission/10-pod-security.yaml "${work}/10-pod-security.yaml"
install -m 0644 /etc/kubernetes/pod-admission/10-pod-security-grpc.yaml.sample /etc/kubernetes/pod-admission/10-pod-security-grpc.yaml
out=$(/usr/bin/podadmctl validate /etc/kubernetes/pod-admission) || fail "the daemon's sample does not validate:"$'\n'"${out}"
expect_in "${out}" "valid: 1 plugin in 1 file" "podadmctl validate of the daemon's sample"
cat >"${work}/hostnet.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata:
  name: hostnet
spec:
  hostNetwork: true
  containers:
  - name: app
    image: registry.k8s.io/pause:3.10
EOF
rc=0
out=$(/usr/bin/podadmctl check -f "${work}/hostnet.yaml" 2>&1) || rc=$?
expect_eq "${rc}" 1 "podadmctl check of a hostNetwork pod through the daemon (exit status)"
expect_in "${out}" 'violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true)' "the daemon's rejection"
sed -i '/hostNetwork/d' "${work}/hostnet.yaml"
out=$(/usr/bin/podadmctl check -f "${work}/hostnet.yaml" 2>&1) || fail "podadmctl check of a baseline pod through the daemon:"$'\n'"${out}"
kill "${daemon_pid}"
wait "${daemon_pid}" || true
daemon_pid=
rm -r /run/podadmission
rm /etc/kubernetes/pod-admission/10-pod-security-grpc.yaml
mv "${work}/10-pod-security.yaml" /etc/kubernetes/pod-admission/10-pod-security.yaml
ok "the GRPC daemon, as its unit starts it (${daemon_cmd[*]}), serves its sample: a hostNetwork pod rejected, a baseline one admitted"

upgraded_deb=$(standin_deb "${upgraded_version}")
out=$(dpkg_run -i "${upgraded_deb}") || fail "upgrading the kubelet package underneath failed:"$'\n'"${out}"
upgraded_sha=$(sha /usr/bin/kubelet.distrib)
[[ "${upgraded_sha}" != "${stock_sha}" ]] || fail "the kubelet package upgrade did not reach /usr/bin/kubelet.distrib"
expect_eq "$(/usr/bin/kubelet.distrib --version)" "Kubernetes v${upgraded_version}" "the upgraded stock kubelet"
expect_eq "$(sha /usr/bin/kubelet)" "${our_kubelet_sha}" "/usr/bin/kubelet after the kubelet package upgrade"
expect_in "${out}" "the stock kubelet under the diversion is now Kubernetes v${upgraded_version}" "the trigger"
ok "the kubelet package upgrades to ${upgraded_version}-1.1 underneath (/usr/bin/kubelet.distrib); /usr/bin/kubelet stays ours; the trigger says so"

mkdir -p /etc/systemd/system/kubelet.service.d
ln -s /usr/share/podadmission-kubelet/10-podadmission.conf /etc/systemd/system/kubelet.service.d/10-podadmission.conf
out=$(dpkg_run -i "${deb}") || fail "reinstall failed:"$'\n'"${out}"
expect_in "${out}" "the PodAdmissionPlugin gate is on" "postinst with the drop-in linked"
ok "with the drop-in linked, postinst says the gate is on"

# The node e2e suite with the installed kubelet and plugin: a bin dir of
# links to the build's binaries, but kubelet -> /usr/bin/kubelet. Only for
# the default minor (PACKAGE_E2E=1): every other buildable minor's kubelet
# runs the node e2e smoke in make test-other-minors.
package_e2e() {
  farm=${work}/bin
  mkdir -p "${farm}"
  for f in "${BIN_DIR}"/*; do ln -s "${f}" "${farm}/${f##*/}"; done
  ln -sfn /usr/bin/kubelet "${farm}/kubelet"
  before_e2e=$(find /etc/kubernetes /usr/libexec/kubernetes | LC_ALL=C sort)
  unlock_e2e
  mkdir -p "${E2E_ARTIFACTS}"
  e2e_log=${E2E_ARTIFACTS}/package-cycle-e2e.log
  rc=0
  "${BIN_DIR}/e2e/e2e_node.test" -test.v -test.timeout=20m -test.run='^TestPodSecurityPlugin$' \
    -e2e.runtime="${E2E_RUNTIME}" -e2e.bin-dir="${farm}" -e2e.artifacts="${E2E_ARTIFACTS}" \
    -e2e.containerd-bin-dir="${CONTAINERD_BIN}" \
    -e2e.plugins-dir=/usr/libexec/kubernetes/pod-admission >"${e2e_log}" 2>&1 || rc=$?
  "${BIN_DIR}/e2e/e2e-cluster" clean >>"${e2e_log}" 2>&1 || rc=1
  lock_e2e
  # A run that dies before its first test prints none of these lines:
  # the failure below shows its log's tail.
  grep -E '^(=== RUN|--- |PASS|FAIL|ok|artifacts:)' "${e2e_log}" | sed 's/^/    /' || true
  [[ ${rc} -eq 0 ]] || fail "the node e2e suite failed with the installed kubelet and plugin: ${e2e_log}"$'\n'"$(tail -n 40 "${e2e_log}")"
  expect_eq "$(find /etc/kubernetes /usr/libexec/kubernetes | LC_ALL=C sort)" "${before_e2e}" "the package's directories after the e2e run"
  ok "node e2e TestPodSecurityPlugin passed with /usr/bin/kubelet and /usr/libexec/kubernetes/pod-admission/pod-security-plugin (${E2E_RUNTIME})"
}
if [[ "${PACKAGE_E2E:-1}" == 1 ]]; then
  package_e2e
else
  echo "    (the node e2e run with the installed kubelet is the default minor's: PACKAGE_E2E=0)"
fi

mapfile -t package_files < <(dpkg -L podadmission-kubelet)
# The operator enabled the daemon (systemctl edits the links without a
# running systemd).
daemon_link=/etc/systemd/system/multi-user.target.wants/pod-security-plugin-grpc.service
systemctl enable pod-security-plugin-grpc.service
[[ -L "${daemon_link}" ]] || fail "systemctl enable made no ${daemon_link}"
out=$(dpkg_run --purge podadmission-kubelet) || fail "dpkg --purge failed:"$'\n'"${out}"
expect_in "${out}" "removing /etc/systemd/system/kubelet.service.d/10-podadmission.conf" "postrm removes the drop-in link"
expect_in "${out}" "removing ${daemon_link}, which enabled pod-security-plugin-grpc.service" "prerm disables the daemon"
[[ ! -L "${daemon_link}" ]] || fail "purge left ${daemon_link}"
expect_in "${out}" "keeping /etc/kubernetes/pod-admission" "postrm purge keeps the operator's configuration"
expect_eq "$(status podadmission-kubelet)" not-installed "podadmission-kubelet after purge"
expect_eq "$(dpkg-divert --list /usr/bin/kubelet)" "" "the diversion after purge"
expect_eq "$(sha /usr/bin/kubelet)" "${upgraded_sha}" "/usr/bin/kubelet after purge"
[[ ! -e /usr/bin/kubelet.distrib ]] || fail "/usr/bin/kubelet.distrib is left after purge"
ok "purged: no diversion, /usr/bin/kubelet is the stock kubelet byte for byte (sha256 ${upgraded_sha}), the daemon no longer enabled"
left=()
for p in "${package_files[@]}"; do
  [[ "${p}" == /. ]] && p=/
  case "${p}" in
  /etc/kubernetes | /etc/kubernetes/pod-admission) ;; # the operator's file is in it
  /usr/bin/kubelet) ;;                                # the stock kubelet, checked above
  *) [[ -n "${existed[${p}]:-}" || ! (-e "${p}" || -L "${p}") ]] || left+=("${p}") ;;
  esac
done
[[ ${#left[@]} -eq 0 ]] || fail "purge left the package's files: ${left[*]}"
[[ ! -e /etc/systemd/system/kubelet.service.d/10-podadmission.conf ]] || fail "the drop-in link is left"
expect_eq "$(find /etc/kubernetes | LC_ALL=C sort | tr '\n' ' ')" \
  "/etc/kubernetes /etc/kubernetes/pod-admission /etc/kubernetes/pod-admission/10-pod-security.yaml " "/etc/kubernetes after purge"
ok "nothing of the ${#package_files[@]} paths of dpkg -L is left; /etc/kubernetes/pod-admission holds only the operator's file"
rm -r /etc/kubernetes
rmdir /etc/systemd/system/kubelet.service.d
dpkg_run --purge kubelet >/dev/null
# The e2e lock stays held through the prefix cycle (seconds): the final
# check of this machine needs it, and another run could take it for long.

echo ">>> 4. install.sh into a scratch --prefix over a stock kubelet v${stock_version}"
prefix=${work}/prefix
install -d -m 0755 "${prefix}" "${prefix}/usr" "${prefix}/usr/bin"
install -m 0755 "${work}/standin-${stock_version}/usr/bin/kubelet" "${prefix}/usr/bin/kubelet"
prefix_stock_sha=$(sha "${prefix}/usr/bin/kubelet")
before=$(snapshot "${prefix}")

out=$("${release}/install.sh" --prefix "${prefix}" --dry-run 2>&1) || fail "install.sh --dry-run failed:"$'\n'"${out}"
expect_in "${out}" "would keep ${prefix}/usr/bin/kubelet as ${prefix}/usr/bin/kubelet.pre-podadmission" "--dry-run"
expect_in "${out}" "would install kubelet as ${prefix}/usr/bin/kubelet" "--dry-run"
expect_eq "$(snapshot "${prefix}")" "${before}" "the prefix after --dry-run"
ok "--dry-run prints every step and changes nothing"

cp -a "${release}" "${work}/tampered"
printf x >>"${work}/tampered/podadmctl"
rc=0
out=$("${work}/tampered/install.sh" --prefix "${prefix}" 2>&1) || rc=$?
[[ ${rc} -ne 0 ]] || fail "install.sh installed a tampered release"
expect_in "${out}" "the release files do not match" "a tampered release"
expect_in "${out}" "podadmctl: FAILED" "a tampered release names the file"
expect_eq "$(snapshot "${prefix}")" "${before}" "the prefix after a tampered release"
ok "a release file that does not match SHA256SUMS is refused, naming it; nothing changed"

out=$("${release}/install.sh" --prefix "${prefix}" 2>&1) || fail "install.sh failed:"$'\n'"${out}"
expect_in "${out}" "verified" "install.sh verifies SHA256SUMS"
expect_in "${out}" "is a v${major}.${minor} kubelet, as this release" "install.sh checks the minor"
expect_eq "$(sha "${prefix}/usr/bin/kubelet")" "${our_kubelet_sha}" "the installed kubelet"
expect_eq "$(sha "${prefix}/usr/bin/kubelet.pre-podadmission")" "${prefix_stock_sha}" "the kept kubelet"
expect_in "${out}" "podadmctl validate /etc/kubernetes/pod-admission --bin-dir /usr/libexec/kubernetes/pod-admission in a chroot of ${prefix}/" "install.sh runs podadmctl validate in the image"
expect_in "${out}" "validate: /etc/kubernetes/pod-admission: valid: 0 plugins" "install.sh runs podadmctl validate"
ok "install: the stock kubelet kept as kubelet.pre-podadmission, ours in place, configuration validated"
diff <(cd "${prefix}" && find . ! -path './var/lib/podadmission-kubelet*' ! -path ./var ! -path ./var/lib ! -name kubelet.pre-podadmission \
  -printf '%p %y %m\n' | LC_ALL=C sort) \
  <(cd "${work}/payload" && find . ! -path './usr/share/doc*' ! -path './usr/share/lintian*' -printf '%p %y %m\n' | LC_ALL=C sort) ||
  fail "install.sh and the package install different paths or modes (< install.sh, > package)"
while read -r _ dest _; do
  cmp -s "${prefix}/${dest}" "${work}/payload/${dest}" || fail "${dest} differs between install.sh and the package"
done < <("${release}/install.sh" --list)
ok "install.sh installs the same files, modes and bytes as the package (its /usr/share/doc and lintian overrides aside)"
installed=$(snapshot "${prefix}")

out=$("${release}/install.sh" --prefix "${prefix}" 2>&1) || fail "a second install.sh failed:"$'\n'"${out}"
expect_in "${out}" "kubelet.pre-podadmission is kept from before the first install; not touching it" "the second install"
expect_in "${out}" "${prefix}/usr/bin/kubelet is up to date" "the second install"
expect_eq "$(sha "${prefix}/usr/bin/kubelet.pre-podadmission")" "${prefix_stock_sha}" "the kept kubelet after a second install"
expect_eq "$(snapshot "${prefix}")" "${installed}" "the prefix after a second install"
ok "a second install changes nothing and keeps the original kubelet"

out=$("${release}/install.sh" --prefix "${prefix}" --rollback --dry-run 2>&1) || fail "--rollback --dry-run failed:"$'\n'"${out}"
expect_in "${out}" "would put the previous kubelet back" "--rollback --dry-run"
expect_eq "$(snapshot "${prefix}")" "${installed}" "the prefix after --rollback --dry-run"
out=$("${release}/install.sh" --prefix "${prefix}" --rollback 2>&1) || fail "--rollback failed:"$'\n'"${out}"
expect_in "${out}" "put the previous kubelet back" "--rollback"
expect_eq "$(sha "${prefix}/usr/bin/kubelet")" "${prefix_stock_sha}" "the kubelet after --rollback"
expect_eq "$(snapshot "${prefix}")" "${before}" "the prefix after --rollback"
ok "--rollback after two installs restores the prefix exactly (the stock kubelet byte for byte)"
out=$("${release}/install.sh" --prefix "${prefix}" --rollback 2>&1) || fail "a second --rollback failed:"$'\n'"${out}"
expect_in "${out}" "nothing to roll back" "a second --rollback"
expect_eq "$(snapshot "${prefix}")" "${before}" "the prefix after a second --rollback"
ok "a second --rollback changes nothing"

out=$("${release}/install.sh" --prefix "${prefix}" 2>&1) || fail "install.sh failed:"$'\n'"${out}"
install -m 0644 "${prefix}/etc/kubernetes/pod-admission/10-pod-security.yaml.sample" "${prefix}/etc/kubernetes/pod-admission/50-operator.yaml"
mkdir -p "${prefix}/etc/systemd/system/kubelet.service.d"
ln -s /usr/share/podadmission-kubelet/10-podadmission.conf "${prefix}/etc/systemd/system/kubelet.service.d/10-podadmission.conf"
systemctl --root="${prefix}" enable pod-security-plugin-grpc.service
prefix_daemon_link=${prefix}/etc/systemd/system/multi-user.target.wants/pod-security-plugin-grpc.service
[[ -L "${prefix_daemon_link}" ]] || fail "systemctl --root enable made no ${prefix_daemon_link}"
out=$("${release}/install.sh" --prefix "${prefix}" --rollback 2>&1) || fail "--rollback failed:"$'\n'"${out}"
expect_in "${out}" "remove the drop-in link" "--rollback with the gate on"
expect_in "${out}" "remove ${prefix_daemon_link}, which enabled pod-security-plugin-grpc.service" "--rollback with the daemon enabled"
[[ ! -L "${prefix_daemon_link}" ]] || fail "--rollback left ${prefix_daemon_link}"
expect_in "${out}" "keep ${prefix}/etc/kubernetes/pod-admission/: it holds files install.sh did not install: 50-operator.yaml" "--rollback with an operator's file"
[[ ! -L "${prefix}/etc/systemd/system/kubelet.service.d/10-podadmission.conf" ]] || fail "--rollback left the drop-in link"
expect_eq "$(cd "${prefix}" && find etc/kubernetes | LC_ALL=C sort | tr '\n' ' ')" \
  "etc/kubernetes etc/kubernetes/pod-admission etc/kubernetes/pod-admission/50-operator.yaml " "etc/kubernetes after --rollback"
rm -r "${prefix:?}/etc"
expect_eq "$(snapshot "${prefix}")" "${before}" "the prefix after --rollback and removing the operator's files"
ok "--rollback removes the drop-in link and the daemon's enablement, and keeps the operator's configuration"

install -m 0755 "${work}/standin-${other_minor_version}/usr/bin/kubelet" "${prefix}/usr/bin/kubelet"
before=$(snapshot "${prefix}")
rc=0
out=$("${release}/install.sh" --prefix "${prefix}" 2>&1) || rc=$?
[[ ${rc} -ne 0 ]] || fail "install.sh replaced a v${other_minor_version} kubelet without --force-minor"
expect_in "${out}" "is a v${major}.$((minor + 1)) kubelet, but this release is the v${major}.${minor} kubelet" "install.sh over another minor"
expect_in "${out}" "pass --force-minor" "install.sh over another minor"
expect_eq "$(snapshot "${prefix}")" "${before}" "the prefix after the refusal"
out=$("${release}/install.sh" --prefix "${prefix}" --force-minor 2>&1) || fail "install.sh --force-minor failed:"$'\n'"${out}"
"${release}/install.sh" --prefix "${prefix}" --rollback >/dev/null
expect_eq "$(snapshot "${prefix}")" "${before}" "the prefix after a forced install and --rollback"
ok "install.sh refuses a v${other_minor_version} kubelet unless --force-minor; rolled back exactly"
