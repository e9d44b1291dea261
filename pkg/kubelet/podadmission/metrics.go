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
	"sync"
	"time"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// The kubelet's metrics subsystem, so the names read kubelet_pod_admission_*.
const metricsSubsystem = "kubelet"

// callResult is what one plugin call meant for the pod, as the metrics
// label it.
type callResult int

const (
	callAllowed callResult = iota
	callRejected
	callFailed         // failurePolicy Fail: the pod is rejected
	callFailureIgnored // failurePolicy Ignore: the pod passes this plugin
	callResults
)

// resultLabels are the values of the result label of the plugin duration
// histogram, and decisionLabels those of the decision label of the
// decisions counter, by callResult.
var (
	resultLabels   = [callResults]string{"allowed", "rejected", "error", "error"}
	decisionLabels = [callResults]string{"allowed", "rejected", "error", "error_ignored"}
)

// Values of the result label of the reload counter.
const (
	reloadSuccess = "success"
	reloadFailure = "failure"
)

var (
	pluginDuration = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Subsystem:      metricsSubsystem,
		Name:           "pod_admission_plugin_duration_seconds",
		Help:           "Duration of pod admission plugin calls, including the wait for a free call slot, by plugin and result (allowed, rejected, error).",
		Buckets:        []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		StabilityLevel: metrics.ALPHA,
	}, []string{"plugin", "result"})

	decisionsTotal = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      metricsSubsystem,
		Name:           "pod_admission_decisions_total",
		Help:           "Pod admission plugin decisions by plugin and decision (allowed, rejected, error: a failure that rejected the pod, error_ignored: a failure ignored by failurePolicy Ignore).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"plugin", "decision"})

	blockedPods = metrics.NewGauge(&metrics.GaugeOpts{
		Subsystem:      metricsSubsystem,
		Name:           "pod_admission_blocked_pods",
		Help:           "Pods a pod admission plugin holds Pending now (soft rejections).",
		StabilityLevel: metrics.ALPHA,
	})

	heldContainers = metrics.NewGauge(&metrics.GaugeOpts{
		Subsystem:      metricsSubsystem,
		Name:           "pod_admission_held_containers",
		Help:           "Containers of admitted pods the kubelet does not start now because pod admission plugins have not admitted the update that adds or changes them (an ephemeral container, a replaced image).",
		StabilityLevel: metrics.ALPHA,
	})

	holdDuration = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Subsystem: metricsSubsystem,
		Name:      "pod_admission_hold_duration_seconds",
		Help: "How long pod admission plugins held pods Pending, from the first rejection to the decision that ended the hold (admitted, or failed), " +
			"by the plugin that held the pod last (empty when a hold continued across a kubelet restart ended at the first evaluation after it).",
		Buckets:        []float64{.1, .25, .5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600, 1800, 3600, 3 * 3600, 12 * 3600, 24 * 3600},
		StabilityLevel: metrics.ALPHA,
	}, []string{"plugin"})

	reevaluationsIgnored = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      metricsSubsystem,
		Name:           "pod_admission_reevaluations_ignored_total",
		Help:           "Pods a GRPC plugin's push named that the plugin did not hold (another plugin held them, or none did), by plugin: a push re-evaluates only the pods the pushing plugin holds.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"plugin"})

	configReloadsTotal = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      metricsSubsystem,
		Name:           "pod_admission_config_reloads_total",
		Help:           "Reloads of the pod admission plugin configuration that changed it (success) or were refused, keeping the last good configuration (failure).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"result"})
)

// pluginMetrics are the series of one plugin name, looked up at its first
// call of each result rather than at every call: a lookup hashes the
// labels. A series appears when it is first recorded, as with
// WithLabelValues at every call.
type pluginMetrics struct {
	plugin    string
	once      [callResults]sync.Once
	durations [callResults]metrics.ObserverMetric
	decisions [callResults]metrics.CounterMetric
}

func newPluginMetrics(plugin string) *pluginMetrics {
	return &pluginMetrics{plugin: plugin}
}

// record counts one call of the plugin and its latency.
func (m *pluginMetrics) record(result callResult, latency time.Duration) {
	m.once[result].Do(func() {
		m.durations[result] = pluginDuration.WithLabelValues(m.plugin, resultLabels[result])
		m.decisions[result] = decisionsTotal.WithLabelValues(m.plugin, decisionLabels[result])
	})
	m.decisions[result].Inc()
	m.durations[result].Observe(latency.Seconds())
}

// recordHoldEnd observes the end, at now, of a pod's hold that began at
// heldSince, by plugin, the plugin that held it last; a zero heldSince is a
// pod that was never held.
func recordHoldEnd(plugin string, heldSince, now time.Time) {
	if heldSince.IsZero() {
		return
	}
	holdDuration.WithLabelValues(plugin).Observe(now.Sub(heldSince).Seconds())
}

var registerMetricsOnce sync.Once

// registerMetrics registers the metrics with the registry the kubelet serves
// on /metrics. Until then they record nothing, which is what podadmctl
// wants; a Manager registers them before it creates its first chain, whose
// pluginMetrics keep the series they look up.
func registerMetrics() {
	registerMetricsOnce.Do(func() {
		legacyregistry.MustRegister(pluginDuration, decisionsTotal, blockedPods, heldContainers, holdDuration, reevaluationsIgnored, configReloadsTotal)
	})
}
