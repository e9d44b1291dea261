package podadmission

import (
	"strings"
	"testing"

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
