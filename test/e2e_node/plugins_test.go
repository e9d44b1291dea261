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

package e2enode

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	configv1alpha1 "github.com/podadmission/podadmission/pkg/apis/config/v1alpha1"
	"github.com/podadmission/podadmission/test/e2e_node/framework"
)

// The plugins of the suite. They are configured side by side in one
// kubelet, and each sees only the pods labelled with its name
// (framework.PluginLabel), so the tests can share the node and run in
// parallel without seeing each other's pods.
const (
	pluginDenySoft     = "deny-soft"
	pluginDenyHard     = "deny-hard"
	pluginStatic       = "static-gate"
	pluginGRPCGate     = "grpc-gate"
	pluginFaultMissing = "fault-missing"
	pluginFaultHang    = "fault-hang"
	pluginFaultGarbage = "fault-garbage"
	pluginMetrics      = "metrics-probe"
	pluginRestart      = "restart-probe"
	pluginGateOff      = "gate-off-probe"
	// pluginHoldGate is the GRPC gate of the tests that prove a held pod
	// holds nothing on the node (holdsnothing_test.go, heldcapacity_test.go).
	pluginHoldGate = "hold-gate"
	// pluginEscalate holds pods until its maxBlockedDuration fails them,
	// and pluginAdmitOnce admits every pod and logs the call
	// (holdrestart_test.go).
	pluginEscalate  = "escalate"
	pluginAdmitOnce = "admit-once"
)

// Reasons the deny plugins give; the pod's status.reason must be theirs.
const (
	reasonDenySoft = "E2EDeniedSoft"
	reasonDenyHard = "E2EDeniedHard"
	reasonHoldGate = "E2EHeld"
	reasonEscalate = "E2EEscalate"
)

// escalateAfter is pluginEscalate's maxBlockedDuration.
const escalateAfter = 60 * time.Second

// faultHangTimeout is the timeout of the plugin that never answers.
const faultHangTimeout = 2 * time.Second

// faultConfigFile is the configuration file of one fault plugin: each has
// its own, so that fixing one is a write of its file alone.
func faultConfigFile(plugin string) string { return "40-" + plugin + ".yaml" }

// pluginKubelet is how the plugin tests run the kubelet: feature gate on,
// the suite's plugin directories.
var pluginKubelet = framework.KubeletOptions{PodAdmission: true, PluginFlags: true}

var (
	pluginsOnce sync.Once
	pluginsErr  error
)

// usePluginKubelet makes sure the kubelet runs with opts and the suite's
// plugins are installed; the first plugin test installs them.
func usePluginKubelet(t *testing.T, opts framework.KubeletOptions) {
	t.Helper()
	c := suite.Cluster
	require.NoError(t, c.Kubelet.SupportsPodAdmission())
	pluginsOnce.Do(func() { pluginsErr = installSuitePlugins(c) })
	require.NoError(t, pluginsErr, "installing the suite's plugins")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	restarted, err := c.EnsureKubelet(ctx, opts)
	require.NoError(t, err, "restarting the kubelet with %+v", opts)
	if restarted {
		t.Logf("kubelet restarted with %+v in %s", opts, time.Since(start).Round(time.Millisecond))
	}
}

// execPlugin is an Exec plugin that sees only pods labelled with its name.
func execPlugin(name string, args ...string) configv1alpha1.PluginConfig {
	return configv1alpha1.PluginConfig{
		Name:  name,
		Type:  configv1alpha1.ExecPluginType,
		Args:  append(args, "--log-file="+suite.Cluster.PluginFile(name+".log")),
		Match: framework.MatchPluginLabel(name),
	}
}

// installSuitePlugins starts the GRPC plugin daemons, writes the
// configuration of every suite plugin and installs their executables; the
// fault plugin whose binary is missing is the exception by design.
func installSuitePlugins(c *framework.Cluster) error {
	ctx := context.Background()
	grpc, err := c.StartGate(ctx, grpcGate(c))
	if err != nil {
		return err
	}
	hold, err := c.StartGate(ctx, holdGate(c))
	if err != nil {
		return err
	}
	hard := execPlugin(pluginDenyHard, "--mode=deny", "--reason="+reasonDenyHard, "--message=the e2e hard plugin denies this pod")
	hard.RejectionMode = configv1alpha1.RejectionModeHard
	hang := execPlugin(pluginFaultHang, "--mode=sleep")
	hang.Timeout = &metav1.Duration{Duration: faultHangTimeout}
	escalate := execPlugin(pluginEscalate, "--mode=deny", "--reason="+reasonEscalate, "--message=the e2e escalating plugin holds this pod")
	escalate.MaxBlockedDuration = &metav1.Duration{Duration: escalateAfter}

	files := map[string][]configv1alpha1.PluginConfig{
		"10-thrash.yaml": {
			execPlugin(pluginDenySoft, "--mode=deny", "--reason="+reasonDenySoft, "--message=the e2e soft plugin denies this pod"),
			hard,
		},
		"20-static.yaml":                    {execPlugin(pluginStatic, "--decision-file="+c.PluginFile(pluginStatic+".decision"), "--retry-after=1s")},
		"30-grpc.yaml":                      {grpc, hold},
		faultConfigFile(pluginFaultMissing): {execPlugin(pluginFaultMissing)},
		faultConfigFile(pluginFaultHang):    {hang},
		faultConfigFile(pluginFaultGarbage): {execPlugin(pluginFaultGarbage, "--mode=garbage")},
		"50-metrics.yaml":                   {execPlugin(pluginMetrics, "--decision-file="+c.PluginFile(pluginMetrics+".decision"), "--retry-after=1s")},
		"60-restart.yaml":                   {execPlugin(pluginRestart, "--mode=allow")},
		"70-gateoff.yaml":                   {execPlugin(pluginGateOff, "--mode=deny")},
		"80-restart-hold.yaml":              {escalate, execPlugin(pluginAdmitOnce, "--mode=allow")},
	}
	for file, plugins := range files {
		if err := c.WritePluginConfig(file, plugins...); err != nil {
			return err
		}
		for _, p := range plugins {
			if p.Type == configv1alpha1.ExecPluginType && p.Name != pluginFaultMissing {
				if err := c.InstallExecPlugin(p.Name); err != nil {
					return err
				}
			}
		}
	}
	for _, decision := range []string{pluginStatic, pluginMetrics} {
		if err := framework.SetDecision(c.PluginFile(decision+".decision"), "deny E2EGateClosed the e2e gate is closed"); err != nil {
			return err
		}
	}
	return nil
}
