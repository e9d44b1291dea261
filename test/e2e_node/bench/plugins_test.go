//go:build e2e_node

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

package bench

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	configv1alpha1 "github.com/podadmission/podadmission/pkg/apis/config/v1alpha1"
	"github.com/podadmission/podadmission/test/e2e_node/framework"
)

// The benchmark's plugins, each seeing only pods with its label.
const (
	pluginSoft  = "bench-soft"
	pluginHard  = "bench-hard"
	pluginGRPC  = "bench-grpc"
	pluginAllow = "bench-allow"
	// pluginAllowGRPC admits every pod, as a GRPC daemon.
	pluginAllowGRPC = "bench-allow-grpc"
	pluginHold      = "bench-hold"
)

const (
	reasonSoft       = "BenchHeld"
	reasonHard       = "BenchRejected"
	reasonGRPCClosed = "BenchGateClosed"
)

var (
	pluginKubelet = framework.KubeletOptions{PodAdmission: true, PluginFlags: true}
	// noPluginKubelet is the kubelet as upstream runs it: no gate, no
	// plugin configuration.
	noPluginKubelet = framework.KubeletOptions{}

	pluginsOnce sync.Once
	pluginsErr  error
)

// useKubelet runs the kubelet with opts, the benchmark's plugins installed.
func useKubelet(t *testing.T, opts framework.KubeletOptions) {
	t.Helper()
	c := suite.Cluster
	require.NoError(t, c.Kubelet.SupportsPodAdmission())
	pluginsOnce.Do(func() { pluginsErr = installPlugins(c) })
	require.NoError(t, pluginsErr)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err := c.EnsureKubelet(ctx, opts)
	require.NoError(t, err)
}

func execPlugin(c *framework.Cluster, name string, args ...string) configv1alpha1.PluginConfig {
	return configv1alpha1.PluginConfig{
		Name:  name,
		Type:  configv1alpha1.ExecPluginType,
		Args:  append(args, "--log-file="+c.PluginFile(name+".log")),
		Match: framework.MatchPluginLabel(name),
	}
}

func grpcDecisionFile(c *framework.Cluster) string { return c.PluginFile(pluginGRPC + ".decision") }

// grpcRetryAfter is the GRPC gate's retryAfterSeconds: a held pod that
// runs sooner was admitted by the gate's push.
const grpcRetryAfter = time.Minute

// grpcGate is the GRPC gate as framework.Gate drives it.
func grpcGate(c *framework.Cluster) framework.Gate {
	return framework.Gate{
		Plugin:       pluginGRPC,
		DecisionFile: grpcDecisionFile(c),
		Reason:       reasonGRPCClosed,
		Message:      "closed",
		LogFile:      c.PluginFile(pluginGRPC + ".log"),
		RetryAfter:   grpcRetryAfter,
	}
}

func installPlugins(c *framework.Cluster) error {
	hard := execPlugin(c, pluginHard, "--mode=deny", "--reason="+reasonHard)
	hard.RejectionMode = configv1alpha1.RejectionModeHard
	gate, err := c.StartGate(context.Background(), grpcGate(c))
	if err != nil {
		return err
	}
	allowEndpoint, err := c.StartGRPCPlugin(context.Background(), pluginAllowGRPC, "--mode=allow")
	if err != nil {
		return err
	}
	plugins := []configv1alpha1.PluginConfig{
		execPlugin(c, pluginSoft, "--mode=deny", "--reason="+reasonSoft),
		hard,
		gate,
		execPlugin(c, pluginAllow, "--mode=allow"),
		{Name: pluginAllowGRPC, Type: configv1alpha1.GRPCPluginType, Endpoint: allowEndpoint, Match: framework.MatchPluginLabel(pluginAllowGRPC)},
		execPlugin(c, pluginHold, "--mode=deny", "--reason="+reasonSoft),
	}
	for _, p := range plugins {
		if p.Type == configv1alpha1.ExecPluginType {
			if err := c.InstallExecPlugin(p.Name); err != nil {
				return err
			}
		}
	}
	return c.WritePluginConfig("10-bench.yaml", plugins...)
}
