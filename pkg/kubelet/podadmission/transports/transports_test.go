package transports

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	configv1alpha1 "github.com/podadmission/podadmission/pkg/apis/config/v1alpha1"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/exec"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/grpc"
)

func TestNewByType(t *testing.T) {
	execPlugin, err := New(&configv1alpha1.PluginConfig{Name: "e", Type: configv1alpha1.ExecPluginType}, "/opt/podadmission/bin")
	require.NoError(t, err)
	assert.IsType(t, &exec.Plugin{}, execPlugin)
	_, reevaluates := execPlugin.(podadmission.Reevaluator)
	assert.False(t, reevaluates)
	require.NoError(t, execPlugin.Close())

	grpcPlugin, err := New(&configv1alpha1.PluginConfig{Name: "g", Type: configv1alpha1.GRPCPluginType, Endpoint: "unix:///run/podadmission/g.sock"}, "/opt/podadmission/bin")
	require.NoError(t, err)
	assert.IsType(t, &grpc.Plugin{}, grpcPlugin)
	_, reevaluates = grpcPlugin.(podadmission.Reevaluator)
	assert.True(t, reevaluates)
	require.NoError(t, grpcPlugin.Close())
}

func TestNewErrors(t *testing.T) {
	_, err := New(&configv1alpha1.PluginConfig{Name: "x", Type: "HTTP"}, "/opt/podadmission/bin")
	require.EqualError(t, err, `pod admission plugin "x": unknown type "HTTP", want "Exec" or "GRPC"`)

	_, err = New(&configv1alpha1.PluginConfig{Name: "g", Type: configv1alpha1.GRPCPluginType, Endpoint: "localhost:9000"}, "/opt/podadmission/bin")
	require.EqualError(t, err, `pod admission plugin "g": endpoint "localhost:9000" is not a unix socket: want an absolute path or a unix:// URL`)
}
