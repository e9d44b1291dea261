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
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podadmission/podadmission/test/e2e_node/framework"
)

// The kubelet_pod_admission_* series (pkg/kubelet/podadmission/metrics.go).
const (
	metricDuration  = "kubelet_pod_admission_plugin_duration_seconds"
	metricDecisions = "kubelet_pod_admission_decisions_total"
	metricBlocked   = "kubelet_pod_admission_blocked_pods"
)

const reasonMetricsHeld = "E2EMetricsHeld"

// TestMetrics (issue 5, test 9): the kubelet's /metrics shows the
// kubelet_pod_admission_* series, with counts that match what the plugin
// saw: every call its log records is one observation of the duration
// histogram and one decision; the held pod is admitted exactly once; the
// blocked-pods gauge counts the held pod while it is held. It runs alone
// (not in parallel) because the gauge counts the whole node.
func TestMetrics(t *testing.T) {
	usePluginKubelet(t, pluginKubelet)
	ctx := testContext(t, 5*time.Minute)
	ns := newNamespace(t, ctx)
	c := suite.Cluster
	decision := c.PluginFile(pluginMetrics + ".decision")
	logFile := c.PluginFile(pluginMetrics + ".log")
	require.NoError(t, framework.SetDecision(decision, "deny "+reasonMetricsHeld+" the e2e metrics gate is closed"))
	kubeletPid := c.Kubelet.Process().Pid()
	callsBefore := pluginCalls(t, logFile)
	before := scrape(t, ctx)
	plugin := map[string]string{"plugin": pluginMetrics}

	held, err := c.Client.CoreV1().Pods(ns).Create(ctx, c.NewPod(ns, "held", framework.PluginLabels(pluginMetrics)), metav1.CreateOptions{})
	require.NoError(t, err)
	waitBlocked(t, ctx, ns, held.Name, reasonMetricsHeld)
	// The plugin asks to be retried every second: wait for a few rejections.
	require.Eventually(t, func() bool { return pluginCalls(t, logFile)-callsBefore >= 3 }, time.Minute, 200*time.Millisecond)
	whileHeld := scrape(t, ctx)
	assert.Equal(t, 1.0, gauge(whileHeld, metricBlocked), "%s while one pod is held", metricBlocked)

	require.NoError(t, framework.SetDecision(decision, "allow"))
	_, _, err = framework.WaitForPod(ctx, c.Client, ns, held.Name, 2*time.Minute, framework.PodRunning)
	require.NoError(t, err)
	admitted, err := c.Client.CoreV1().Pods(ns).Create(ctx, c.NewPod(ns, "admitted", framework.PluginLabels(pluginMetrics)), metav1.CreateOptions{})
	require.NoError(t, err)
	_, _, err = framework.WaitForPod(ctx, c.Client, ns, admitted.Name, 2*time.Minute, framework.PodRunning)
	require.NoError(t, err)

	after := scrape(t, ctx)
	for _, family := range []string{metricDuration, metricDecisions} {
		require.Contains(t, after, family, "the kubelet's /metrics has no %s", family)
		t.Logf("%s: %v", family, after.Series(family))
	}
	require.Equal(t, kubeletPid, c.Kubelet.Process().Pid(), "the kubelet restarted during the test; its counters started again")
	calls := pluginCalls(t, logFile) - callsBefore
	delta := func(family string, labels map[string]string) float64 {
		return after.Sum(family, labels) - before.Sum(family, labels)
	}
	withPlugin := func(k, v string) map[string]string { return map[string]string{"plugin": pluginMetrics, k: v} }

	figure(t, "plugin calls", float64(calls), "calls")
	assert.Equal(t, float64(calls), delta(metricDuration, plugin), "%s observations = plugin calls", metricDuration)
	assert.Equal(t, float64(calls), delta(metricDecisions, plugin), "%s = plugin calls", metricDecisions)
	assert.Equal(t, 2.0, delta(metricDecisions, withPlugin("decision", "allowed")), "each pod is admitted exactly once")
	assert.Equal(t, float64(calls-2), delta(metricDecisions, withPlugin("decision", "rejected")), "every other call rejected the held pod")
	assert.Equal(t, 0.0, delta(metricDecisions, withPlugin("decision", "error")), "no plugin failures")
	assert.Equal(t, 0.0, gauge(after, metricBlocked), "%s once every pod runs", metricBlocked)
	assert.Equal(t, 2.0, delta(metricDuration, withPlugin("result", "allowed")), "allowed calls in the duration histogram")
}

func scrape(t *testing.T, ctx context.Context) framework.Metrics {
	t.Helper()
	m, err := suite.Cluster.ScrapeKubeletMetrics(ctx)
	require.NoError(t, err)
	// A gauge is always exported; the vectors only once they have samples.
	require.Contains(t, m, metricBlocked, "the kubelet's /metrics has no %s", metricBlocked)
	return m
}

func gauge(m framework.Metrics, family string) float64 {
	v, _ := m.Value(family, nil)
	return v
}

// pluginCalls counts the calls in a test plugin's log.
func pluginCalls(t *testing.T, logFile string) int {
	t.Helper()
	calls, err := framework.ReadPluginLog(logFile)
	require.NoError(t, err)
	return len(calls)
}
