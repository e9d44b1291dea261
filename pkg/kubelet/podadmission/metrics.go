package podadmission

import (
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// The kubelet's metrics subsystem, so the names read kubelet_pod_admission_*.
const metricsSubsystem = "kubelet"

// Values of the result label of the plugin duration histogram.
const (
	resultAllowed  = "allowed"
	resultRejected = "rejected"
	resultError    = "error"
)

// Values of the decision label of the decisions counter: what a plugin call
// meant for the pod.
const (
	decisionAllowed      = "allowed"
	decisionRejected     = "rejected"
	decisionError        = "error"         // plugin failed, failurePolicy Fail: the pod is rejected
	decisionErrorIgnored = "error_ignored" // plugin failed, failurePolicy Ignore: the pod passes this plugin
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

	configReloadsTotal = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      metricsSubsystem,
		Name:           "pod_admission_config_reloads_total",
		Help:           "Reloads of the pod admission plugin configuration that changed it (success) or were refused, keeping the last good configuration (failure).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"result"})
)

var registerMetricsOnce sync.Once

// registerMetrics registers the metrics with the registry the kubelet serves
// on /metrics. Until then they record nothing, which is what podadmctl wants.
func registerMetrics() {
	registerMetricsOnce.Do(func() {
		legacyregistry.MustRegister(pluginDuration, decisionsTotal, blockedPods, configReloadsTotal)
	})
}
