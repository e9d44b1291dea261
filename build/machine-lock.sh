# shellcheck shell=bash
# The machine locks of the package and image checks, sourced after
# build/lib.sh: /run/podadmission-e2e.lock is held by whatever starts a
# kubelet or containerd on this machine or installs into /etc/kubernetes
# and /usr/libexec/kubernetes (the node e2e suite takes it too).

# take_lock FILE FD: flock FILE on file descriptor FD the way
# test/e2e_node/framework takes its machine lock: the holder writes who it
# is into the file and removes it before unlocking, so nothing is left in
# /run; a waiter that locked a removed file starts again.
lock_wait=0
take_lock() {
  local file=$1 fd=$2 waited=0
  while :; do
    eval "exec ${fd}<>\"\${file}\""
    if flock -n "${fd}" && [[ "${file}" -ef /dev/fd/${fd} ]]; then
      echo "pid $$: $0" >"${file}"
      return 0
    fi
    eval "exec ${fd}>&-"
    [[ ${waited} -gt 0 ]] || log "waiting for ${file} ($(cat "${file}" 2>/dev/null))"
    waited=$((waited + 1))
    lock_wait=$((lock_wait + 1))
    # Two hours: a node e2e benchmark run may hold the e2e lock for 90 min.
    [[ ${waited} -lt 7200 ]] || die "${file} was held for two hours"
    sleep 1
  done
}
release_lock() {
  rm -f "$1"
  eval "exec $2>&-"
}
