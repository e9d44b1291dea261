#!/usr/bin/env bash
# Installs Debian packages this repository's make targets need, when any is
# missing:  build/host-deps.sh COMMAND=PACKAGE...
# e.g.      build/host-deps.sh protoc=protobuf-compiler
# Needs root and apt-get; otherwise it says what to install and fails.

set -euo pipefail

needed=()
for pair in "$@"; do
  command -v "${pair%%=*}" >/dev/null || needed+=("${pair#*=}")
done
[[ ${#needed[@]} -gt 0 ]] || exit 0

if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null; then
  echo "error: missing ${needed[*]}; install them (Debian: apt-get install ${needed[*]})" >&2
  exit 1
fi
echo ">>> installing ${needed[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y -qq --no-install-recommends "${needed[@]}" >/dev/null; then
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${needed[@]}" >/dev/null
fi
