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
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	kubetypes "k8s.io/kubernetes/pkg/kubelet/types"

	configv1alpha1 "github.com/podadmission/podadmission/pkg/apis/config/v1alpha1"
	podadmissionv1alpha1 "github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/transport"
)

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
		return sanitizeMessage(fmt.Sprintf("Pod admission plugin %q failed (failurePolicy Fail): %v", d.Plugin.Name, d.Err))
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
	// OldPod makes the request an Update: it is the pod as the plugins
	// admitted it, and Pod the pod with the containers the kubelet would
	// start only if the update is admitted. nil for a pod's first
	// admission (a Create).
	OldPod *v1.Pod
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
	// names are the call slots and metrics of every plugin name the chain
	// and the chains before it had, handed on from chain to chain.
	names map[string]*pluginName

	// inUse is held for reading by every evaluation the Manager runs, so
	// that retiring the chain waits for the evaluations that still use it.
	inUse   sync.RWMutex
	retired bool
}

// NewChain creates the plugins of cfg, in order, with the kubelet's
// transports (an Exec plugin runs its executable from binDir, a GRPC
// plugin connects to its endpoint), and starts them, for a tool such as
// podadmctl that evaluates pods without a Manager; the plugins' background
// work logs through ctx's logger and ends with ctx or at Close. Close it
// when done, as the Manager closes its chains. On error it closes the plugins it already created.
func NewChain(ctx context.Context, cfg *Config, binDir string) (*Chain, error) {
	chain, err := newChain(cfg, newTransport, binDir)
	if err != nil {
		return nil, err
	}
	for _, p := range chain.plugins {
		p.start(ctx, nil)
	}
	return chain, nil
}

// pluginFactory creates the transport of one configured plugin; it must
// not block on the plugin, nor start anything.
type pluginFactory func(cfg *configv1alpha1.PluginConfig, binDir string) (transport.Plugin, error)

// newChain is NewChain with the given transports, not started.
func newChain(cfg *Config, newPlugin pluginFactory, binDir string) (*Chain, error) {
	return newChainReusing(cfg, nil, newPlugin, binDir, nil)
}

// newChainReusing creates the chain of cfg, not started. It takes over the
// plugins of previous whose configuration is unchanged, keeping their
// connections, and the call slots and metrics of every plugin name
// previous knew. Every plugin it creates counts in closed (when set) until
// it is closed.
func newChainReusing(cfg *Config, previous *Chain, newPlugin pluginFactory, binDir string, closed *sync.WaitGroup) (*Chain, error) {
	reusable := map[string]*chainPlugin{}
	chain := &Chain{names: map[string]*pluginName{}}
	if previous != nil {
		for _, p := range previous.plugins {
			reusable[p.name()] = p
		}
		for name, state := range previous.names {
			chain.names[name] = state
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
		names, ok := chain.names[configured.Name]
		if !ok {
			names = newPluginName(configured.Name)
			chain.names[configured.Name] = names
		}
		p, err := newChainPlugin(configured, newPlugin, binDir, names, closed)
		if err != nil {
			for _, c := range created {
				_ = c.plugin.Close()
				if closed != nil {
					closed.Done()
				}
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

func newChainPlugin(cfg ConfiguredPlugin, newPlugin pluginFactory, binDir string, names *pluginName, closed *sync.WaitGroup) (*chainPlugin, error) {
	matcher, err := newPodMatcher(cfg.Match)
	if err != nil {
		return nil, err
	}
	plugin, err := newPlugin(&cfg.PluginConfig, binDir)
	if err != nil {
		return nil, err
	}
	if closed != nil {
		closed.Add(1)
	}
	return &chainPlugin{
		config:   cfg,
		matcher:  matcher,
		instance: &instance{plugin: plugin, names: names, closed: closed},
	}, nil
}

// Plugins returns the configuration of the chain's plugins, in order.
func (c *Chain) Plugins() []ConfiguredPlugin {
	out := make([]ConfiguredPlugin, len(c.plugins))
	for i, p := range c.plugins {
		out[i] = p.config
	}
	return out
}

// Evaluate runs the pod through the chain once: plugins in order, each
// plugin whose match section selects the pod called with its timeout and
// concurrency cap; the first rejection decides unless req.AllPlugins.
// Failures count as rejections for plugins with failurePolicy Fail and are
// skipped for Ignore. Evaluate records the plugin metrics and logs each
// decision; it keeps no state.
func (c *Chain) Evaluate(ctx context.Context, req EvaluationRequest) ChainResult {
	static := kubetypes.IsStaticPod(req.Pod)
	result := ChainResult{Decisions: make([]PluginDecision, 0, len(c.plugins))}
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
		p.evaluate(ctx, req, static, &decision)
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

// Close retires the chain: it waits for the evaluations the Manager runs
// on it, then lets go of its plugins, each closed once no other chain
// holds it and no call to it is in flight. Evaluations the Manager starts
// later move on to its current chain. Closing a chain twice is a no-op.
// The Manager closes a chain when a reload replaces it and when it stops;
// a chain made by NewChain is closed by its user.
func (c *Chain) Close() error {
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
