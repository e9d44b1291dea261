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
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/podadmission/podadmission/pkg/apis/config/scheme"
)

// TestExamplesAgree: the systemd unit's flags are valid, and the sample
// configuration's endpoint is the socket the unit serves on.
func TestExamplesAgree(t *testing.T) {
	unit, err := os.ReadFile("../../examples/netpol-gate/netpol-gate-plugin.service")
	require.NoError(t, err)
	execStart := regexp.MustCompile(`(?m)^ExecStart=((?:.*\\\n)*.*)$`).FindStringSubmatch(string(unit))
	require.NotNil(t, execStart, "ExecStart in the unit")
	args := strings.Fields(strings.ReplaceAll(execStart[1], "\\\n", " "))
	assert.Equal(t, "/usr/libexec/kubernetes/pod-admission/netpol-gate-plugin", args[0])

	o := newOptions()
	fs := pflag.NewFlagSet("unit", pflag.ContinueOnError)
	o.addFlags(fs)
	require.NoError(t, fs.Parse(args[1:]))
	require.NoError(t, o.validate())
	assert.NotEmpty(t, o.ackDir, "the example waits for acknowledgements")

	data, err := os.ReadFile("../../examples/pod-admission/20-netpol-gate.yaml")
	require.NoError(t, err)
	cfg, err := scheme.Decode(data)
	require.NoError(t, err)
	require.Len(t, cfg.Plugins, 1)
	assert.Equal(t, "unix://"+o.socketPath(), cfg.Plugins[0].Endpoint)
	assert.Equal(t, "unix://"+defaultSocket, cfg.Plugins[0].Endpoint)
}
