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
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	configv1alpha1 "github.com/podadmission/podadmission/pkg/apis/config/v1alpha1"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/exectransport"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/grpctransport"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/transport"
)

func TestNewTransportByType(t *testing.T) {
	execPlugin, err := newTransport(&configv1alpha1.PluginConfig{Name: "e", Type: configv1alpha1.ExecPluginType}, "/opt/podadmission/bin")
	require.NoError(t, err)
	assert.IsType(t, &exectransport.Plugin{}, execPlugin)
	_, reevaluates := execPlugin.(transport.Reevaluator)
	assert.False(t, reevaluates)
	require.NoError(t, execPlugin.Close())

	grpcPlugin, err := newTransport(&configv1alpha1.PluginConfig{Name: "g", Type: configv1alpha1.GRPCPluginType, Endpoint: "unix:///run/podadmission/g.sock"}, "/opt/podadmission/bin")
	require.NoError(t, err)
	assert.IsType(t, &grpctransport.Plugin{}, grpcPlugin)
	_, reevaluates = grpcPlugin.(transport.Reevaluator)
	assert.True(t, reevaluates)
	require.NoError(t, grpcPlugin.Close())
}

func TestNewTransportErrors(t *testing.T) {
	_, err := newTransport(&configv1alpha1.PluginConfig{Name: "x", Type: "HTTP"}, "/opt/podadmission/bin")
	require.EqualError(t, err, `unknown type "HTTP", want "Exec" or "GRPC"`)

	_, err = newTransport(&configv1alpha1.PluginConfig{Name: "g", Type: configv1alpha1.GRPCPluginType, Endpoint: "localhost:9000"}, "/opt/podadmission/bin")
	require.EqualError(t, err, `endpoint "localhost:9000": must be a unix socket: an absolute path or a unix:// URL`)
}

// The chain names the plugin once, in front of what its transport says.
func TestNewChainNamesThePluginOfATransportError(t *testing.T) {
	grpcPlugin := func(name, endpoint string) configv1alpha1.PluginConfig {
		return configv1alpha1.PluginConfig{Name: name, Type: configv1alpha1.GRPCPluginType, Endpoint: endpoint}
	}
	cfg := &Config{Plugins: []ConfiguredPlugin{
		{PluginConfig: grpcPlugin("g", "unix:///run/podadmission/g.sock"), File: "/etc/pod-admission/10.yaml", Index: 0},
		{PluginConfig: grpcPlugin("h", "unix://h.sock"), File: "/etc/pod-admission/10.yaml", Index: 1},
	}}
	_, err := NewChain(t.Context(), cfg, "/opt/podadmission/bin")
	require.EqualError(t, err, `/etc/pod-admission/10.yaml: plugins[1]: plugin "h": endpoint "unix://h.sock": must be a unix socket: an absolute path or a unix:// URL`)
}
