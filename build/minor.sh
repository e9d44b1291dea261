#!/usr/bin/env bash
# Names the maintained minors for the Makefile:
#
#   build/minor.sh [UPSTREAM]   the series UPSTREAM (v1.36.3 or 1-36) selects,
#                               or the default one (the newest that builds)
#   build/minor.sh list         every series, oldest first
#   build/minor.sh buildable    the series whose kubelet builds here
#   build/minor.sh default      the default series

set -euo pipefail
case "${1:-}" in
list | buildable | default)
  UPSTREAM='' source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
  case "$1" in
  list) all_minors ;;
  buildable) buildable_minors ;;
  default) default_minor ;;
  esac
  ;;
*)
  UPSTREAM=${1:-} source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
  echo "${MINOR}"
  ;;
esac
