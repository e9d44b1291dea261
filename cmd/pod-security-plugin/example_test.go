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
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	apptesting "github.com/podadmission/podadmission/cmd/pod-security-plugin/app/testing"
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
	resp, err := p.Admit(context.Background(), admitRequest(apptesting.HostNetworkPod("team-a")))
	require.NoError(t, err)
	assert.Equal(t, "PodSecurity", resp.Reason)
	assert.Equal(t, `violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true)`, resp.Message)
}
