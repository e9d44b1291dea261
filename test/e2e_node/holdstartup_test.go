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
	"k8s.io/apimachinery/pkg/types"

	"github.com/podadmission/podadmission/test/e2e_node/framework"
)

// The kubelet's pod start-up metrics (upstream's) and the hold histogram.
const (
	metricStartSLI   = "kubelet_pod_start_sli_duration_seconds"
	metricStart      = "kubelet_pod_start_duration_seconds"
	metricStartTotal = "kubelet_pod_start_total_duration_seconds"
	metricHold       = "kubelet_pod_admission_hold_duration_seconds"
)

const reasonStartupHeld = "E2EStartupHeld"

// TestHoldIsNotPodStartup (issue 21): a pod a plugin holds for 20 s and
// then admits shows a pod start-up SLI (and a kubelet start duration) of
// its start-up alone, under 5 s, and a hold of about 20 s in
// kubelet_pod_admission_hold_duration_seconds; while it is held and the
// plugin's decision does not change (it is evaluated every second), the
// kubelet writes neither its status nor an event to the API server. Like
// TestMetrics it runs alone: the histograms and the API server's request
// counts are the whole node's.
func TestHoldIsNotPodStartup(t *testing.T) {
	const hold = 20 * time.Second
	usePluginKubelet(t, pluginKubelet)
	ctx := testContext(t, 5*time.Minute)
	ns := newNamespace(t, ctx)
	c := suite.Cluster
	decision := c.PluginFile(pluginMetrics + ".decision")
	logFile := c.PluginFile(pluginMetrics + ".log")
	require.NoError(t, framework.SetDecision(decision, "deny "+reasonStartupHeld+" the e2e start-up gate is closed"))
	kubeletPid := c.Kubelet.Process().Pid()
	before := scrape(t, ctx)
	plugin := map[string]string{"plugin": pluginMetrics}

	created := time.Now()
	pod, err := c.Client.CoreV1().Pods(ns).Create(ctx, c.NewPod(ns, "held", framework.PluginLabels(pluginMetrics)), metav1.CreateOptions{})
	require.NoError(t, err)
	waitBlocked(t, ctx, ns, pod.Name, reasonStartupHeld)
	// The hold's status and its event are written once; give them time.
	time.Sleep(2 * time.Second)
	callsHeld := pluginCalls(t, logFile)
	writesHeld := apiServerPodWrites(t, ctx)
	time.Sleep(time.Until(created.Add(hold)))
	writes := apiServerPodWrites(t, ctx).Sub(writesHeld)
	calls := pluginCalls(t, logFile) - callsHeld
	figure(t, "re-evaluations of the held pod while its decision did not change", float64(calls), "calls")
	figure(t, "pod status writes meanwhile", writes.StatusPatches, "writes")
	figure(t, "event writes meanwhile", writes.Events, "writes")
	require.GreaterOrEqual(t, calls, 10, "the plugin asks to be retried every second")
	assert.Zero(t, writes.StatusPatches, "a held pod whose decision does not change costs the API server no status write")
	assert.Zero(t, writes.Events, "a held pod whose decision does not change costs the API server no event")

	require.NoError(t, framework.SetDecision(decision, "allow"))
	waitRunning(t, ctx, ns, pod.Name, time.Minute, "the plugin admits the pod")
	// The SLI is observed when the kubelet sees the pod Running on its watch
	// after its status manager recorded the write of that status. When the
	// watch event of the write is handled before the write returns (seen on
	// a loaded node; upstream's tracker, not the series), the pod's next
	// event observes it: give it one at once, as any update of the pod would.
	_, err = c.Client.CoreV1().Pods(ns).Patch(ctx, pod.Name, types.MergePatchType,
		[]byte(`{"metadata":{"annotations":{"e2e.podadmission.io/seen-running":"true"}}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	var after framework.Metrics
	require.Eventually(t, func() bool {
		after = scrape(t, ctx)
		return after.Sum(metricStartSLI, nil) > before.Sum(metricStartSLI, nil)
	}, 30*time.Second, 200*time.Millisecond, "%s should observe the pod", metricStartSLI)
	require.Equal(t, kubeletPid, c.Kubelet.Process().Pid(), "the kubelet restarted during the test; its histograms started again")

	observed := func(family string, labels map[string]string) (count, sum float64) {
		return after.Sum(family, labels) - before.Sum(family, labels), after.HistogramSum(family, labels) - before.HistogramSum(family, labels)
	}
	for _, family := range []string{metricStartSLI, metricStart} {
		count, sum := observed(family, nil)
		figure(t, family+" of the pod held "+hold.String(), sum, "s")
		require.Equal(t, 1.0, count, "%s: one pod started", family)
		assert.Less(t, sum, 5.0, "%s counts from the plugins' admission, not the pod's creation", family)
	}
	count, sum := observed(metricStartTotal, nil)
	require.Equal(t, 1.0, count)
	assert.GreaterOrEqual(t, sum, hold.Seconds(), "%s counts everything since the pod's creation, the hold too", metricStartTotal)
	count, sum = observed(metricHold, plugin)
	figure(t, metricHold+" of the pod held "+hold.String(), sum, "s")
	require.Equal(t, 1.0, count, "%s: one hold ended", metricHold)
	assert.InDelta(t, hold.Seconds(), sum, 3, "%s: from the first rejection to the admission", metricHold)
}

func apiServerPodWrites(t *testing.T, ctx context.Context) framework.PodWrites {
	t.Helper()
	m, err := suite.Cluster.ScrapeAPIServerMetrics(ctx)
	require.NoError(t, err)
	return m.APIServerPodWrites()
}
