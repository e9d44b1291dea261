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
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/trust/trusttest"
)

// Case 2 of issue 18, reproduced: a root-owned 0755 script whose #! is
// /srv/x/venv/bin/python3 in a directory owned by uid 65534 was "valid";
// validate runs the kubelet's checks, which now follow the interpreter.
func TestValidateChecksTheInterpreterOfAScript(t *testing.T) {
	dir := trustedDir(t, "config")
	file := writeFile(t, dir, "10-x.yaml", configHeader+"- name: x\n  type: Exec\n")
	binDir := trustedDir(t, "bin")
	venv := filepath.Join(filepath.Dir(binDir), "srv", "x", "venv", "bin")
	require.NoError(t, os.MkdirAll(venv, 0o755))
	python := filepath.Join(venv, "python3")
	sh, err := os.ReadFile("/bin/sh")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(python, sh, 0o755))
	writeFile(t, binDir, "x", "#!"+python+"\nprint('allowed')\n")
	require.NoError(t, os.Chmod(filepath.Join(binDir, "x"), 0o755))

	r := podadmctl(t, "", "validate", dir, "--bin-dir", binDir)
	require.Equal(t, ExitOK, r.code, r.stderr)

	require.NoError(t, trusttest.ChownToNobody(venv))
	r = podadmctl(t, "", "validate", dir, "--bin-dir", binDir)
	assert.Equal(t, ExitRejected, r.code)
	assert.Equal(t, "error: "+file+`: plugins[0]: plugin "x": untrusted interpreter of `+filepath.Join(binDir, "x")+": "+python+
		": on its path, "+venv+": owned by uid 65534, must be owned by root\n"+
		dir+": invalid pod admission configuration (1 error)\n", r.stderr)
}

// A plugin's environment is checked like its executable.
func TestValidateChecksCodeLoadingEnvironment(t *testing.T) {
	dir := trustedDir(t, "config")
	theirs := trustedDir(t, "home")
	require.NoError(t, trusttest.ChownToNobody(theirs))
	file := writeFile(t, dir, "10-x.yaml", configHeader+"- name: x\n  type: Exec\n  env:\n  - name: PYTHONPATH\n    value: "+theirs+"\n")
	binDir := trustedDir(t, "bin")
	installTestPlugin(t, binDir, "x")

	r := podadmctl(t, "", "validate", dir, "--bin-dir", binDir)
	assert.Equal(t, ExitRejected, r.code)
	assert.Equal(t, "error: "+file+`: plugins[0].env[0].value: Invalid value: "`+theirs+`": PYTHONPATH names `+theirs+
		": Python imports modules from here first, and it is not trusted: "+theirs+": owned by uid 65534, must be owned by root\n"+
		dir+": invalid pod admission configuration (1 error)\n", r.stderr)
}
