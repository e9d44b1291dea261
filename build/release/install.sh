#!/usr/bin/env bash
# Puts this release's drop-in kubelet onto a node image that does not use
# dpkg, and takes it off again. Run it from the extracted release tarball:
#
#   ./install.sh --prefix / [--dry-run] [--force-minor]   install
#   ./install.sh --prefix / --rollback [--dry-run]        put everything back
#   ./install.sh --list                                   the layout: SOURCE DESTINATION MODE
#
# Install verifies every file of the tarball against its SHA256SUMS, keeps
# the kubelet it replaces as usr/bin/kubelet.pre-podadmission (once: a
# second install never overwrites it), installs the files of --list (the
# same ones the Debian package installs), records what it did in
# var/lib/podadmission-kubelet/install-record, and runs podadmctl validate
# on the configuration directory (in a chroot of the prefix unless it is /).
# It restarts nothing and does not enable the feature gate: the systemd
# drop-in goes to usr/share/podadmission-kubelet/, and the gate is on once
# it is linked into /etc/systemd/system/kubelet.service.d/.
#
# Rollback puts the previous kubelet back, removes every file of the record
# and the directories install created (unless they hold other files, such
# as your configuration), and the drop-in link. Both are idempotent. With
# --dry-run every step is printed and nothing changes.
#
# Install refuses a kubelet of another Kubernetes minor than this release's
# (its --version output decides) unless --force-minor is given.

set -euo pipefail

readonly KUBELET=usr/bin/kubelet
readonly KEPT_KUBELET=usr/bin/kubelet.pre-podadmission
readonly STATE_DIR=var/lib/podadmission-kubelet
readonly RECORD=${STATE_DIR}/install-record
readonly CONFIG_DIR=etc/kubernetes/pod-admission
readonly PLUGIN_DIR=usr/libexec/kubernetes/pod-admission
readonly DROPIN=usr/share/podadmission-kubelet/10-podadmission.conf
readonly DROPIN_LINK=etc/systemd/system/kubelet.service.d/10-podadmission.conf
readonly UNIT_DIR=usr/lib/systemd/system

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
prefix=
mode=install
dry_run=false
force_minor=false

usage() {
  sed -n '2,/^$/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
}

die() {
  echo "install.sh: error: $*" >&2
  exit 1
}

# step prints what is done; with --dry-run it is all that happens.
step() {
  if ${dry_run}; then
    echo "install.sh: would $*"
  else
    echo "install.sh: $*"
  fi
}

# run executes a command unless --dry-run.
run() {
  ${dry_run} || "$@"
}

# layout prints SOURCE DESTINATION MODE for every file installed: the
# kubelet, podadmctl, every plugin of pod-admission-bin/, the systemd
# drop-in, the units of the plugin daemons in systemd/ (installed, not
# enabled), and every sample configuration of pod-admission/ as NAME.sample
# (a .sample is not read by the kubelet: the operator copies it to enable it).
layout() {
  echo "kubelet ${KUBELET} 0755"
  echo "podadmctl usr/bin/podadmctl 0755"
  local f
  for f in "${here}"/pod-admission-bin/*; do
    [[ -f "${f}" ]] && echo "pod-admission-bin/${f##*/} ${PLUGIN_DIR}/${f##*/} 0755"
  done
  echo "10-podadmission.conf ${DROPIN} 0644"
  for f in "${here}"/systemd/*.service; do
    [[ -f "${f}" ]] && echo "systemd/${f##*/} ${UNIT_DIR}/${f##*/} 0644"
  done
  for f in "${here}"/pod-admission/*; do
    [[ -f "${f}" ]] && echo "pod-admission/${f##*/} ${CONFIG_DIR}/${f##*/}.sample 0644"
  done
  return 0
}

# kubelet_minor prints the Kubernetes minor (1.37) a kubelet binary reports.
kubelet_minor() {
  local out
  out=$(timeout 30 "$1" --version 2>&1) || true
  sed -n 's/^Kubernetes v\([0-9][0-9]*\.[0-9][0-9]*\)\..*/\1/p' <<<"${out}" | head -n 1
}

verify_checksums() {
  [[ -f "${here}/SHA256SUMS" ]] || die "${here}/SHA256SUMS is missing: run install.sh from an extracted release tarball"
  local bad
  if ! bad=$(cd "${here}" && sha256sum --check --strict --quiet SHA256SUMS 2>&1); then
    die "the release files do not match ${here}/SHA256SUMS; download and extract the tarball again:"$'\n'"${bad}"
  fi
  # Every file of the layout must be covered.
  local src dest perm
  while read -r src dest perm; do
    awk -v f="${src}" '$2 == f { found = 1 } END { exit !found }' "${here}/SHA256SUMS" ||
      die "${src} is not listed in ${here}/SHA256SUMS"
  done < <(layout)
  echo "install.sh: verified $(wc -l <"${here}/SHA256SUMS") files against SHA256SUMS"
}

# check_minor refuses a kubelet in place of another minor than ours.
check_minor() {
  local ours theirs stock
  ours=$(kubelet_minor "${here}/kubelet")
  [[ -n "${ours}" ]] || die "${here}/kubelet --version does not say which Kubernetes minor it is"
  if [[ -e "${prefix}${KEPT_KUBELET}" ]]; then
    stock=${prefix}${KEPT_KUBELET}
  elif [[ -e "${prefix}${RECORD}" || ! -e "${prefix}${KUBELET}" ]]; then
    echo "install.sh: no kubelet to replace at ${prefix}${KUBELET} other than ours"
    return 0
  else
    stock=${prefix}${KUBELET}
  fi
  theirs=$(kubelet_minor "${stock}")
  if [[ "${theirs}" == "${ours}" ]]; then
    echo "install.sh: ${stock} is a v${theirs} kubelet, as this release"
    return 0
  fi
  local what="a v${theirs} kubelet"
  [[ -n "${theirs}" ]] || what="a kubelet whose --version does not say its minor"
  if ${force_minor}; then
    echo "install.sh: warning: ${stock} is ${what}, this release is v${ours}; installing anyway (--force-minor)"
    return 0
  fi
  die "${stock} is ${what}, but this release is the v${ours} kubelet: install the release built for its minor, or pass --force-minor to replace it anyway"
}

# install_file SOURCE DEST MODE installs a file atomically (a temporary
# file renamed into place), root-owned, unless it is already there.
install_file() {
  local src=${here}/$1 dest=${prefix}$2 perm=$3
  if [[ -f "${dest}" && ! -L "${dest}" ]] && cmp -s "${src}" "${dest}" &&
    [[ "$(stat -c '%a %u %g' "${dest}")" == "${perm#0} 0 0" ]]; then
    echo "install.sh: ${dest} is up to date"
    return 0
  fi
  step "install ${1} as ${dest} (mode ${perm}, root)"
  run install -o 0 -g 0 -m "${perm}" "${src}" "${dest}.podadmission-new"
  run mv -f "${dest}.podadmission-new" "${dest}"
}

# make_dirs DIR creates DIR and the missing directories above it,
# outermost first, and adds those it creates to created_dirs.
declare -A planned_dirs=()
created_dirs=()
make_dirs() {
  local dir=$1 missing=()
  while [[ "${dir}" != . && ! -d "${prefix}${dir}" && -z "${planned_dirs[${dir}]:-}" ]]; do
    missing=("${dir}" "${missing[@]}")
    dir=$(dirname "${dir}")
  done
  for dir in "${missing[@]}"; do
    step "create ${prefix}${dir}/ (mode 0755, root)"
    run install -d -o 0 -g 0 -m 0755 "${prefix}${dir}"
    planned_dirs[${dir}]=1
    created_dirs+=("${dir}")
  done
}

# record_entries KIND prints the record's entries of one kind (dir, file).
record_entries() {
  [[ -f "${prefix}${RECORD}" ]] || return 0
  sed -n "s/^$1 //p" "${prefix}${RECORD}"
}

do_install() {
  verify_checksums
  check_minor

  local src dest perm old
  mapfile -t created_dirs < <(record_entries dir)
  if [[ -e "${prefix}${KEPT_KUBELET}" || -L "${prefix}${KEPT_KUBELET}" ]]; then
    echo "install.sh: ${prefix}${KEPT_KUBELET} is kept from before the first install; not touching it"
  elif [[ -e "${prefix}${RECORD}" ]]; then
    echo "install.sh: there was no kubelet before the first install; nothing to keep"
  elif [[ -e "${prefix}${KUBELET}" || -L "${prefix}${KUBELET}" ]]; then
    step "keep ${prefix}${KUBELET} as ${prefix}${KEPT_KUBELET}"
    run ln -P "${prefix}${KUBELET}" "${prefix}${KEPT_KUBELET}"
  else
    echo "install.sh: no kubelet at ${prefix}${KUBELET}; nothing to keep"
  fi

  local files=()
  declare -A in_release=()
  while read -r src dest perm; do
    make_dirs "$(dirname "${dest}")"
    install_file "${src}" "${dest}" "${perm}"
    files+=("${dest}")
    in_release[${dest}]=1
  done < <(layout)

  # Files an earlier install put there that this release does not have.
  while read -r old; do
    if [[ -n "${old}" && -z "${in_release[${old}]:-}" && -e "${prefix}${old}" ]]; then
      step "remove ${prefix}${old} (installed earlier, not in this release)"
      run rm -f "${prefix}${old}"
    fi
  done < <(record_entries file)

  make_dirs "${STATE_DIR}"
  step "record the installed files in ${prefix}${RECORD}"
  if ! ${dry_run}; then
    {
      echo "# Written by install.sh; install.sh --rollback reads it."
      echo "version $("${here}/kubelet" --version | sed 's/^Kubernetes //')"
      [[ ${#created_dirs[@]} -eq 0 ]] || printf 'dir %s\n' "${created_dirs[@]}" | awk '!seen[$0]++'
      printf 'file %s\n' "${files[@]}"
    } >"${prefix}${RECORD}.new"
    mv -f "${prefix}${RECORD}.new" "${prefix}${RECORD}"
  fi

  validate
  ${dry_run} && return 0
  echo "install.sh: installed $("${here}/kubelet" --version) as ${prefix}${KUBELET}; nothing was restarted."
  if [[ -e "${prefix}${DROPIN_LINK}" ]]; then
    echo "install.sh: the PodAdmissionPlugin gate is enabled (${prefix}${DROPIN_LINK})."
  else
    echo "install.sh: the PodAdmissionPlugin gate stays off until you link the drop-in:"
    echo "  mkdir -p ${prefix}${DROPIN_LINK%/*} && ln -s /${DROPIN} ${prefix}${DROPIN_LINK}"
  fi
  echo "install.sh: then: systemctl daemon-reload && systemctl restart kubelet"
}

# validate runs podadmctl validate on the configuration directory, as the
# kubelet will read it, and says what to fix; it never fails the install.
# Under another prefix it runs in a chroot of it (podadmctl is static), so
# the trust checks see the image's directories, not the path to the image.
validate() {
  local cmd=(/usr/bin/podadmctl validate "/${CONFIG_DIR}" --bin-dir "/${PLUGIN_DIR}") where=""
  if [[ "${prefix}" != / ]]; then
    cmd=(chroot "${prefix}" "${cmd[@]}")
    where=" in a chroot of ${prefix}"
  fi
  if ${dry_run}; then
    step "run podadmctl validate /${CONFIG_DIR} --bin-dir /${PLUGIN_DIR}${where}"
    return 0
  fi
  local out line rc=0
  echo "install.sh: podadmctl validate /${CONFIG_DIR} --bin-dir /${PLUGIN_DIR}${where}:"
  out=$("${cmd[@]}" 2>&1) || rc=$?
  while IFS= read -r line; do echo "install.sh: validate: ${line}"; done <<<"${out}"
  if [[ ${rc} -ne 0 ]]; then
    echo "install.sh: warning: fix the configuration above before the kubelet runs with the gate on; it refuses to start on an invalid one."
  fi
}

# disable_unit UNIT: a plugin daemon's unit goes with the release: stopped
# if it runs on this machine (its binary is about to go), and the links that
# enabled it (systemctl enable's) removed: left behind, they would name a
# unit that no longer exists. A unit file of the operator's own in
# etc/systemd/system is theirs, and so are its links.
disable_unit() {
  local unit=$1 link
  [[ ! -e "${prefix}etc/systemd/system/${unit}" ]] || return 0
  if [[ "${prefix}" == / && -d /run/systemd/system ]] && systemctl is-active --quiet "${unit}" 2>/dev/null; then
    step "stop ${unit}"
    run systemctl stop "${unit}" || true
  fi
  for link in "${prefix}"etc/systemd/system/*.wants/"${unit}" "${prefix}"etc/systemd/system/*.requires/"${unit}"; do
    [[ -L "${link}" ]] || continue
    step "remove ${link}, which enabled ${unit}"
    run rm -f "${link}"
  done
}

do_rollback() {
  if [[ ! -f "${prefix}${RECORD}" ]]; then
    echo "install.sh: no ${prefix}${RECORD}: install.sh has not installed anything under ${prefix}; nothing to roll back"
    return 0
  fi
  local file dir dirs=() files=()
  mapfile -t files < <(record_entries file)
  # Deepest first.
  mapfile -t dirs < <(record_entries dir | LC_ALL=C sort -r)
  if [[ -L "${prefix}${DROPIN_LINK}" && "$(readlink "${prefix}${DROPIN_LINK}")" == "/${DROPIN}" ]]; then
    step "remove the drop-in link ${prefix}${DROPIN_LINK} (the previous kubelet does not know its flags)"
    run rm -f "${prefix}${DROPIN_LINK}"
  elif [[ -e "${prefix}${DROPIN_LINK}" ]]; then
    echo "install.sh: warning: ${prefix}${DROPIN_LINK} is not the link install.sh documents; remove it yourself if it passes pod admission flags: the previous kubelet refuses them" >&2
  fi
  for file in "${files[@]}"; do
    if [[ "${file}" == "${UNIT_DIR}"/* ]]; then
      disable_unit "${file##*/}"
    fi
  done
  if [[ -e "${prefix}${KEPT_KUBELET}" || -L "${prefix}${KEPT_KUBELET}" ]]; then
    step "put the previous kubelet back: ${prefix}${KEPT_KUBELET} -> ${prefix}${KUBELET}"
    run mv -f "${prefix}${KEPT_KUBELET}" "${prefix}${KUBELET}"
  else
    step "remove ${prefix}${KUBELET} (there was no kubelet before)"
    run rm -f "${prefix}${KUBELET}"
  fi
  for file in "${files[@]}"; do
    [[ "${file}" != "${KUBELET}" ]] || continue
    if [[ -e "${prefix}${file}" || -L "${prefix}${file}" ]]; then
      step "remove ${prefix}${file}"
      run rm -f "${prefix}${file}"
    fi
  done
  step "remove ${prefix}${RECORD}"
  run rm -f "${prefix}${RECORD}"
  # A directory holding other files (your configuration) stays.
  for dir in "${dirs[@]}"; do
    [[ -d "${prefix}${dir}" ]] || continue
    if ${dry_run}; then
      step "remove the directory ${prefix}${dir}/ if nothing else is in it"
    elif [[ -z "$(find "${prefix}${dir}" -mindepth 1 -maxdepth 1)" ]]; then
      step "remove the directory ${prefix}${dir}/"
      rmdir "${prefix}${dir}"
    else
      echo "install.sh: keep ${prefix}${dir}/: it holds files install.sh did not install: $(find "${prefix}${dir}" -mindepth 1 -maxdepth 1 -printf '%f ')"
    fi
  done
  echo "install.sh: rolled back under ${prefix}; nothing was restarted: systemctl daemon-reload && systemctl restart kubelet"
}

while [[ $# -gt 0 ]]; do
  case "$1" in
  --prefix) [[ $# -ge 2 ]] || die "--prefix needs a directory"; prefix=$2; shift ;;
  --prefix=*) prefix=${1#--prefix=} ;;
  --dry-run) dry_run=true ;;
  --rollback) mode=rollback ;;
  --force-minor) force_minor=true ;;
  --list) mode=list ;;
  -h | --help) usage; exit 0 ;;
  *) die "unknown argument $1 (see --help)" ;;
  esac
  shift
done

if [[ "${mode}" == list ]]; then
  layout
  exit 0
fi
[[ -n "${prefix}" ]] || die "--prefix is required: / for this machine, or the root of a node image"
[[ -d "${prefix}" ]] || die "--prefix ${prefix}: not a directory"
prefix=$(cd "${prefix}" && pwd)
[[ "${prefix}" == / ]] || prefix=${prefix}/
${dry_run} || [[ $(id -u) -eq 0 ]] || die "run as root: the kubelet trusts only root-owned plugins and configuration (or pass --dry-run)"

case "${mode}" in
install) do_install ;;
rollback) do_rollback ;;
esac
