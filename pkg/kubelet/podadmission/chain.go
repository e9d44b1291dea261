package podadmission

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/klog/v2"
	kubetypes "k8s.io/kubernetes/pkg/kubelet/types"

	configv1alpha1 "github.com/podadmission/podadmission/pkg/apis/config/v1alpha1"
	podadmissionv1alpha1 "github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1"
)

// PluginFactory creates the transport for one configured plugin: an Exec
// plugin runs its executable from binDir, a GRPC plugin connects to its
// endpoint. It must not block on the plugin: a GRPC plugin that is not up
// yet fails its calls, it does not fail its creation.
type PluginFactory func(cfg *configv1alpha1.PluginConfig, binDir string) (Plugin, error)

// Default pod status reasons for decisions that carry none of their own.
const (
	// ReasonRejected is used when a plugin rejects a pod without a reason.
	ReasonRejected = "PodAdmissionRejected"
	// ReasonPluginFailed is used when a plugin with failurePolicy Fail could
	// not decide.
	ReasonPluginFailed = "PodAdmissionPluginFailed"
)

// Outcome is what one plugin decided about one pod.
type Outcome string

const (
	// OutcomeAllowed: the plugin admitted the pod.
	OutcomeAllowed Outcome = "Allowed"
	// OutcomeRejected: the plugin rejected the pod.
	OutcomeRejected Outcome = "Rejected"
	// OutcomeFailed: the plugin could not decide and its failurePolicy is
	// Fail, so the failure rejects the pod.
	OutcomeFailed Outcome = "Failed"
	// OutcomeFailureIgnored: the plugin could not decide and its
	// failurePolicy is Ignore, so the pod passes it.
	OutcomeFailureIgnored Outcome = "FailureIgnored"
	// OutcomeNotMatched: the plugin's match section excludes the pod; it
	// was not called.
	OutcomeNotMatched Outcome = "NotMatched"
)

// PluginDecision is one plugin's part in an evaluation.
type PluginDecision struct {
	// Plugin is the plugin's configuration and the file it came from.
	Plugin  *ConfiguredPlugin
	Outcome Outcome
	// Reason and Message are the plugin's, for OutcomeRejected (Allowed
	// responses may carry them too).
	Reason  string
	Message string
	// Err is the failure, for OutcomeFailed and OutcomeFailureIgnored.
	Err error
	// RetryAfter is the plugin's retryAfterSeconds hint, if it gave one.
	RetryAfter *time.Duration
	// Attempt is the attempt number sent to the plugin; 0 when not called.
	Attempt int32
	// Latency is the duration of the call, including the wait for a slot.
	Latency time.Duration
}

// Rejects says whether the decision keeps the pod from starting.
func (d *PluginDecision) Rejects() bool {
	return d.Outcome == OutcomeRejected || d.Outcome == OutcomeFailed
}

// PodReason is the pod's status.reason for a rejecting decision.
func (d *PluginDecision) PodReason() string {
	if d.Outcome == OutcomeFailed {
		return ReasonPluginFailed
	}
	return sanitizeReason(d.Reason, ReasonRejected)
}

// PodMessage is the pod's status.message for a rejecting decision. It names
// the plugin, so an operator knows whom to ask. The plugin's text is
// sanitized and the whole capped at the protocol's message limit (see
// sanitizeMessage); a plugin's stderr is never part of it (transports log
// it).
func (d *PluginDecision) PodMessage() string {
	switch {
	case d.Outcome == OutcomeFailed:
		// Transport errors name the plugin too; say it once.
		fault := strings.TrimPrefix(d.Err.Error(), fmt.Sprintf("pod admission plugin %q: ", d.Plugin.Name))
		return sanitizeMessage(fmt.Sprintf("Pod admission plugin %q failed (failurePolicy Fail): %s", d.Plugin.Name, fault))
	case d.Message != "":
		return sanitizeMessage(fmt.Sprintf("Pod admission plugin %q rejected the pod: %s", d.Plugin.Name, d.Message))
	}
	return fmt.Sprintf("Pod admission plugin %q rejected the pod", d.Plugin.Name)
}

// ChainResult is the outcome of one evaluation of a pod.
type ChainResult struct {
	// Decisions holds one entry per plugin evaluated, in chain order.
	Decisions []PluginDecision
	// Rejection is the first decision that rejects the pod; nil when every
	// plugin that matches the pod admits it.
	Rejection *PluginDecision
}

// Admitted says whether the pod may start.
func (r *ChainResult) Admitted() bool { return r.Rejection == nil }

// EvaluationRequest is what a chain evaluates.
type EvaluationRequest struct {
	// Pod is the pod to admit. It is sent to plugins as is; it is not
	// modified.
	Pod *v1.Pod
	// Node describes the node in the requests.
	Node podadmissionv1alpha1.NodeInfo
	// Attempt returns the attempt number to send to a plugin; nil sends 1.
	Attempt func(plugin string) int32
	// AllPlugins evaluates every plugin even after one rejected the pod, to
	// show every decision (podadmctl). The kubelet stops at the first.
	AllPlugins bool
}

// Chain is an ordered list of plugins ready to be called. Evaluate is safe
// for concurrent use; a Chain holds no per-pod state.
type Chain struct {
	plugins []*chainPlugin
	// slots are the call slots of every plugin name the chain and the
	// chains before it had, handed on from chain to chain.
	slots map[string]*callSlots

	// inUse is held for reading by every evaluation the Manager runs, so
	// that retiring the chain waits for the evaluations that still use it.
	inUse   sync.RWMutex
	retired bool
}

// NewChain creates the plugins of cfg with newPlugin, in order. On error it
// closes the plugins it already created.
func NewChain(cfg *Config, newPlugin PluginFactory, binDir string) (*Chain, error) {
	return newChainReusing(cfg, nil, newPlugin, binDir)
}

// newChainReusing is NewChain that takes over the plugins of previous whose
// configuration is unchanged, keeping their connections, and the call
// slots of every plugin name previous knew.
func newChainReusing(cfg *Config, previous *Chain, newPlugin PluginFactory, binDir string) (*Chain, error) {
	reusable := map[string]*chainPlugin{}
	chain := &Chain{slots: map[string]*callSlots{}}
	if previous != nil {
		for _, p := range previous.plugins {
			reusable[p.name()] = p
		}
		for name, slots := range previous.slots {
			chain.slots[name] = slots
		}
	}
	var created []*chainPlugin
	for i := range cfg.Plugins {
		configured := cfg.Plugins[i]
		if old, ok := reusable[configured.Name]; ok && samePluginConfig(&old.config.PluginConfig, &configured.PluginConfig) {
			// The file or position may have changed; the plugin has not.
			chain.plugins = append(chain.plugins, &chainPlugin{config: configured, matcher: old.matcher, instance: old.instance})
			continue
		}
		slots, ok := chain.slots[configured.Name]
		if !ok {
			slots = newCallSlots()
			chain.slots[configured.Name] = slots
		}
		p, err := newChainPlugin(configured, newPlugin, binDir, slots)
		if err != nil {
			for _, c := range created {
				_ = c.plugin.Close()
			}
			return nil, fmt.Errorf("%s: plugins[%d]: plugin %q: %w", configured.File, configured.Index, configured.Name, err)
		}
		created = append(created, p)
		chain.plugins = append(chain.plugins, p)
	}
	for _, p := range chain.plugins {
		p.hold()
	}
	return chain, nil
}

// Plugins returns the configuration of the chain's plugins, in order.
func (c *Chain) Plugins() []ConfiguredPlugin {
	out := make([]ConfiguredPlugin, len(c.plugins))
	for i, p := range c.plugins {
		out[i] = p.config
	}
	return out
}

// Close closes every plugin of the chain. The Manager does not use it: it
// retires chains, which closes only the plugins the next chain dropped.
func (c *Chain) Close() error {
	var errs []error
	for _, p := range c.plugins {
		if err := p.plugin.Close(); err != nil {
			errs = append(errs, fmt.Errorf("plugin %q: %w", p.name(), err))
		}
	}
	return errors.Join(errs...)
}

// Evaluate runs the pod through the chain once: plugins in order, each
// plugin whose match section selects the pod called with its timeout and
// concurrency cap; the first rejection decides unless req.AllPlugins.
// Failures count as rejections for plugins with failurePolicy Fail and are
// skipped for Ignore. Evaluate records the plugin metrics and logs each
// decision; it keeps no state.
func (c *Chain) Evaluate(ctx context.Context, req EvaluationRequest) ChainResult {
	logger := klog.FromContext(ctx)
	static := kubetypes.IsStaticPod(req.Pod)
	var result ChainResult
	for _, p := range c.plugins {
		// A decision points at its chainPlugin's configuration, which no
		// one modifies, so it stays valid after a reload.
		decision := PluginDecision{Plugin: &p.config}
		if !p.matcher.matches(req.Pod, static) {
			decision.Outcome = OutcomeNotMatched
			result.Decisions = append(result.Decisions, decision)
			continue
		}
		decision.Attempt = 1
		if req.Attempt != nil {
			decision.Attempt = req.Attempt(p.name())
		}
		c.callPlugin(ctx, p, req, static, &decision)
		logDecision(logger, req.Pod, &decision)
		result.Decisions = append(result.Decisions, decision)
		if decision.Rejects() && (!req.AllPlugins || ctx.Err() != nil) {
			break
		}
	}
	for i := range result.Decisions {
		if result.Decisions[i].Rejects() {
			result.Rejection = &result.Decisions[i]
			break
		}
	}
	return result
}

// callPlugin calls one plugin and fills in decision and the metrics.
func (c *Chain) callPlugin(ctx context.Context, p *chainPlugin, req EvaluationRequest, static bool, decision *PluginDecision) {
	request := &podadmissionv1alpha1.PodAdmissionRequest{
		UID:     uuid.NewUUID(),
		Pod:     req.Pod,
		Node:    req.Node,
		Static:  static,
		Attempt: decision.Attempt,
	}
	request.APIVersion = podadmissionv1alpha1.SchemeGroupVersion.String()
	request.Kind = podadmissionv1alpha1.PodAdmissionRequestKind

	start := time.Now()
	resp, err := p.call(ctx, request)
	decision.Latency = time.Since(start)

	result := resultError
	switch {
	// A call cut short because the caller gave up is no plugin fault to
	// ignore: admitting a pod no plugin decided on would be sticky.
	case err != nil && ctx.Err() == nil && p.config.FailurePolicy == configv1alpha1.FailurePolicyIgnore:
		decision.Outcome, decision.Err = OutcomeFailureIgnored, err
		decisionsTotal.WithLabelValues(p.name(), decisionErrorIgnored).Inc()
	case err != nil:
		decision.Outcome, decision.Err = OutcomeFailed, err
		decisionsTotal.WithLabelValues(p.name(), decisionError).Inc()
	case resp.Allowed:
		decision.Outcome = OutcomeAllowed
		result = resultAllowed
		decisionsTotal.WithLabelValues(p.name(), decisionAllowed).Inc()
	default:
		decision.Outcome = OutcomeRejected
		result = resultRejected
		decisionsTotal.WithLabelValues(p.name(), decisionRejected).Inc()
	}
	if resp != nil {
		decision.Reason, decision.Message = resp.Reason, resp.Message
		// 0, like no hint, means the kubelet's own back-off.
		if resp.RetryAfterSeconds != nil && *resp.RetryAfterSeconds > 0 {
			retryAfter := time.Duration(*resp.RetryAfterSeconds) * time.Second
			decision.RetryAfter = &retryAfter
		}
	}
	pluginDuration.WithLabelValues(p.name(), result).Observe(decision.Latency.Seconds())
}

// PluginStderr returns the end of the stderr of the plugin process whose
// call failed with err, as the Exec transport kept it, or "". It goes to
// the kubelet's log (and podadmctl's report), never to a pod's status: a
// plugin may write anything there, secrets included.
func PluginStderr(err error) string {
	var carrier interface{ Stderr() string }
	if errors.As(err, &carrier) {
		return carrier.Stderr()
	}
	return ""
}

func logDecision(logger klog.Logger, pod *v1.Pod, d *PluginDecision) {
	switch d.Outcome {
	case OutcomeFailed, OutcomeFailureIgnored:
		kv := []any{"pod", klog.KObj(pod), "podUID", pod.UID, "plugin", d.Plugin.Name,
			"failurePolicy", d.Plugin.FailurePolicy, "attempt", d.Attempt, "latency", d.Latency}
		if stderr := PluginStderr(d.Err); stderr != "" {
			kv = append(kv, "stderr", stderr)
		}
		logger.Error(d.Err, "Pod admission plugin failed", kv...)
	case OutcomeRejected:
		logger.V(2).Info("Pod admission plugin rejected pod", "pod", klog.KObj(pod), "podUID", pod.UID, "plugin", d.Plugin.Name,
			"reason", d.Reason, "message", d.Message, "attempt", d.Attempt, "latency", d.Latency)
	default:
		logger.V(4).Info("Pod admission plugin admitted pod", "pod", klog.KObj(pod), "podUID", pod.UID, "plugin", d.Plugin.Name,
			"attempt", d.Attempt, "latency", d.Latency)
	}
}

// acquire returns the chain for an evaluation; it must be released. It
// returns false once the chain is retired: the caller loads the current one.
func (c *Chain) acquire() bool {
	c.inUse.RLock()
	if c.retired {
		c.inUse.RUnlock()
		return false
	}
	return true
}

func (c *Chain) release() { c.inUse.RUnlock() }

// retire waits for the evaluations still using the chain, then lets go of
// its plugins: each is closed once no other chain holds it and no call to
// it is in flight. Evaluations that start later move on to the current
// chain. Retiring a chain twice is a no-op.
func (c *Chain) retire() error {
	c.inUse.Lock()
	already := c.retired
	c.retired = true
	c.inUse.Unlock()
	if already {
		return nil
	}
	var errs []error
	for _, p := range c.plugins {
		if err := p.drop(); err != nil {
			errs = append(errs, fmt.Errorf("plugin %q: %w", p.name(), err))
		}
	}
	return errors.Join(errs...)
}

func samePluginConfig(a, b *configv1alpha1.PluginConfig) bool {
	return equality.Semantic.DeepEqual(a, b)
}
