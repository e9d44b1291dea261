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
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	configv1alpha1 "github.com/podadmission/podadmission/pkg/apis/config/v1alpha1"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission"
)

const (
	unitFile   = "../../build/release/pod-security-plugin-grpc.service"
	sampleFile = "../../examples/pod-admission/10-pod-security-grpc.yaml"
	// The packages' plugin bin dir (build/release/10-podadmission.conf).
	pluginBinDir = "/usr/libexec/kubernetes/pod-admission"
)

// unitCommand is the command line systemd runs for the unit's ExecStart:
// $NAME replaced by the words of the unit's Environment="NAME=...", as
// systemd splits an unbraced variable.
func unitCommand(t *testing.T, unit string) []string {
	t.Helper()
	env := map[string]string{}
	var execStart string
	for _, line := range strings.Split(unit, "\n") {
		if m := regexp.MustCompile(`^Environment="([A-Z_]+)=(.*)"$`).FindStringSubmatch(line); m != nil {
			env[m[1]] = m[2]
		}
		if v, ok := strings.CutPrefix(line, "ExecStart="); ok {
			require.Empty(t, execStart, "the unit has two ExecStart lines")
			execStart = v
		}
	}
	require.NotEmpty(t, execStart, "the unit has no ExecStart")
	var words []string
	for _, w := range strings.Fields(execStart) {
		if name, ok := strings.CutPrefix(w, "$"); ok {
			value, found := env[name]
			require.True(t, found, "ExecStart uses $%s, which the unit does not set", name)
			words = append(words, strings.Fields(value)...)
			continue
		}
		words = append(words, w)
	}
	return words
}

// TestShippedUnitServesTheShippedSample: the packages' unit starts the
// daemon from the plugin bin dir with flags it accepts, on the socket the
// packages' sample configuration names, enforcing baseline with no exempt
// namespace (a namespace's pods would bypass the node's policy).
func TestShippedUnitServesTheShippedSample(t *testing.T) {
	unit, err := os.ReadFile(unitFile)
	require.NoError(t, err)
	command := unitCommand(t, string(unit))
	assert.Equal(t, filepath.Join(pluginBinDir, "pod-security-plugin-grpc"), command[0])
	o := parseOptions(t, command[1:]...)
	require.NoError(t, o.validate(), "the unit's flags")
	assert.Equal(t, "baseline", o.policy.Level)
	assert.Empty(t, o.policy.ExemptNamespaces)
	assert.Contains(t, string(unit), "WantedBy=multi-user.target")
	assert.Contains(t, string(unit), "Before=kubelet.service")

	sample, err := os.ReadFile(sampleFile)
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o755))
	path := filepath.Join(dir, filepath.Base(sampleFile))
	require.NoError(t, os.WriteFile(path, sample, 0o644))
	cfg, err := podadmission.LoadConfig(path)
	require.NoError(t, err)
	require.Len(t, cfg.Plugins, 1)
	plugin := cfg.Plugins[0]
	assert.Equal(t, configv1alpha1.GRPCPluginType, plugin.Type)
	assert.Equal(t, "unix://"+o.socketPath(), plugin.Endpoint, "the sample's endpoint is the unit's socket")
	assert.Equal(t, "pod-security-plugin", plugin.Name, "the Exec plugin's name: the kubelet's events and metrics are the same whichever serves the policy")
}
