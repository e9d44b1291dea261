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

package app

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checkSetup is a configuration directory with the test plugin installed
// under each Exec plugin's name, and a pod manifest.
type checkSetup struct {
	configDir, binDir, podFile string
}

func newCheckSetup(t *testing.T, plugins string, binaries ...string) *checkSetup {
	t.Helper()
	s := &checkSetup{configDir: trustedDir(t, "config"), binDir: trustedDir(t, "bin")}
	writeFile(t, s.configDir, "10-test.yaml", configHeader+plugins)
	installTestPlugin(t, s.binDir, binaries...)
	s.podFile = writeFile(t, t.TempDir(), "pod.yaml", webPod)
	return s
}

func (s *checkSetup) check(t *testing.T, args ...string) ctlResult {
	t.Helper()
	return podadmctl(t, "", append([]string{"check", "-f", s.podFile, "--config", s.configDir, "--bin-dir", s.binDir, "--node-name", "node-1"}, args...)...)
}

func TestCheckAdmitted(t *testing.T) {
	s := newCheckSetup(t, "- name: allow\n  type: Exec\n- name: only-prod\n  type: Exec\n  args: [--mode=deny]\n  match:\n    namespaces: [prod]\n", "allow", "only-prod")
	r := s.check(t)
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Empty(t, r.stderr)
	assert.Regexp(t, `(?m)^PLUGIN\s+TYPE\s+DECISION\s+REASON\s+LATENCY\s+MESSAGE$`, r.stdout)
	assert.Regexp(t, `(?m)^allow\s+Exec\s+Allowed\s+-\s+[0-9.]+(ms|µs|s)\s+-$`, r.stdout)
	assert.Regexp(t, `(?m)^only-prod\s+Exec\s+NotMatched\s+-\s+-\s+-$`, r.stdout)
	assert.Contains(t, r.stdout, "default/web: Admitted: the pod starts.\n")
}

func TestCheckBlockedShowsEveryDecisionAndThePodStatus(t *testing.T) {
	s := newCheckSetup(t, `- name: allow
  type: Exec
- name: deny
  type: Exec
  args: [--mode=deny, --reason=ImageNotSigned, "--message=registry.example/web:1 is not signed", --retry-after=30s]
- name: crash
  type: Exec
  args: [--mode=crash]
`, "allow", "deny", "crash")

	r := s.check(t)
	assert.Equal(t, ExitRejected, r.code, r.stderr)
	assert.Empty(t, r.stderr, "decision logs are for -v")
	assert.Regexp(t, `(?m)^deny\s+Exec\s+Rejected\s+ImageNotSigned\s+\S+\s+registry.example/web:1 is not signed$`, r.stdout)
	assert.Regexp(t, `(?m)^crash\s+Exec\s+Failed \(not called by the kubelet\)\s+-\s+\S+\s+exited with code 3; stderr: "testplugin: crashing as asked"$`, r.stdout)
	assert.Contains(t, r.stdout, `default/web: Blocked by plugin "deny": the pod stays Pending, re-evaluated until admitted.
  reason:  ImageNotSigned
  message: Pod admission plugin "deny" rejected the pod: registry.example/web:1 is not signed
`)

	r = s.check(t, "-o", "json")
	assert.Equal(t, ExitRejected, r.code, r.stderr)
	var report checkReport
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &report))
	assert.Equal(t, "default/web", report.Pod)
	assert.False(t, report.Admitted)
	assert.Equal(t, VerdictBlocked, report.Verdict)
	assert.Equal(t, "deny", report.RejectedBy)
	assert.Equal(t, "ImageNotSigned", report.Reason)
	assert.Equal(t, `Pod admission plugin "deny" rejected the pod: registry.example/web:1 is not signed`, report.Message)
	require.Len(t, report.Plugins, 3)
	assert.Equal(t, "Allowed", string(report.Plugins[0].Decision))
	assert.Positive(t, report.Plugins[0].LatencySeconds)
	assert.Equal(t, filepath.Join(s.configDir, "10-test.yaml"), report.Plugins[1].File)
	require.NotNil(t, report.Plugins[1].RetryAfterSeconds)
	assert.EqualValues(t, 30, *report.Plugins[1].RetryAfterSeconds)
	assert.False(t, report.Plugins[1].AfterRejection)
	assert.Equal(t, "Failed", string(report.Plugins[2].Decision))
	assert.True(t, report.Plugins[2].AfterRejection)
	assert.Equal(t, "exited with code 3", report.Plugins[2].Error)
}

func TestCheckHardRejection(t *testing.T) {
	s := newCheckSetup(t, "- name: deny\n  type: Exec\n  rejectionMode: Hard\n  args: [--mode=deny, --reason=NotHere]\n", "deny")
	r := s.check(t)
	assert.Equal(t, ExitRejected, r.code, r.stderr)
	assert.Contains(t, r.stdout, `default/web: Rejected by plugin "deny" (rejectionMode Hard): the pod fails.`)
}

func TestCheckReadsThePodFromStdin(t *testing.T) {
	s := newCheckSetup(t, "- name: allow\n  type: Exec\n", "allow")
	r := podadmctl(t, webPod, "check", "-f", "-", "--config", s.configDir, "--bin-dir", s.binDir, "--node-name", "node-1")
	assert.Equal(t, ExitOK, r.code, r.stderr)

	r = podadmctl(t, "apiVersion: v1\nkind: Service\n", "check", "-f", "-", "--config", s.configDir, "--bin-dir", s.binDir)
	assert.Equal(t, ExitError, r.code)
	assert.Contains(t, r.stderr, `error: <stdin>: apiVersion "v1", kind "Service": want apiVersion "v1", kind "Pod"`)
}

func TestCheckErrors(t *testing.T) {
	s := newCheckSetup(t, "- name: allow\n  type: Exec\n", "allow")
	badConfig := trustedDir(t, "bad")
	badFile := writeFile(t, badConfig, "10-bad.yaml", configHeader+"- name: x\n  type: Carrier Pigeon\n")
	missingPod := filepath.Join(t.TempDir(), "missing.yaml")

	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"no pod":      {[]string{"check", "--config", s.configDir}, "error: -f/--filename is required: the pod manifest to check\n"},
		"missing pod": {[]string{"check", "-f", missingPod, "--config", s.configDir}, "error: open " + missingPod + ": no such file or directory\n"},
		"bad output":  {[]string{"check", "-f", s.podFile, "-o", "yaml"}, "error: --output \"yaml\": want table or json\n"},
		"stray arg":   {[]string{"check", "-f", s.podFile, "extra"}, "error: podadmctl check needs no arguments (the pod comes from -f), got 1 argument\n"},
		"bad config": {[]string{"check", "-f", s.podFile, "--config", badConfig}, "error: " + badFile + ": plugins[0].type: Unsupported value: \"Carrier Pigeon\": supported values: \"Exec\", \"GRPC\"\n" +
			"error: " + badFile + ": plugins[0].maxConcurrentCalls: Required value\n" +
			"error: " + badConfig + ": invalid pod admission configuration\n"},
		"no bin dir":   {[]string{"check", "-f", s.podFile, "--config", s.configDir, "--bin-dir", "/nonexistent"}, `error: --bin-dir /nonexistent is not a directory; it must hold the executable of the Exec plugin "allow" (` + filepath.Join(s.configDir, "10-test.yaml") + ")\n"},
		"unknown flag": {[]string{"check", "--frobnicate"}, "unknown flag: --frobnicate"},
	} {
		t.Run(name, func(t *testing.T) {
			r := podadmctl(t, "", tc.args...)
			assert.Equal(t, ExitError, r.code)
			assert.Contains(t, r.stderr, tc.want)
			assert.NotContains(t, r.stdout, "Admitted")
		})
	}
}

func TestCheckNoPlugins(t *testing.T) {
	s := &checkSetup{configDir: trustedDir(t, "config"), binDir: trustedDir(t, "bin"), podFile: writeFile(t, t.TempDir(), "pod.yaml", webPod)}
	r := s.check(t)
	assert.Equal(t, ExitOK, r.code, r.stderr)
	assert.Equal(t, "No plugins configured.\ndefault/web: Admitted: the pod starts.\n", r.stdout)
}

func TestVersion(t *testing.T) {
	r := podadmctl(t, "", "version")
	assert.Equal(t, ExitOK, r.code, r.stderr)
	assert.Regexp(t, `^podadmctl v\S+ \(commit .*, built .*, go1\.\d+.*, linux/\w+\)\n$`, r.stdout)

	r = podadmctl(t, "", "version", "-o", "json")
	assert.Equal(t, ExitOK, r.code, r.stderr)
	var info map[string]string
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &info))
	assert.Contains(t, info, "gitVersion")
	assert.Contains(t, info, "gitCommit")

	r = podadmctl(t, "", "version", "-o", "yaml")
	assert.Equal(t, ExitError, r.code)
	assert.Equal(t, "error: --output \"yaml\": want json, or nothing for one line\n", r.stderr)
}

func TestVersionStampedByTheBuild(t *testing.T) {
	out := filepath.Join(t.TempDir(), "podadmctl")
	ldflags := "-X k8s.io/component-base/version.gitVersion=v1.37.2+podadmission.9 -X k8s.io/component-base/version.gitCommit=abc123"
	build := exec.Command("go", "build", "-o", out, "-ldflags", ldflags, "github.com/podadmission/podadmission/cmd/podadmctl")
	output, err := build.CombinedOutput()
	require.NoError(t, err, string(output))
	got, err := exec.Command(out, "version").CombinedOutput()
	require.NoError(t, err, string(got))
	assert.Regexp(t, `^podadmctl v1\.37\.2\+podadmission\.9 \(commit abc123, `, string(got))
}

// TestCheckUpdate: with --old, check sends an Update, as the kubelet does
// for a running pod whose containers changed; a rejection holds the new
// containers whatever the rejectionMode.
func TestCheckUpdate(t *testing.T) {
	s := newCheckSetup(t, "- name: images\n  type: Exec\n  rejectionMode: Hard\n  args: [--mode=allow, --deny-images=registry.example/evil:1]\n", "images")
	replaced := writeFile(t, t.TempDir(), "replaced.yaml", strings.Replace(webPod, "registry.example/web:1", "registry.example/evil:1", 1))
	check := func(pod, old string, args ...string) ctlResult {
		return podadmctl(t, "", append([]string{"check", "-f", pod, "--old", old, "--config", s.configDir, "--bin-dir", s.binDir, "--node-name", "node-1"}, args...)...)
	}

	r := check(replaced, s.podFile)
	assert.Equal(t, ExitRejected, r.code, r.stderr)
	assert.Contains(t, r.stdout, `default/web: Blocked by plugin "images": the update's new containers are not started, what runs keeps running; re-evaluated until admitted.
  reason:  ImageNotAllowed
  message: Pod admission plugin "images" rejected the pod: image "registry.example/evil:1" is not allowed on this node
`)
	r = check(replaced, s.podFile, "-o", "json")
	var report checkReport
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &report), r.stdout)
	assert.True(t, report.Update)
	assert.Equal(t, VerdictBlocked, report.Verdict, "an update is held, never failed")

	r = check(s.podFile, s.podFile)
	assert.Equal(t, ExitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "default/web: Admitted: the update's new containers start.\n")

	other := writeFile(t, t.TempDir(), "other.yaml", strings.Replace(webPod, "name: web\n", "name: other\n", 1))
	r = check(s.podFile, other)
	assert.Equal(t, ExitError, r.code)
	assert.Contains(t, r.stderr, "--old "+other+" is pod default/other")
}
