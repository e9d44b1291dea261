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
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podadmission/podadmission/test/e2e_node/framework"
)

// gateOffKubelet is the patched kubelet with the feature gate explicitly
// off; the plugin configuration stays on disk.
var gateOffKubelet = framework.KubeletOptions{ExtraArgs: []string{"--feature-gates=" + framework.PodAdmissionFeatureGate + "=false"}}

// TestGateOff (issue 5, test 6): with the configuration present and the
// gate off, a plugin that denies every pod is never invoked and pods run.
// The plugin flags themselves need the gate: the kubelet refuses to start
// with them and the gate off, naming the gate.
func TestGateOff(t *testing.T) {
	usePluginKubelet(t, pluginKubelet) // installs the suite's plugins: the configuration is present
	ctx := testContext(t, 5*time.Minute)
	c := suite.Cluster

	t.Run("FlagsNeedTheGate", func(t *testing.T) {
		logSize := fileSize(t, c.Kubelet.Process().LogPath)
		err := c.RestartKubelet(ctx, framework.KubeletOptions{PluginFlags: true, ExtraArgs: gateOffKubelet.ExtraArgs})
		require.Error(t, err, "the kubelet should refuse --pod-admission-plugin-config without the feature gate")
		assert.Contains(t, logSince(t, c.Kubelet.Process().LogPath, logSize), framework.PodAdmissionFeatureGate, "the kubelet's startup error should name the gate")
	})

	usePluginKubelet(t, gateOffKubelet)
	ns := newNamespace(t, ctx)
	logFile := c.PluginFile(pluginGateOff + ".log")
	callsBefore := pluginCalls(t, logFile)
	pod, err := c.Client.CoreV1().Pods(ns).Create(ctx, c.NewPod(ns, "ungated", framework.PluginLabels(pluginGateOff)), metav1.CreateOptions{})
	require.NoError(t, err)
	_, _, err = framework.WaitForPod(ctx, c.Client, ns, pod.Name, 2*time.Minute, framework.PodRunning)
	require.NoError(t, err, "with the gate off the pod should run although its plugin denies every pod")
	assert.Equal(t, callsBefore, pluginCalls(t, logFile), "the plugin must never be invoked with the gate off")

	m, err := c.ScrapeKubeletMetrics(ctx)
	require.NoError(t, err)
	for family := range m {
		assert.NotContains(t, family, "kubelet_pod_admission_", "no pod admission metrics with the gate off")
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	info, err := os.Stat(path)
	require.NoError(t, err)
	return info.Size()
}

// logSince is what was appended to a log after it had offset bytes.
func logSince(t *testing.T, path string, offset int64) string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(data[min(offset, int64(len(data))):])
}
