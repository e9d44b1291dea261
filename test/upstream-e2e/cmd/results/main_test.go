/*
Copyright The podadmission Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func writeJUnit(t *testing.T, dir string, cases string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "junit_01.xml"), []byte(`<?xml version="1.0" encoding="UTF-8"?>
<testsuites><testsuite name="E2eNode Suite">`+cases+`</testsuite></testsuites>`), 0o644))
}

func loadAll(t *testing.T, dirs []string, names ...string) []*configuration {
	t.Helper()
	var configs []*configuration
	for _, name := range names {
		c := &configuration{name: name, tests: map[string]testcase{}}
		for _, d := range dirs {
			require.NoError(t, c.load(filepath.Join(d, name)))
		}
		c.classify()
		configs = append(configs, c)
	}
	return configs
}

func TestReportCountsAndDiffsPassSets(t *testing.T) {
	run := t.TempDir()
	writeJUnit(t, filepath.Join(run, "vanilla"), `
<testcase name="[It] a" status="passed"></testcase>
<testcase name="[It] b" status="passed"></testcase>
<testcase name="[It] needs nginx" status="failed"><failure message="image not found&#10;more">trace</failure></testcase>
<testcase name="[It] gpu" status="skipped"><skipped message="no gpu"/></testcase>
<testcase name="[It] not selected" status="skipped"><skipped message="skipped"/></testcase>`)
	writeJUnit(t, filepath.Join(run, "gate-on"), `
<testcase name="[It] a" status="passed"></testcase>
<testcase name="[It] b" status="failed"><failure message="timed out waiting for pod"></failure></testcase>
<testcase name="[It] needs nginx" status="failed"><failure message="image not found"></failure></testcase>
<testcase name="[It] gpu" status="skipped"><skipped message="no gpu"/></testcase>`)
	writeJUnit(t, filepath.Join(run, "gate-off"), `
<testcase name="[It] a" status="passed"></testcase>
<testcase name="[It] b" status="passed"></testcase>
<testcase name="[It] needs nginx" status="passed"></testcase>`)
	require.NoError(t, os.WriteFile(filepath.Join(run, "vanilla", "runtime-versions.txt"), []byte(`containerd github.com/containerd/containerd/v2 v2.4.2 h1:p6Qg+xbEz8lvwdhHDx0U469xENvp4LgGBx+E7djXkGw=
runc version 1.5.3
commit: h1:y3GUIW7J0Gxd+tCFfWR6L1YDnhHiNR1BGRx1J50+VnA=
spec: 1.3.0
`), 0o644))

	configs := loadAll(t, []string{run}, "vanilla", "gate-off", "gate-on")
	causes := causeList{{regexp.MustCompile(`nginx`), "the nginx image is not built here"}}
	var out bytes.Buffer
	regressions := report(&out, configs, causes, "make x", "")
	assert.Equal(t, 1, regressions, "b passes on vanilla and fails with the gate on")
	md := out.String()
	assert.Contains(t, md, "| vanilla | ? | containerd v2.4.2, runc 1.5.3 | 2 | 1 | 1 | 0 s |")
	assert.Contains(t, md, "| gate-on | ? | ? | 1 | 2 | 1 | 0 s |")
	assert.Contains(t, md, "**gate-off**: 0 passed on vanilla and not here, 1 passed here and not on vanilla.")
	assert.Contains(t, md, "gained: `[It] needs nginx` (on vanilla: failed: image not found)")
	assert.Contains(t, md, "lost: `[It] b` (failed: timed out waiting for pod) — a bug: not root-caused yet")
	assert.Contains(t, md, "| `[It] needs nginx` | vanilla, gate-on | the nginx image is not built here |")
}

func TestReportSamePassSets(t *testing.T) {
	run := t.TempDir()
	for _, c := range []string{"vanilla", "gate-on"} {
		writeJUnit(t, filepath.Join(run, c), `<testcase name="[It] a" status="passed"></testcase>`)
	}
	var out bytes.Buffer
	assert.Zero(t, report(&out, loadAll(t, []string{run}, "vanilla", "gate-on"), nil, "", ""))
	assert.Contains(t, out.String(), "**gate-on**: the same pass set as vanilla (1 tests).")
	assert.Contains(t, out.String(), "## Tests that fail on vanilla too\n\nNone.")
}

func TestPartsMergeAndASkipDoesNotHideAResult(t *testing.T) {
	conformance, serial := t.TempDir(), t.TempDir()
	writeJUnit(t, filepath.Join(conformance, "vanilla"), `
<testcase name="[It] serial one" status="skipped"><skipped message="skipped"/></testcase>
<testcase name="[It] parallel one" status="passed"></testcase>`)
	writeJUnit(t, filepath.Join(serial, "vanilla"), `
<testcase name="[It] serial one" status="passed"></testcase>
<testcase name="[It] parallel one" status="skipped"><skipped message="skipped"/></testcase>`)
	c := loadAll(t, []string{conformance, serial}, "vanilla")[0]
	assert.Equal(t, []string{"[It] parallel one", "[It] serial one"}, c.passed)
	assert.Empty(t, c.skipped)
}

func TestMissingReportIsAnError(t *testing.T) {
	c := &configuration{name: "vanilla", tests: map[string]testcase{}}
	err := c.load(filepath.Join(t.TempDir(), "vanilla"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no JUnit report")
}

func TestBadCausesLine(t *testing.T) {
	f := filepath.Join(t.TempDir(), "causes.tsv")
	require.NoError(t, os.WriteFile(f, []byte("# comment\nno tab here\n"), 0o644))
	_, err := readCauses(f)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "causes.tsv:2: want regexp<TAB>cause")
}

func writeExitCode(t *testing.T, dir, code string) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "exit-code"), []byte(code+"\n"), 0o644))
}

func TestCheckNamesEveryFailedTest(t *testing.T) {
	run := t.TempDir()
	dir := filepath.Join(run, "gate-on")
	writeJUnit(t, dir, `
<testcase name="[It] a" status="passed"></testcase>
<testcase name="[It] b" status="failed"><failure message="timed out waiting for pod&#10;more"></failure></testcase>
<testcase name="[It] PodAdmissionPlugin [Feature:PodAdmissionPlugin] holds" status="failed"><failure message="pod never admitted"></failure></testcase>`)
	writeExitCode(t, dir, "1")
	var out bytes.Buffer
	assert.Equal(t, 3, checkRun(&out, loadAll(t, []string{run}, "gate-on")))
	assert.Contains(t, out.String(), "gate-on: FAILED [It] b: timed out waiting for pod\n")
	assert.Contains(t, out.String(), "gate-on: FAILED [It] PodAdmissionPlugin [Feature:PodAdmissionPlugin] holds: pod never admitted\n", "the feature's own tests are checked too")
	assert.Contains(t, out.String(), "gate-on: the suite exited 1: see "+filepath.Join(dir, "build-log.txt"))
}

func TestCheckFailsASuiteExitWithoutAFailedTest(t *testing.T) {
	run := t.TempDir()
	dir := filepath.Join(run, "gate-on")
	writeJUnit(t, dir, `<testcase name="[It] a" status="passed"></testcase>`)
	writeExitCode(t, dir, "1")
	var out bytes.Buffer
	assert.Equal(t, 1, checkRun(&out, loadAll(t, []string{run}, "gate-on")), "a failed set-up node fails no test of the report")
	assert.Contains(t, out.String(), "gate-on: the suite exited 1")
}

func TestCheckFailsARunWhereNothingPassed(t *testing.T) {
	run := t.TempDir()
	dir := filepath.Join(run, "gate-on")
	writeJUnit(t, dir, `<testcase name="[It] a" status="skipped"><skipped message="skipped"/></testcase>`)
	writeExitCode(t, dir, "0")
	var out bytes.Buffer
	assert.Equal(t, 1, checkRun(&out, loadAll(t, []string{run}, "gate-on")))
	assert.Equal(t, "gate-on: no test passed\n", out.String())
}

func TestCheckPassesAGreenRun(t *testing.T) {
	run := t.TempDir()
	dir := filepath.Join(run, "gate-on")
	writeJUnit(t, dir, `
<testcase name="[It] a" status="passed"></testcase>
<testcase name="[It] PodAdmissionPlugin [Feature:PodAdmissionPlugin] holds" status="passed"></testcase>
<testcase name="[It] gpu" status="skipped"><skipped message="no gpu"/></testcase>`)
	writeExitCode(t, dir, "0")
	var out bytes.Buffer
	assert.Zero(t, checkRun(&out, loadAll(t, []string{run}, "gate-on")))
	assert.Equal(t, "gate-on: 2 tests passed, 1 skipped, none failed\n", out.String())
}
