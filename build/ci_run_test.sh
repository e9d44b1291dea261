#!/usr/bin/env bash
# Tests of .ci/run's time budget with a stand-in make: make test's steps run
# whole and a failure fails CI; a long step starts only with enough budget
# left, is stopped when the budget runs out and is then reported as not
# proven, and a long step that fails fails CI.
#
#   build/ci_run_test.sh      (make test-build)

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

source "${REPO_ROOT}/build/testing.sh"

# A scratch checkout: .ci/run itself, a build/containerd.sh that does
# nothing, and a make that logs each step it runs and does what
# FAKE_<step> says (a command; default true).
mkdir -p "${work}/repo/.ci" "${work}/repo/build" "${work}/bin"
cp "${REPO_ROOT}/.ci/run" "${work}/repo/.ci/run"
printf '#!/bin/sh\nexit 0\n' >"${work}/repo/build/containerd.sh"
cat >"${work}/bin/make" <<'MAKE'
#!/usr/bin/env bash
case "$*" in
"-s test-steps") echo unit e2e ;;
"-s test-long-steps") echo slice minors ;;
*)
  echo "$1" >>"${STEPS_LOG}"
  var=FAKE_${1//-/_}
  eval "${!var:-true}"
  ;;
esac
MAKE
chmod +x "${work}/repo/.ci/run" "${work}/repo/build/containerd.sh" "${work}/bin/make"

# ci NAME [VAR=VALUE...]: runs the scratch .ci/run with the stand-in make;
# its output is in ${work}/NAME.out, the steps make ran in ${work}/NAME.steps,
# its exit code in rc.
rc=0
ci() {
  local name=$1
  shift
  rm -rf "${work}/repo/_output"
  rc=0
  env PATH="${work}/bin:${PATH}" STEPS_LOG="${work}/${name}.steps" "$@" \
    "${work}/repo/.ci/run" >"${work}/${name}.out" 2>&1 || rc=$?
  touch "${work}/${name}.steps"
}
# expect NAME RC STEPS PATTERN...: the exit code, the steps run (in order,
# space-separated) and lines the output must have.
expect() {
  local name=$1 want_rc=$2 want_steps=$3 steps pattern
  shift 3
  steps=$(paste -sd' ' "${work}/${name}.steps")
  if [[ "${rc}" != "${want_rc}" ]]; then
    fail "${name}" "exit ${rc}, want ${want_rc}; output: $(tail -n5 "${work}/${name}.out")"
    return
  fi
  if [[ "${steps}" != "${want_steps}" ]]; then
    fail "${name}" "ran '${steps}', want '${want_steps}'"
    return
  fi
  for pattern in "$@"; do
    if ! grep -qE -- "${pattern}" "${work}/${name}.out"; then
      fail "${name}" "no line matching '${pattern}' in: $(cat "${work}/${name}.out")"
      return
    fi
  done
  pass "${name}"
}

ci all-pass
expect all-pass 0 "unit e2e slice minors" '^>>> make test passed in ' '^>>> make test-all passed in '

ci test-step-fails FAKE_e2e='exit 2'
expect test-step-fails 1 "unit e2e" '^>>> e2e FAILED after '

# The slice outlives what is left of a 4 s budget: it is stopped, and the
# minors, with 2 s needed and none left, do not start. CI passes on make
# test and says what it did not prove.
ci long-step-stopped CI_BUDGET_SECONDS=4 CI_LONG_STEP_MIN_SECONDS=2 FAKE_slice='sleep 60'
expect long-step-stopped 0 "unit e2e slice" \
  '^>>> NOT PROVEN by this run: slice: stopped at the budget after [0-9]+s' \
  '^>>> NOT PROVEN by this run: minors: not started, -?[0-9]+s of the 4s budget left' \
  '^>>> make test passed; make test-all did not run whole'
if grep -q 'make test-all passed' "${work}/long-step-stopped.out"; then
  fail long-step-stopped-claims "it says make test-all passed"
else
  pass long-step-stopped-claims
fi

ci long-step-not-started CI_BUDGET_SECONDS=100 CI_LONG_STEP_MIN_SECONDS=200
expect long-step-not-started 0 "unit e2e" \
  '^>>> NOT PROVEN by this run: slice: not started' \
  '^>>> NOT PROVEN by this run: minors: not started'

ci long-step-fails FAKE_slice='exit 3'
expect long-step-fails 1 "unit e2e slice" '^>>> slice FAILED after '

test_summary
