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

package podadmission

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/trust/trusttest"
)

// Case 2 of issue 18: a plugin's env pointing the dynamic loader or an
// interpreter at another user's directory was accepted, and that user's
// code ran as root at every call.
func TestLoadNodeConfigRefusesCodeLoadingEnvironmentOnUntrustedPaths(t *testing.T) {
	dir := configDir(t)
	root := filepath.Dir(dir)
	binDir := filepath.Join(root, "bin")
	require.NoError(t, os.Mkdir(binDir, 0o755))
	theirs := filepath.Join(root, "home", "nobody")
	require.NoError(t, os.MkdirAll(theirs, 0o755))
	require.NoError(t, trusttest.ChownToNobody(theirs))
	file := filepath.Join(dir, "10-a.yaml")
	writeConfigFile(t, file, fmt.Sprintf(`apiVersion: podadmission.kubelet.config.k8s.io/v1alpha1
kind: PodAdmissionConfiguration
plugins:
- name: p
  type: Exec
  env:
  - name: ZONE
    value: eu-1
  - name: LD_PRELOAD
    value: %[1]s/hook.so
  - name: NODE_OPTIONS
    value: --require=x
  - name: LD_LIBRARY_PATH
    value: /usr/lib
`, theirs))

	_, err := LoadNodeConfig(dir, binDir)
	require.EqualError(t, err, fmt.Sprintf(`[%[1]s: plugins[0].env[1].value: Invalid value: "%[2]s/hook.so": LD_PRELOAD names %[2]s/hook.so: the dynamic loader loads these libraries first, and it is not trusted: %[2]s/hook.so: on its path, %[2]s: owned by uid 65534, must be owned by root, `+
		`%[1]s: plugins[0].env[2].name: Forbidden: NODE_OPTIONS: Node.js takes these as command line options (--require, --import load code), which cannot be checked: set the interpreter's options on its #! line or in the plugin's args instead]`,
		file, theirs))

	writeConfigFile(t, file, `apiVersion: podadmission.kubelet.config.k8s.io/v1alpha1
kind: PodAdmissionConfiguration
plugins:
- name: p
  type: Exec
  env:
  - name: LD_LIBRARY_PATH
    value: /usr/lib:/lib
`)
	_, err = LoadNodeConfig(dir, binDir)
	require.NoError(t, err, "trusted paths pass")
}
