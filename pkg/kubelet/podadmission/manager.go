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
	"maps"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"
	"k8s.io/utils/clock"

	configv1alpha1 "github.com/podadmission/podadmission/pkg/apis/config/v1alpha1"
	podadmissionv1alpha1 "github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1"
)

const (
	// ReasonUnavailable is the pod status reason while the Manager is
	// stopped (the kubelet is shutting down): pods that have not started
	// stay Pending.
	ReasonUnavailable = "PodAdmissionUnavailable"
	// ReasonInterrupted is the pod status reason when SoftAdmit's context
	// ended during the evaluation; nothing is recorded for the pod.
	ReasonInterrupted = "PodAdmissionInterrupted"
)

// Options configure a Manager.
type Options struct {
	// ConfigPath is the configuration file or directory
	// (--pod-admission-plugin-config). Required.
	ConfigPath string
	// BinDir holds the Exec plugins' executables
	// (--pod-admission-plugin-bin-dir). Required when an Exec plugin is
	// configured.
	BinDir string
	// NodeName is this node's name, sent to plugins and used for node
	// events. Required.
	NodeName string
	// GetNode returns this node for the requests' labels and system info.
	// Optional; when it is nil or fails, requests carry the name only.
	GetNode func() (*v1.Node, error)
	// ActivePods lists the pods the kubelet still runs or may run; the
	// Manager forgets every other pod. Optional: without it, state is kept
	// for every pod ever seen.
	ActivePods func() []*v1.Pod
	// WakePod asks the kubelet to sync the pod with this UID, so that its
	// pod worker evaluates it again. urgent is true when the plugins'
	// answer may have changed (a plugin pushed a re-evaluation, the
	// configuration changed, an evaluation was interrupted): the kubelet
	// syncs the pod at once, with a fresh runtime status (an on-demand
	// relist). It is false when only the pod's back-off or its plugin's
	// maxBlockedDuration expired: the sync may wait for the kubelet's next
	// periodic relist, at most a second, which spares a pod held for hours
	// a relist at every re-evaluation. It must not block. Optional: without
	// it, a held pod is evaluated again only when the kubelet syncs it on
	// its own.
	WakePod func(uid types.UID, urgent bool)
	// Recorder records events on the node (configuration reloads) and on
	// pods (ignored plugin failures). Optional.
	Recorder record.EventRecorder
	// Clock is the clock of back-off, escalation and periodic work; the
	// real clock when nil. Plugin call timeouts use real time.
	Clock clock.WithTicker
	// StateDir is a directory the Manager keeps state that must survive a
	// kubelet restart in; the kubelet passes <root-dir>/pod-admission.
	// Created if missing (0700); it must be root's and not group or world
	// writable, like the configuration. It keeps what the plugins admitted
	// of admitted pods' containers (admitted_checkpoint.go) and the
	// configuration last applied (config_record.go). Optional: without it,
	// nothing outlives the Manager.
	StateDir string

	// newPlugin creates the transports; newTransport when nil. Only this
	// package's tests set it, to call plugins in process.
	newPlugin pluginFactory
}

// Manager runs the pods the kubelet is about to start through the
// configured plugins and holds the rejected ones Pending until they are
// admitted. It implements the kubelet's per-pod soft admission stage
// (SoftAdmit, a lifecycle.PodSoftAdmitHandler) and wakes held pods through
// Options.WakePod when they are due again.
type Manager struct {
	opts    Options
	clock   clock.WithTicker
	nodeRef *v1.ObjectReference

	// chain is the plugins of the current configuration.
	chain atomic.Pointer[Chain]
	// config is the configuration chain was built from, and reloads what
	// the reloads remember between them; only the goroutine that reloads
	// the configuration uses them after Start.
	config  *Config
	reloads reloadLoop

	mu   sync.Mutex
	pods map[types.UID]*podState
	// admittedGen counts the changes of the pods' records of admitted
	// containers, which store keeps (nil without Options.StateDir).
	admittedGen uint64
	store       *admittedStore
	// record keeps the configuration last applied (nil without
	// Options.StateDir); only the goroutine that reloads uses it after
	// Start.
	record *configRecord
	// waker wakes held pods; nil until Start.
	waker *podWaker

	// runCtx is Start's context: the Manager's goroutines live as long as
	// it; cancel ends it.
	runCtx context.Context
	cancel context.CancelFunc
	// lifecycle orders Start and Stop; started and stopped say which ran.
	lifecycle        sync.Mutex
	started, stopped bool
	// running counts the goroutines the Manager started, and plugins the
	// plugins it created that are not closed yet: Stop waits for both.
	running sync.WaitGroup
	plugins sync.WaitGroup
}

// NewManager loads the configuration at opts.ConfigPath and creates its
// plugins, without starting anything: no goroutine runs and no connection
// is made before Start. An invalid configuration is an error that names the
// file and the field. It registers the pod admission metrics with the
// legacy registry.
func NewManager(opts Options) (*Manager, error) {
	switch {
	case opts.ConfigPath == "":
		return nil, errors.New("pod admission: the plugin configuration path is required")
	case opts.NodeName == "":
		return nil, errors.New("pod admission: the node name is required")
	}
	if opts.newPlugin == nil {
		opts.newPlugin = newTransport
	}
	cfg, err := LoadNodeConfig(opts.ConfigPath, opts.BinDir)
	if err != nil {
		return nil, err
	}
	// Before the chain: its plugins keep the series they look up.
	registerMetrics()

	m := &Manager{
		opts:    opts,
		clock:   opts.Clock,
		nodeRef: &v1.ObjectReference{Kind: "Node", Name: opts.NodeName, UID: types.UID(opts.NodeName)},
		config:  cfg,
		pods:    map[types.UID]*podState{},
	}
	if m.clock == nil {
		m.clock = clock.RealClock{}
	}
	logger := klog.Background()
	var restored restoredConfig
	if opts.StateDir != "" {
		state, err := openStateDir(opts.StateDir)
		if err != nil {
			return nil, err
		}
		m.store = newAdmittedStore(state)
		m.record = newConfigRecord(state)
		m.restoreAdmitted(logger)
		restored = m.restoreConfig(logger, cfg)
		m.config = restored.config
	}
	chain, err := newChainReusing(m.config, nil, opts.newPlugin, opts.BinDir, &m.plugins)
	if err != nil && m.config != cfg {
		logger.Error(err, "Pod admission cannot create the plugins kept from the configuration last applied; the configuration files are taken as they are")
		m.config, restored = cfg, restoredConfig{}
		chain, err = newChainReusing(cfg, nil, opts.newPlugin, opts.BinDir, &m.plugins)
	}
	if err != nil {
		return nil, err
	}
	m.reportCutFiles(logger, restored.cut)
	m.saveConfigRecord(logger)
	m.chain.Store(chain)
	return m, nil
}

// Start starts the Manager's background work and returns: the plugins'
// connections and re-evaluation requests, configuration reloads, waking
// held pods, and forgetting pods that are gone. When ctx is done, or Stop
// is called, it all stops and the plugins are closed. A second Start, or a
// Start after Stop, does nothing.
func (m *Manager) Start(ctx context.Context) {
	m.lifecycle.Lock()
	defer m.lifecycle.Unlock()
	if m.started || m.stopped {
		klog.FromContext(ctx).Error(nil, "Pod admission manager started twice, or after it stopped; ignoring this start")
		return
	}
	m.started = true
	ctx, m.cancel = context.WithCancel(ctx)
	m.runCtx = ctx
	if m.opts.WakePod != nil {
		m.mu.Lock()
		m.waker = m.startPodWaker(ctx)
		m.mu.Unlock()
	}
	m.startPlugins(m.chain.Load())
	watch := m.watchConfig(klog.FromContext(ctx))
	// The configuration may have changed between NewManager and the watch;
	// a change found now (a recorded file gone) is applied once it settled.
	retry := m.reload(ctx)
	m.goRun(func() { m.runConfigWatch(ctx, watch, retry) })
	m.goRun(func() { m.runGarbageCollection(ctx) })
}

// Stop stops what Start started and closes the plugins, and returns once
// every goroutine of the Manager has ended and every plugin is closed.
// Calls in flight end first, within their plugins' timeouts. Later
// SoftAdmit calls keep pods Pending with ReasonUnavailable. Stop may be
// called more than once, and without Start.
func (m *Manager) Stop() {
	m.lifecycle.Lock()
	alreadyStopped := m.stopped
	m.stopped = true
	cancel := m.cancel
	m.lifecycle.Unlock()
	if alreadyStopped {
		return
	}
	if cancel != nil {
		cancel()
	}
	// The configuration watch retires the chain on its way out; without
	// Start, nothing did.
	m.running.Wait()
	m.stop(klog.Background())
	m.plugins.Wait()
}

// goRun runs f on a goroutine Stop waits for.
func (m *Manager) goRun(f func()) {
	m.running.Add(1)
	go func() {
		defer m.running.Done()
		f()
	}()
}

// SoftAdmit decides whether a pod that has not started may start. Admit
// true is final: the pod is never evaluated again as a whole (a later
// change of its containers goes to AdmitContainers). Otherwise terminal says
// whether the kubelet fails the pod (a Hard rejection, or a soft one past
// its plugin's maxBlockedDuration) or keeps it Pending with the result's
// reason and message. Until a blocked pod is due again it returns the last
// decision without calling plugins; when it is due, the Manager wakes it
// (Options.WakePod). A pod whose status has a PodAdmitted=False condition
// (it was held before a kubelet restart) goes on being held from the
// condition's lastTransitionTime. Safe for concurrent use by different
// pods; the kubelet never calls it concurrently for one pod.
func (m *Manager) SoftAdmit(ctx context.Context, attrs *lifecycle.PodAdmitAttributes) (lifecycle.PodAdmitResult, bool) {
	pod := attrs.Pod
	now := m.clock.Now()

	m.mu.Lock()
	st, ok := m.pods[pod.UID]
	if !ok {
		st = newPodState(pod)
		m.pods[pod.UID] = st
	}
	st.lastSeen = now
	switch {
	case st.admitted:
		m.mu.Unlock()
		return lifecycle.PodAdmitResult{Admit: true}, false
	case st.terminal:
		defer m.mu.Unlock()
		return st.result, true
	case st.blocked && !st.dueForEvaluation(now):
		defer m.mu.Unlock()
		return st.result, false
	}
	// Cleared before the plugins run, so a re-evaluation pushed while
	// they run is kept for the next sync.
	st.reevaluate = false
	st.push.evaluationStarts()
	attempts := maps.Clone(st.attempts)
	m.mu.Unlock()

	result, ok := m.evaluate(ctx, EvaluationRequest{
		Pod:     pod,
		Node:    m.nodeInfo(ctx),
		Attempt: func(plugin string) int32 { return attempts[plugin] + 1 },
	})
	defer m.evaluationEnded(pod.UID, st)
	if !ok {
		return lifecycle.PodAdmitResult{Reason: ReasonUnavailable, Message: "The pod admission manager is stopped; the pod is evaluated when the kubelet runs it again"}, false
	}

	if err := ctx.Err(); err != nil {
		// The kubelet gave up on this sync; what the plugins said in the
		// meantime is no decision. Evaluate again at the next sync.
		m.mu.Lock()
		st.reevaluate = true
		m.waker.wakeAfter(pod.UID, st.pod, wakeInterrupted, 0)
		m.mu.Unlock()
		return lifecycle.PodAdmitResult{Reason: ReasonInterrupted, Message: fmt.Sprintf("Pod admission was interrupted (%v); the pod is evaluated again at its next sync", err)}, false
	}
	m.recordIgnoredFailures(pod, &result)

	m.mu.Lock()
	for _, d := range result.Decisions {
		if d.Attempt > 0 {
			st.attempts[d.Plugin.Name] = d.Attempt
		}
	}
	if result.Admitted() {
		m.admit(ctx, pod, st)
		m.mu.Unlock()
		m.saveAdmitted(ctx)
		return lifecycle.PodAdmitResult{Admit: true}, false
	}
	defer m.mu.Unlock()
	return m.reject(ctx, pod, st, result.Rejection)
}

// evaluate runs the current chain. It returns false when the Manager is
// stopped.
func (m *Manager) evaluate(ctx context.Context, req EvaluationRequest) (ChainResult, bool) {
	for {
		chain := m.chain.Load()
		if chain.acquire() {
			defer chain.release()
			return chain.Evaluate(ctx, req), true
		}
		if m.chain.Load() == chain {
			// Retired without a successor: the Manager stopped.
			return ChainResult{}, false
		}
	}
}

// admit records that pod may start; m.mu is held.
func (m *Manager) admit(ctx context.Context, pod *v1.Pod, st *podState) {
	st.setBlocked(false)
	if !st.heldSince.IsZero() {
		klog.FromContext(ctx).Info("Pod admission plugins admitted a blocked pod", "pod", klog.KObj(pod), "podUID", pod.UID,
			"blockedFor", m.clock.Since(st.heldSince), "blockedBy", st.blockedBy)
	}
	recordHoldEnd(st.blockedBy, st.heldSince, m.clock.Now())
	*st = podState{pod: st.pod, admitted: true, containers: admittedImagesOf(pod), push: st.push, lastSeen: st.lastSeen}
	m.admittedChanged()
}

// reject records a rejection of pod by decision d; m.mu is held.
func (m *Manager) reject(ctx context.Context, pod *v1.Pod, st *podState, d *PluginDecision) (lifecycle.PodAdmitResult, bool) {
	logger := klog.FromContext(ctx)
	now := m.clock.Now()
	result := lifecycle.PodAdmitResult{Reason: d.PodReason(), Message: d.PodMessage()}
	holdBegan := st.heldSince
	if st.heldSince.IsZero() {
		st.heldSince = now
	}
	heldFor := now.Sub(st.heldSince)

	terminal := d.Plugin.RejectionMode == configv1alpha1.RejectionModeHard
	maxBlocked := d.Plugin.MaxBlockedDuration
	if !terminal && maxBlocked != nil {
		if heldFor >= maxBlocked.Duration {
			terminal = true
			result.Message = appendToMessage(result.Message, fmt.Sprintf(" (blocked for %s, longer than the plugin's maxBlockedDuration of %s)",
				heldFor.Round(time.Second), maxBlocked.Duration))
		}
	}
	if terminal {
		st.setBlocked(false)
		recordHoldEnd(st.blockedBy, holdBegan, now)
		*st = podState{pod: st.pod, terminal: true, result: result, push: st.push, lastSeen: st.lastSeen}
		logger.Info("Pod admission rejected a pod for good", "pod", klog.KObj(pod), "podUID", pod.UID,
			"plugin", d.Plugin.Name, "reason", result.Reason, "message", result.Message)
		return result, true
	}

	// Only a change is news at V(2): a held pod is evaluated again and
	// again, mostly with the same answer.
	changed := !st.blocked || st.blockedBy != d.Plugin.Name || st.result.Reason != result.Reason || st.result.Message != result.Message
	st.setBlocked(true)
	st.nextEvaluation = now.Add(retryDelay(heldFor, d.RetryAfter))
	if maxBlocked != nil {
		// Evaluate again no later than the escalation deadline, so the pod
		// fails on time even when the back-off is longer.
		if deadline := st.heldSince.Add(maxBlocked.Duration); deadline.Before(st.nextEvaluation) {
			st.nextEvaluation = deadline
		}
	}
	m.waker.wakeAfter(pod.UID, st.pod, wakeBackoff, st.nextEvaluation.Sub(now))
	st.blockedBy = d.Plugin.Name
	st.result = result
	level := 4
	if changed {
		level = 2
	}
	if v := logger.V(level); v.Enabled() {
		v.Info("Pod admission holds a pod Pending", "pod", klog.KObj(pod), "podUID", pod.UID,
			"plugin", d.Plugin.Name, "reason", result.Reason, "message", result.Message, "attempt", d.Attempt,
			"nextEvaluation", st.nextEvaluation.Sub(now), "blockedFor", heldFor)
	}
	return result, false
}

// nodeInfo describes this node for requests; the name alone if the node
// object is not available.
func (m *Manager) nodeInfo(ctx context.Context) podadmissionv1alpha1.NodeInfo {
	info := podadmissionv1alpha1.NodeInfo{Name: m.opts.NodeName}
	if m.opts.GetNode == nil {
		return info
	}
	node, err := m.opts.GetNode()
	if err != nil || node == nil {
		klog.FromContext(ctx).V(4).Info("Node object not available for pod admission requests; sending the node name only", "node", m.opts.NodeName, "err", err)
		return info
	}
	info.Labels = node.Labels
	info.NodeInfo = node.Status.NodeInfo
	return info
}
