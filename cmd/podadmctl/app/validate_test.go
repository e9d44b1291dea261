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
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/podadmission/podadmission/pkg/apis/config/scheme"
)

func TestValidateValidDirectoryListsPluginsInOrder(t *testing.T) {
	dir := trustedDir(t, "config")
	writeFile(t, dir, "20-gate.yaml", configHeader+`- name: gate
  type: GRPC
  endpoint: unix:///run/gate.sock
  match:
    excludeNamespaces: [kube-system]
    podSource: API
`)
	writeFile(t, dir, "10-pss.yaml", configHeader+`- name: pss
  type: Exec
  timeout: 2s
  maxBlockedDuration: 10m
`)
	writeFile(t, dir, "README.md", "not configuration")
	binDir := trustedDir(t, "bin")
	installTestPlugin(t, binDir, "pss")

	r := podadmctl(t, "", "validate", dir, "--bin-dir", binDir)
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Empty(t, r.stderr)
	assert.Contains(t, r.stdout, dir+": valid: 2 plugins in 2 files, in evaluation order")
	assert.Regexp(t, `(?m)^1\s+pss\s+Exec\s+\S+/10-pss.yaml\s+2s\s+Fail\s+Soft \(Hard after 10m0s\)\s+all pods$`, r.stdout)
	assert.Regexp(t, `(?m)^2\s+gate\s+GRPC\s+\S+/20-gate.yaml\s+5s\s+Fail\s+Soft\s+source=API excludeNamespaces=kube-system$`, r.stdout)
}

// An executable that is not installed yet is no error for the kubelet (the
// plugin holds its pods until it is), so it is none for validate either: a
// warning. The default bin dir is the release's.
func TestValidateWarnsAboutExecutablesNotInstalledYet(t *testing.T) {
	dir := trustedDir(t, "config")
	file := writeFile(t, dir, "10-pss.yaml", configHeader+"- name: pss\n  type: Exec\n")
	binDir := trustedDir(t, "bin")

	r := podadmctl(t, "", "validate", dir, "--bin-dir", binDir)
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Equal(t, "warning: "+file+`: plugins[0]: plugin "pss": executable `+filepath.Join(binDir, "pss")+" does not exist: the kubelet holds the pods this plugin matches until it is installed\n", r.stderr)
	assert.Contains(t, r.stdout, dir+": valid: 1 plugin in 1 file, in evaluation order")

	r = podadmctl(t, "", "validate", dir)
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Equal(t, "warning: "+file+`: plugins[0]: plugin "pss": executable `+filepath.Join(defaultBinDir, "pss")+" does not exist: the kubelet holds the pods this plugin matches until it is installed\n", r.stderr)

	// A kubelet without --pod-admission-plugin-bin-dir refuses Exec plugins.
	r = podadmctl(t, "", "validate", dir, "--bin-dir", "")
	assert.Equal(t, ExitRejected, r.code)
	assert.Equal(t, "error: "+file+`: plugins[0].type: Invalid value: "Exec": Exec plugins need the kubelet flag --pod-admission-plugin-bin-dir`+"\n"+
		dir+": invalid pod admission configuration (1 error)\n", r.stderr)
}

func TestValidateEmptyDirectoryAdmitsEverything(t *testing.T) {
	r := podadmctl(t, "", "validate", trustedDir(t, "config"))
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "valid: 0 plugins in 0 files")
	assert.Contains(t, r.stdout, "No plugins: the kubelet admits every pod.")
}

func TestValidateReportsEveryErrorWithFileAndField(t *testing.T) {
	dir := trustedDir(t, "config")
	first := writeFile(t, dir, "10-first.yaml", configHeader+`- name: dup
  type: Exec
`)
	bad := writeFile(t, dir, "15-bad.yaml", configHeader+`- name: slow
  type: Exec
  timeout: 0s
- name: gate
  type: GRPC
  endpoint: relative.sock
`)
	second := writeFile(t, dir, "20-second.yaml", configHeader+`- name: dup
  type: Exec
`)
	third := writeFile(t, dir, "30-typo.yaml", configHeader+`- name: typo
  type: Exec
  timeot: 1s
`)

	r := podadmctl(t, "", "validate", dir)
	assert.Equal(t, ExitRejected, r.code)
	assert.Empty(t, r.stdout)
	for _, want := range []string{
		"error: " + bad + `: plugins[0].timeout: Invalid value: "0s": must be greater than 0` + "\n",
		"error: " + bad + `: plugins[1].endpoint: Invalid value: "relative.sock": must be a unix socket`,
		"error: " + second + `: plugins[0].name: Duplicate value: "dup": already defined in ` + first + " at plugins[0]\n",
		"error: " + third + `: strict decoding error: unknown field "plugins[0].timeot"` + "\n",
		dir + ": invalid pod admission configuration (4 errors)\n",
	} {
		assert.Contains(t, r.stderr, want)
	}
}

func TestValidateRefusesUntrustedFiles(t *testing.T) {
	dir := trustedDir(t, "config")
	file := writeFile(t, dir, "10-pss.yaml", configHeader+"- name: pss\n  type: Exec\n")
	require.NoError(t, os.Chmod(file, 0o666))

	r := podadmctl(t, "", "validate", file)
	assert.Equal(t, ExitRejected, r.code)
	assert.Contains(t, r.stderr, "error: "+file+": mode 0666 is group or world writable\n")
}

func TestValidateMissingPath(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope")
	r := podadmctl(t, "", "validate", missing)
	assert.Equal(t, ExitRejected, r.code)
	assert.Contains(t, r.stderr, "error: "+missing+": no such file or directory\n")
}

func TestValidateChecksExecutablesWithBinDir(t *testing.T) {
	dir := trustedDir(t, "config")
	file := writeFile(t, dir, "10-plugins.yaml", configHeader+`- name: present
  type: Exec
- name: missing
  type: Exec
- name: writable
  type: Exec
- name: not-executable
  type: Exec
- name: gate
  type: GRPC
  endpoint: /run/gate.sock
`)
	binDir := trustedDir(t, "bin")
	installTestPlugin(t, binDir, "present", "writable", "not-executable")
	require.NoError(t, os.Chmod(filepath.Join(binDir, "writable"), 0o777))
	require.NoError(t, os.Chmod(filepath.Join(binDir, "not-executable"), 0o644))

	r := podadmctl(t, "", "validate", dir, "--bin-dir", binDir)
	assert.Equal(t, ExitRejected, r.code)
	assert.Equal(t, "error: "+file+`: plugins[2]: plugin "writable": untrusted executable: `+filepath.Join(binDir, "writable")+": mode 0777 is group or world writable\n"+
		"error: "+file+`: plugins[3]: plugin "not-executable": executable `+filepath.Join(binDir, "not-executable")+" is not executable (mode 0644)\n"+
		dir+": invalid pod admission configuration (2 errors)\n", r.stderr, "the missing executable is not an error: the configuration is invalid for the others")

	require.NoError(t, os.Chmod(filepath.Join(binDir, "writable"), 0o755))
	require.NoError(t, os.Chmod(filepath.Join(binDir, "not-executable"), 0o755))
	r = podadmctl(t, "", "validate", dir, "--bin-dir", binDir)
	assert.Equal(t, ExitOK, r.code)
	assert.Equal(t, "warning: "+file+`: plugins[1]: plugin "missing": executable `+filepath.Join(binDir, "missing")+" does not exist: the kubelet holds the pods this plugin matches until it is installed\n", r.stderr)

	r = podadmctl(t, "", "validate", dir, "--bin-dir", "relative/bin")
	assert.Equal(t, ExitError, r.code)
	assert.Equal(t, `error: --bin-dir "relative/bin": must be an absolute path, as the kubelet's --pod-admission-plugin-bin-dir`+"\n", r.stderr)
}

func TestValidateYAMLPrintsTheDefaultedConfigurationPerFile(t *testing.T) {
	dir := trustedDir(t, "config")
	first := writeFile(t, dir, "10-pss.yaml", configHeader+"- name: pss\n  type: Exec\n")
	second := writeFile(t, dir, "20-empty.yaml", configHeader+"  []\n")

	r := podadmctl(t, "", "validate", dir, "-o", "yaml")
	require.Equal(t, ExitOK, r.code, r.stderr)
	docs := strings.Split(r.stdout, "\n---\n")
	require.Len(t, docs, 2)
	assert.Contains(t, docs[0], "# "+first+"\n")
	assert.Contains(t, docs[1], "# "+second+"\n")

	// What it prints is a configuration the kubelet reads back as is.
	cfg, err := scheme.Decode([]byte(docs[0]))
	require.NoError(t, err)
	require.Len(t, cfg.Plugins, 1)
	assert.Equal(t, "pss", cfg.Plugins[0].Name)
	assert.Contains(t, docs[0], "timeout: 5s")
	assert.Contains(t, docs[0], "failurePolicy: Fail")
	assert.Contains(t, docs[0], "maxConcurrentCalls: 4")
	cfg, err = scheme.Decode([]byte(docs[1]))
	require.NoError(t, err)
	assert.Empty(t, cfg.Plugins)
}

func TestValidateUsageErrors(t *testing.T) {
	r := podadmctl(t, "", "validate")
	assert.Equal(t, ExitError, r.code)
	assert.Equal(t, "error: podadmctl validate needs PATH, got 0 arguments\n", r.stderr)

	r = podadmctl(t, "", "validate", trustedDir(t, "config"), "-o", "xml")
	assert.Equal(t, ExitError, r.code)
	assert.Equal(t, "error: --output \"xml\": want text or yaml\n", r.stderr)
}

// validate --bin-dir checks the bin dir and, through symlinks, every
// directory on the way to each executable, as the kubelet does.
func TestValidateChecksTheBinDirAndTheWholePathOfExecutables(t *testing.T) {
	dir := trustedDir(t, "config")
	file := writeFile(t, dir, "10-plugins.yaml", configHeader+"- name: linked\n  type: Exec\n")
	binDir := trustedDir(t, "bin")
	vendor := trustedDir(t, "vendor")
	installTestPlugin(t, vendor, "linked")
	require.NoError(t, os.Symlink(filepath.Join(vendor, "linked"), filepath.Join(binDir, "linked")))

	r := podadmctl(t, "", "validate", dir, "--bin-dir", binDir)
	require.Equal(t, ExitOK, r.code, r.stderr)

	require.NoError(t, os.Chown(vendor, 65534, 65534))
	r = podadmctl(t, "", "validate", dir, "--bin-dir", binDir)
	assert.Equal(t, ExitRejected, r.code)
	assert.Equal(t, "error: "+file+`: plugins[0]: plugin "linked": untrusted executable: `+filepath.Join(binDir, "linked")+": on its path, "+vendor+": owned by uid 65534, must be owned by root\n"+
		dir+": invalid pod admission configuration (1 error)\n", r.stderr)

	require.NoError(t, os.Chmod(binDir, 0o775))
	r = podadmctl(t, "", "validate", dir, "--bin-dir", binDir)
	assert.Equal(t, ExitRejected, r.code)
	assert.Equal(t, "error: untrusted plugin bin dir: "+binDir+": mode 0775 is group or world writable\n"+
		dir+": invalid pod admission configuration (1 error)\n", r.stderr)
}
