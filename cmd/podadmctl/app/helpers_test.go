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
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/podadmission/podadmission/test/testplugin/build"
)

func TestMain(m *testing.M) {
	code := m.Run()
	build.Cleanup()
	os.Exit(code)
}

const configHeader = "apiVersion: podadmission.kubelet.config.k8s.io/v1alpha1\nkind: PodAdmissionConfiguration\nplugins:\n"

// trustedDir returns a new directory the kubelet's trust checks accept when
// the tests run as root (root owned, mode 0755).
func trustedDir(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.Mkdir(dir, 0o755))
	return dir
}

// writeFile writes content to dir/name with mode 0644 and returns its path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	return path
}

// installTestPlugin installs the test plugin (test/testplugin) as
// binDir/name for each name.
func installTestPlugin(t *testing.T, binDir string, names ...string) {
	t.Helper()
	for _, name := range names {
		_, err := build.Install(binDir, name)
		require.NoError(t, err)
	}
}

// startGRPCTestPlugin runs the test plugin as a GRPC daemon and returns its
// socket.
func startGRPCTestPlugin(t *testing.T, args ...string) string {
	t.Helper()
	socket := filepath.Join(trustedDir(t, "run"), "plugin.sock")
	build.ServeGRPC(t, socket, args...)
	return socket
}

type ctlResult struct {
	code           int
	stdout, stderr string
}

// podadmctl runs the command in-process with stdin.
func podadmctl(t *testing.T, stdin string, args ...string) ctlResult {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Run(args, strings.NewReader(stdin), &stdout, &stderr)
	return ctlResult{code: code, stdout: stdout.String(), stderr: stderr.String()}
}
