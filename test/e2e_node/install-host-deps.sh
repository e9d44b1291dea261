#!/usr/bin/env bash
# Installs the host packages the node e2e cluster's containerd mode needs,
# from Debian's archive, when any is missing:
#
#   containerd, runc             the container runtime (containerd 1.6, runc 1.1)
#   containernetworking-plugins  bridge, host-local and loopback in /usr/lib/cni
#   iproute2                     ip, to remove the CNI bridge at teardown
#
# It does not start or enable containerd: the harness runs its own instance
# with its own root, state and socket. Needs root and apt.

set -euo pipefail

needed=()
command -v containerd >/dev/null || needed+=(containerd)
command -v runc >/dev/null || needed+=(runc)
[[ -x /usr/lib/cni/bridge && -x /usr/lib/cni/host-local && -x /usr/lib/cni/loopback ]] || needed+=(containernetworking-plugins)
command -v ip >/dev/null || needed+=(iproute2)

if [[ ${#needed[@]} -eq 0 ]]; then
  exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
  echo "error: the containerd mode needs ${needed[*]}; run as root: apt-get install ${needed[*]}" >&2
  exit 1
fi
if ! command -v apt-get >/dev/null; then
  echo "error: the containerd mode needs ${needed[*]} and this machine has no apt-get; install them, or use E2E_RUNTIME=fake" >&2
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
if ! apt-get install -y --no-install-recommends "${needed[@]}"; then
  apt-get update
  apt-get install -y --no-install-recommends "${needed[@]}"
fi
