#!/usr/bin/env bash
# Installs the Debian packages a containerd runtime mode of the node e2e
# cluster needs, when any is missing:
#
#   test/e2e_node/install-host-deps.sh containerd      containerd 2.x (make containerd builds it)
#   test/e2e_node/install-host-deps.sh containerd1.6   Debian's containerd 1.6 and runc 1.1
#
#   containernetworking-plugins  bridge, host-local and loopback in /usr/lib/cni (both)
#   iproute2                     ip, to remove the CNI bridge at teardown (both)
#   containerd, runc             containerd 1.6 and runc 1.1 (containerd1.6 only)
#
# It does not start or enable containerd: the harness runs its own instance
# with its own root, state and socket. Needs root and apt.

set -euo pipefail

mode=${1:-containerd}
needed=()
[[ -x /usr/lib/cni/bridge && -x /usr/lib/cni/host-local && -x /usr/lib/cni/loopback ]] || needed+=(containernetworking-plugins)
command -v ip >/dev/null || needed+=(iproute2)
case "${mode}" in
containerd) ;;
containerd1.6)
  command -v containerd >/dev/null || needed+=(containerd)
  command -v runc >/dev/null || needed+=(runc)
  ;;
*)
  echo "usage: $0 containerd|containerd1.6" >&2
  exit 2
  ;;
esac

if [[ ${#needed[@]} -eq 0 ]]; then
  exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
  echo "error: the ${mode} mode needs ${needed[*]}; run as root: apt-get install ${needed[*]}" >&2
  exit 1
fi
if ! command -v apt-get >/dev/null; then
  echo "error: the ${mode} mode needs ${needed[*]} and this machine has no apt-get; install them, or use E2E_RUNTIME=fake" >&2
  exit 1
fi

echo ">>> installing ${needed[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# The package's maintainer script would start a system containerd where an
# init system runs; the harness runs only its own, so ask invoke-rc.d not
# to start services during this install (policy-rc.d exit 101).
if [[ ! -e /usr/sbin/policy-rc.d ]]; then
  trap 'rm -f /usr/sbin/policy-rc.d' EXIT
  printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
  chmod +x /usr/sbin/policy-rc.d
fi
# Other builds on the machine may hold apt's lock: wait for it.
apt=(apt-get -o DPkg::Lock::Timeout=900)
if ! "${apt[@]}" install -y --no-install-recommends "${needed[@]}"; then
  "${apt[@]}" update
  "${apt[@]}" install -y --no-install-recommends "${needed[@]}"
fi
