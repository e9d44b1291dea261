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
)

// TestExamplesValidate: the sample configurations in examples/pod-admission,
// installed as the kubelet wants its configuration (root owned, 0644, in a
// 0755 directory), pass podadmctl validate. The two samples of the Pod
// Security Standards policy (the Exec plugin and the GRPC daemon) are
// alternatives: they name the same plugin, and a directory holding both is
// refused, naming the two files.
func TestExamplesValidate(t *testing.T) {
	examples, err := filepath.Glob("../../../examples/pod-admission/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, examples)
	dir := trustedDir(t, "pod-admission")
	for _, example := range examples {
		if filepath.Base(example) == "10-pod-security-grpc.yaml" {
			continue
		}
		data, err := os.ReadFile(example)
		require.NoError(t, err)
		writeFile(t, dir, filepath.Base(example), string(data))
	}

	r := podadmctl(t, "", "validate", dir)
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Regexp(t, `(?m)^1\s+pod-security-plugin\s+Exec\s+\S+/10-pod-security.yaml\s`, r.stdout)
	assert.Regexp(t, `(?m)^2\s+netpol-gate\s+GRPC\s+\S+/20-netpol-gate.yaml\s`, r.stdout)

	// The release ships the first one alone.
	r = podadmctl(t, "", "validate", filepath.Join(dir, "10-pod-security.yaml"))
	assert.Equal(t, ExitOK, r.code, r.stderr)

	// The daemon's sample, in place of the Exec plugin's.
	grpcSample, err := os.ReadFile("../../../examples/pod-admission/10-pod-security-grpc.yaml")
	require.NoError(t, err)
	grpcDir := trustedDir(t, "pod-admission-grpc")
	writeFile(t, grpcDir, "10-pod-security-grpc.yaml", string(grpcSample))
	r = podadmctl(t, "", "validate", grpcDir)
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Regexp(t, `(?m)^1\s+pod-security-plugin\s+GRPC\s+\S+/10-pod-security-grpc.yaml\s`, r.stdout)

	// Both at once: one policy is enough, and the second is refused.
	writeFile(t, dir, "10-pod-security-grpc.yaml", string(grpcSample))
	r = podadmctl(t, "", "validate", dir)
	assert.Equal(t, ExitRejected, r.code, r.stdout)
	assert.Regexp(t, `10-pod-security.yaml: plugins\[0\]\.name: Duplicate value: "pod-security-plugin": already defined in \S+/10-pod-security-grpc.yaml at plugins\[0\]`, r.stderr)
}
