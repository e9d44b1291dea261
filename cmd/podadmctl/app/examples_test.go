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
// 0755 directory), pass podadmctl validate.
func TestExamplesValidate(t *testing.T) {
	examples, err := filepath.Glob("../../../examples/pod-admission/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, examples)
	dir := trustedDir(t, "pod-admission")
	for _, example := range examples {
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
}
