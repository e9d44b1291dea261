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
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/component-base/metrics/testutil"
)

// resetMetrics zeroes the package's metrics; tests that check them must
// not run in parallel with other tests of this package.
func resetMetrics() {
	pluginDuration.Reset()
	decisionsTotal.Reset()
	blockedPods.Set(0)
	heldContainers.Set(0)
	holdDuration.Reset()
	configReloadsTotal.Reset()
}

// assertMetrics compares the named metrics on the kubelet's registry with
// want, in the text exposition format without HELP and TYPE lines.
func assertMetrics(t *testing.T, want string, names ...string) {
	t.Helper()
	var expected strings.Builder
	for _, name := range names {
		expected.WriteString(metricHeaders[name])
	}
	expected.WriteString(want)
	require.NoError(t, testutil.GatherAndCompare(legacyregistry.DefaultGatherer, strings.NewReader(expected.String()), names...))
}

var metricHeaders = map[string]string{
	"kubelet_pod_admission_decisions_total":      "# HELP kubelet_pod_admission_decisions_total [ALPHA] Pod admission plugin decisions by plugin and decision (allowed, rejected, error: a failure that rejected the pod, error_ignored: a failure ignored by failurePolicy Ignore).\n# TYPE kubelet_pod_admission_decisions_total counter\n",
	"kubelet_pod_admission_blocked_pods":         "# HELP kubelet_pod_admission_blocked_pods [ALPHA] Pods a pod admission plugin holds Pending now (soft rejections).\n# TYPE kubelet_pod_admission_blocked_pods gauge\n",
	"kubelet_pod_admission_config_reloads_total": "# HELP kubelet_pod_admission_config_reloads_total [ALPHA] Reloads of the pod admission plugin configuration that changed it (success) or were refused, keeping the last good configuration (failure).\n# TYPE kubelet_pod_admission_config_reloads_total counter\n",
}

func blockedPodsValue(t *testing.T) float64 {
	t.Helper()
	v, err := testutil.GetGaugeMetricValue(blockedPods)
	require.NoError(t, err)
	return v
}

func TestMetrics(t *testing.T) {
	tm := newTestManager(t, pluginsYAML(
		execPlugin("first"),
		execPlugin("second"),
		execPlugin("broken", "failurePolicy: Ignore"),
	), func(f *fakeFactory, _ *Options) {
		f.set("second", deny("Quota", "over quota"))
		f.set("broken", fail("crashed"))
	})

	blocked1, blocked2 := testPod("blocked-1"), testPod("blocked-2")
	admitted, _, _, _ := tm.admit(blocked1)
	require.False(t, admitted)
	admitted, _, _, _ = tm.admit(blocked2)
	require.False(t, admitted)
	assert.Equal(t, 2.0, blockedPodsValue(t))

	tm.factory.plugin(t, "second").setDecide(allow())
	tm.clock.Step(initialBackoff)
	admitted, _, _, _ = tm.admit(blocked1)
	require.True(t, admitted)
	assert.Equal(t, 1.0, blockedPodsValue(t))

	assertMetrics(t, `
kubelet_pod_admission_blocked_pods 1
kubelet_pod_admission_decisions_total{decision="allowed",plugin="first"} 3
kubelet_pod_admission_decisions_total{decision="rejected",plugin="second"} 2
kubelet_pod_admission_decisions_total{decision="allowed",plugin="second"} 1
kubelet_pod_admission_decisions_total{decision="error_ignored",plugin="broken"} 1
`, "kubelet_pod_admission_blocked_pods", "kubelet_pod_admission_decisions_total")

	testutil.AssertHistogramTotalCount(t, "kubelet_pod_admission_plugin_duration_seconds", map[string]string{"plugin": "first", "result": "allowed"}, 3)
	testutil.AssertHistogramTotalCount(t, "kubelet_pod_admission_plugin_duration_seconds", map[string]string{"plugin": "second", "result": "rejected"}, 2)
	testutil.AssertHistogramTotalCount(t, "kubelet_pod_admission_plugin_duration_seconds", map[string]string{"plugin": "second", "result": "allowed"}, 1)
	testutil.AssertHistogramTotalCount(t, "kubelet_pod_admission_plugin_duration_seconds", map[string]string{"plugin": "broken", "result": "error"}, 1)
}

// holdSeries are the hold duration histogram's series by plugin: the
// count and sum of each.
func holdSeries(t *testing.T) map[string][2]float64 {
	t.Helper()
	families, err := legacyregistry.DefaultGatherer.Gather()
	require.NoError(t, err)
	series := map[string][2]float64{}
	for _, f := range families {
		if f.GetName() != "kubelet_pod_admission_hold_duration_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			require.Len(t, m.GetLabel(), 1)
			series[m.GetLabel()[0].GetValue()] = [2]float64{float64(m.GetHistogram().GetSampleCount()), m.GetHistogram().GetSampleSum()}
		}
	}
	return series
}

func TestHoldDurationMetric(t *testing.T) {
	tm := newTestManager(t, pluginsYAML(
		execPlugin("first"),
		execPlugin("gate"),
		execPlugin("strict", "maxBlockedDuration: 1m"),
		execPlugin("hard", "rejectionMode: Hard"),
	), func(f *fakeFactory, _ *Options) {
		f.set("first", deny("Waiting", ""))
	})
	first, gate, strict, hard := tm.factory.plugin(t, "first"), tm.factory.plugin(t, "gate"), tm.factory.plugin(t, "strict"), tm.factory.plugin(t, "hard")

	// Held 20 s, by first and then by gate, which holds it last.
	held := testPod("held")
	admitted, _, _, _ := tm.admit(held)
	require.False(t, admitted)
	tm.clock.Step(time.Second)
	first.setDecide(allow())
	gate.setDecide(deny("Closed", ""))
	admitted, _, _, _ = tm.admit(held)
	require.False(t, admitted)
	assert.Empty(t, holdSeries(t), "no observation while the pod is held")
	tm.clock.Step(19 * time.Second)
	gate.setDecide(allow())
	admitted, _, _, _ = tm.admit(held)
	require.True(t, admitted)
	assert.Equal(t, map[string][2]float64{"gate": {1, 20}}, holdSeries(t),
		"one hold of 20 s, from the first rejection to the admission, by the plugin that held the pod last")

	// A pod admitted at once, and one a Hard plugin rejects at once, were
	// never held.
	admitted, _, _, _ = tm.admit(testPod("at-once"))
	require.True(t, admitted)
	hard.setDecide(deny("Forbidden", ""))
	_, _, _, terminal := tm.admit(testPod("rejected"))
	require.True(t, terminal)
	hard.setDecide(allow())

	// A hold that ends in a failure: maxBlockedDuration.
	strict.setDecide(deny("NoDevice", ""))
	escalated := testPod("escalated")
	_, _, _, terminal = tm.admit(escalated)
	require.False(t, terminal)
	tm.clock.Step(time.Minute)
	_, _, _, terminal = tm.admit(escalated)
	require.True(t, terminal)
	assert.Equal(t, map[string][2]float64{"gate": {1, 20}, "strict": {1, 60}}, holdSeries(t),
		"the pods never held are not observed; a hold that ends in a failure is")

	// A hold begun before a kubelet restart, which this Manager did not
	// see holding the pod, ends at its first evaluation: from the
	// condition's lastTransitionTime, by a plugin this Manager cannot name.
	strict.setDecide(allow())
	admitted, _, _, _ = tm.admit(heldPod("restarted", tm.clock.Now().Add(-5*time.Minute)))
	require.True(t, admitted)
	assert.Equal(t, map[string][2]float64{"gate": {1, 20}, "strict": {1, 60}, "": {1, 300}}, holdSeries(t))
}
