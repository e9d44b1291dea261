#!/usr/bin/env bash
# What the tests of the build scripts share (build/deps_test.sh,
# build/ci_run_test.sh; sourced after lib.sh): a scratch directory, work,
# removed on exit, and the ok/FAIL lines with their count.
#
#   pass NAME          one test passed
#   fail NAME REASON   one test failed, and why
#   test_summary       "N tests, M failures"; fails when M > 0

work=$(mktemp -d)
trap 'rm -rf "${work}"' EXIT
failures=0
tests=0

pass() { tests=$((tests + 1)); echo "ok   $1"; }
fail() { tests=$((tests + 1)); failures=$((failures + 1)); echo "FAIL $1: $2"; }

test_summary() {
  echo "${tests} tests, ${failures} failures"
  ((failures == 0))
}
