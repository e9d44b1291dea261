package main

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/podadmission/podadmission/pkg/apis/config/scheme"
)

// TestExampleConfiguration runs the plugin with the arguments of the sample
// configuration the release ships, under the name it gives it (the file
// name cmd/cmd.mk builds).
func TestExampleConfiguration(t *testing.T) {
	data, err := os.ReadFile("../../examples/pod-admission/10-pod-security.yaml")
	require.NoError(t, err)
	cfg, err := scheme.Decode(data)
	require.NoError(t, err)
	require.Len(t, cfg.Plugins, 1)
	example := cfg.Plugins[0]
	assert.Equal(t, "pod-security-plugin", example.Name, "the executable's name in the bin dir")

	p := execPlugin(t, example.Args...)
	resp, err := p.Admit(context.Background(), admitRequest(hostNetworkPod("team-a")))
	require.NoError(t, err)
	assert.Equal(t, "PodSecurity", resp.Reason)
	assert.Equal(t, `violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true)`, resp.Message)
}
