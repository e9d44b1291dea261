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

package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
	networkinglisters "k8s.io/client-go/listers/networking/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/podadmission/podadmission/pkg/plugin"
	podv1 "github.com/podadmission/podadmission/pkg/plugin/corev1"
)

// Pod status reasons of the pods the gate holds.
const (
	// ReasonCacheNotSynced: the gate does not know the cluster's
	// NetworkPolicies yet.
	ReasonCacheNotSynced = "NetworkPolicyCacheNotSynced"
	// ReasonNotAcknowledged: a NetworkPolicy that selects the pod has not
	// been acknowledged by the node's policy agent.
	ReasonNotAcknowledged = "NetworkPolicyNotAcknowledged"
	// ReasonSettling: a NetworkPolicy that selects the pod has not been
	// known for the settle time yet.
	ReasonSettling = "NetworkPolicySettling"
	// ReasonAcknowledgementsUntrusted: the acknowledgement directory fails
	// its trust check, so no acknowledgement in it counts.
	ReasonAcknowledgementsUntrusted = "NetworkPolicyAcknowledgementsUntrusted"
)

const (
	// informerLagAllowance bounds how long a policy found by the gate's own
	// consistent LIST, but not by its informer, keeps counting for a pod: the
	// informer normally catches up within milliseconds; a policy it never
	// delivers was deleted in between.
	informerLagAllowance = time.Minute
	// blockedPodTTL is how long the gate remembers a pod it holds after the
	// kubelet last asked about it; the kubelet asks again within its
	// back-off cap (a few minutes) while the pod exists.
	blockedPodTTL = 10 * time.Minute
)

// reevaluator asks the kubelet to evaluate pods again; *grpcplugin.Server.
type reevaluator interface {
	Reevaluate(uids ...podv1.UID)
	ReevaluateAll()
}

// gateConfig is what the gate waits for.
type gateConfig struct {
	// acks returns the acknowledgements of the node's policy agent, or
	// why none count (the directory is not trusted); nil when no
	// acknowledgement directory is configured, in which case a policy
	// counts once it has been known for settleTime.
	acks       func() (ackSet, error)
	ackDir     string
	settleTime time.Duration
	// exemptHostNetwork admits host-network pods at once: NetworkPolicies
	// do not apply to them.
	exemptHostNetwork bool
	// exemptNamespaces admits the pods of the namespaces it selects; nil
	// selects none.
	exemptNamespaces labels.Selector
}

// gate decides whether a pod may start: once every NetworkPolicy that
// selects it is in force on the node. It remembers the pods it holds and
// asks the kubelet to evaluate them again the moment that changes.
type gate struct {
	cfg        gateConfig
	clock      clock.WithDelayedExecution
	policies   networkinglisters.NetworkPolicyLister
	namespaces corelisters.NamespaceLister
	// synced says whether the listers hold the cluster's state.
	synced func() bool
	// listPolicies reads the NetworkPolicies of a namespace from the API
	// server (a consistent read), to catch a policy the informer has not
	// delivered yet.
	listPolicies func(ctx context.Context, namespace string) ([]*networkingv1.NetworkPolicy, error)
	pusher       reevaluator

	mu      sync.Mutex
	blocked map[podv1.UID]*blockedPod
	// firstSeen is when the gate first saw each policy at its current
	// generation (settle time).
	firstSeen map[types.UID]seenGeneration
	// settleTimer fires when the next held pod's policies have settled.
	settleTimer clock.Timer
	settleAt    time.Time

	recheckRequests chan struct{}
}

type seenGeneration struct {
	generation int64
	at         time.Time
}

// blockedPod is a pod the gate holds.
type blockedPod struct {
	pod *podv1.Pod
	// extra are the policies selecting the pod that the consistent LIST
	// found at first sight, until extraUntil.
	extra      []*networkingv1.NetworkPolicy
	extraUntil time.Time
	// lastRequest is when the kubelet last asked about the pod.
	lastRequest time.Time
	// pushed: the gate asked the kubelet to evaluate the pod again and
	// waits for it to ask.
	pushed bool
}

// verdict is the gate's decision on one pod.
type verdict struct {
	allowed bool
	reason  string
	message string
	// settledAt is when the policies the pod waits for have all been known
	// for the settle time (settle mode).
	settledAt time.Time
}

func newGate(cfg gateConfig, clk clock.WithDelayedExecution, policies networkinglisters.NetworkPolicyLister, namespaces corelisters.NamespaceLister,
	synced func() bool, listPolicies func(context.Context, string) ([]*networkingv1.NetworkPolicy, error), pusher reevaluator) *gate {
	return &gate{
		cfg:             cfg,
		clock:           clk,
		policies:        policies,
		namespaces:      namespaces,
		synced:          synced,
		listPolicies:    listPolicies,
		pusher:          pusher,
		blocked:         map[podv1.UID]*blockedPod{},
		firstSeen:       map[types.UID]seenGeneration{},
		recheckRequests: make(chan struct{}, 1),
	}
}

// admit answers one request of the kubelet.
func (g *gate) admit(ctx context.Context, req *plugin.Request) *plugin.Response {
	logger := klog.FromContext(ctx)
	pod := req.Pod

	g.mu.Lock()
	_, known := g.blocked[pod.UID]
	g.mu.Unlock()
	var extra []*networkingv1.NetworkPolicy
	if !known && g.synced() && !g.exemptByPod(pod) {
		// The pod may have been created right after a policy that the
		// informer has not delivered yet: ask the API server once.
		extra = g.selectingFromAPI(ctx, pod)
	}

	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.clock.Now()
	rec, ok := g.blocked[pod.UID]
	if !ok {
		rec = &blockedPod{extra: extra, extraUntil: now.Add(informerLagAllowance)}
	}
	rec.pod, rec.lastRequest, rec.pushed = pod, now, false
	v := g.evaluateLocked(logger, rec, now)
	if v.allowed {
		delete(g.blocked, pod.UID)
		logger.V(2).Info("Admitting pod", "pod", klog.KObj(pod), "podUID", pod.UID, "heldBefore", ok)
		return plugin.Allow()
	}
	g.blocked[pod.UID] = rec
	g.armSettleTimerLocked(v.settledAt, now)
	logger.V(2).Info("Holding pod", "pod", klog.KObj(pod), "podUID", pod.UID, "reason", v.reason, "message", v.message)
	resp := plugin.Deny(v.reason, v.message)
	if !v.settledAt.IsZero() {
		// The gate pushes at that moment anyway; the hint keeps the
		// kubelet from asking earlier for nothing.
		seconds := int32(v.settledAt.Sub(now).Seconds()) + 1
		resp.RetryAfterSeconds = &seconds
	}
	return resp
}

func (g *gate) exemptByPod(pod *podv1.Pod) bool {
	return g.cfg.exemptHostNetwork && pod.Spec.HostNetwork
}

// selectingFromAPI returns the policies selecting pod that the API server
// has and the informer has not delivered (at their generation) yet. When it
// cannot tell, the informer's view decides alone.
func (g *gate) selectingFromAPI(ctx context.Context, pod *podv1.Pod) []*networkingv1.NetworkPolicy {
	list, err := g.listPolicies(ctx, pod.Namespace)
	if err != nil {
		klog.FromContext(ctx).Error(err, "Listing the NetworkPolicies of a new pod's namespace; relying on the informer cache", "pod", klog.KObj(pod), "namespace", pod.Namespace)
		return nil
	}
	// Keep what the informer has not delivered yet; the informer is the
	// source for everything else, deletions included.
	var missing []*networkingv1.NetworkPolicy
	for _, np := range list {
		if cached, err := g.policies.NetworkPolicies(np.Namespace).Get(np.Name); err == nil && cached.UID == np.UID && cached.Generation >= np.Generation {
			continue
		}
		if ok, err := selects(np, pod); err != nil || ok {
			missing = append(missing, np)
		}
	}
	return missing
}

// evaluateLocked decides on rec's pod; g.mu is held.
func (g *gate) evaluateLocked(logger klog.Logger, rec *blockedPod, now time.Time) verdict {
	pod := rec.pod
	if g.exemptByPod(pod) {
		return verdict{allowed: true}
	}
	if !g.synced() {
		return verdict{reason: ReasonCacheNotSynced, message: "waiting for the gate's NetworkPolicy and Namespace caches to sync with the API server"}
	}
	if exempt, err := g.exemptByNamespace(pod.Namespace); err != nil {
		return verdict{reason: ReasonCacheNotSynced, message: err.Error()}
	} else if exempt {
		return verdict{allowed: true}
	}

	cached, err := g.policies.NetworkPolicies(pod.Namespace).List(labels.Everything())
	if err != nil {
		return verdict{reason: ReasonCacheNotSynced, message: fmt.Sprintf("cannot list the NetworkPolicies of namespace %s: %v", pod.Namespace, err)}
	}
	candidates := cached
	if now.Before(rec.extraUntil) {
		candidates = mergePolicies(cached, rec.extra)
	}
	var acks ackSet
	var untrusted error
	if g.cfg.acks != nil {
		acks, untrusted = g.cfg.acks()
	}
	var waiting []policyRef
	var settledAt time.Time
	for _, np := range candidates {
		ok, err := selects(np, pod)
		if err != nil {
			// The API server validates selectors; a policy it accepted
			// and this gate cannot read selects the pod, to be safe.
			logger.Error(err, "Treating a NetworkPolicy with an unreadable selector as selecting the pod", "pod", klog.KObj(pod))
			ok = true
		}
		if !ok {
			continue
		}
		ref := refOf(np)
		if g.cfg.acks != nil {
			if untrusted != nil || !acks.acknowledged(ref) {
				waiting = append(waiting, ref)
			}
			continue
		}
		if at := g.knownSinceLocked(ref, now).Add(g.cfg.settleTime); at.After(now) {
			waiting = append(waiting, ref)
			if at.After(settledAt) {
				settledAt = at
			}
		}
	}
	if len(waiting) == 0 {
		return verdict{allowed: true}
	}
	sortRefs(waiting)
	switch {
	case untrusted != nil:
		return verdict{reason: ReasonAcknowledgementsUntrusted, message: untrustedAcksMessage(waiting, untrusted)}
	case g.cfg.acks != nil:
		return verdict{reason: ReasonNotAcknowledged, message: notAcknowledgedMessage(waiting, g.cfg.ackDir)}
	}
	return verdict{reason: ReasonSettling, message: settlingMessage(waiting, settledAt.Sub(now), g.cfg.settleTime), settledAt: settledAt}
}

// exemptByNamespace says whether the pods of namespace are exempt. A
// namespace the cache does not have yet is an error: its labels decide.
func (g *gate) exemptByNamespace(namespace string) (bool, error) {
	if g.cfg.exemptNamespaces == nil {
		return false, nil
	}
	ns, err := g.namespaces.Get(namespace)
	if apierrors.IsNotFound(err) {
		return false, fmt.Errorf("waiting for namespace %s to reach the gate's cache, to match --exempt-namespace-selector", namespace)
	}
	if err != nil {
		return false, err
	}
	return g.cfg.exemptNamespaces.Matches(labels.Set(ns.Labels)), nil
}

// knownSinceLocked is when ref has been known at its generation: when the
// gate first saw it, or when the API server wrote it if that is earlier (a
// policy older than the gate's start is not new to the node's agent).
func (g *gate) knownSinceLocked(ref policyRef, now time.Time) time.Time {
	seen, ok := g.firstSeen[ref.UID]
	if !ok || seen.generation != ref.Generation {
		seen = seenGeneration{generation: ref.Generation, at: now}
		g.firstSeen[ref.UID] = seen
	}
	if !ref.ChangedAt.IsZero() && ref.ChangedAt.Before(seen.at) {
		return ref.ChangedAt
	}
	return seen.at
}

// policySeen records that the informer delivered np (settle time).
func (g *gate) policySeen(np *networkingv1.NetworkPolicy) {
	g.mu.Lock()
	if seen, ok := g.firstSeen[np.UID]; !ok || seen.generation != np.Generation {
		g.firstSeen[np.UID] = seenGeneration{generation: np.Generation, at: g.clock.Now()}
	}
	g.mu.Unlock()
	g.requestRecheck()
}

// policyGone records that np was deleted.
func (g *gate) policyGone(uid types.UID) {
	g.mu.Lock()
	delete(g.firstSeen, uid)
	for _, rec := range g.blocked {
		rec.extra = slices.DeleteFunc(rec.extra, func(np *networkingv1.NetworkPolicy) bool { return np.UID == uid })
	}
	g.mu.Unlock()
	g.requestRecheck()
}

// armSettleTimerLocked makes sure a recheck runs at at; g.mu is held.
func (g *gate) armSettleTimerLocked(at, now time.Time) {
	if at.IsZero() || (g.settleTimer != nil && !g.settleAt.After(at)) {
		return
	}
	if g.settleTimer != nil {
		g.settleTimer.Stop()
	}
	g.settleAt = at
	g.settleTimer = g.clock.AfterFunc(at.Sub(now), func() {
		g.mu.Lock()
		g.settleTimer, g.settleAt = nil, time.Time{}
		g.mu.Unlock()
		g.requestRecheck()
	})
}

// requestRecheck asks runRechecks to look at the held pods again. It never
// blocks; requests made while a recheck is pending merge.
func (g *gate) requestRecheck() {
	select {
	case g.recheckRequests <- struct{}{}:
	default:
	}
}

// runRechecks rechecks the held pods on request, and once a minute to
// forget the pods the kubelet stopped asking about, until ctx is done.
func (g *gate) runRechecks(ctx context.Context) {
	ticker := g.clock.NewTimer(time.Minute)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-g.recheckRequests:
		case <-ticker.C():
			ticker.Reset(time.Minute)
		}
		g.recheck(ctx)
	}
}

// recheck asks the kubelet to evaluate again every held pod that the gate
// would now admit.
func (g *gate) recheck(ctx context.Context) {
	logger := klog.FromContext(ctx)
	g.mu.Lock()
	now := g.clock.Now()
	var admissible []podv1.UID
	for uid, rec := range g.blocked {
		if now.Sub(rec.lastRequest) > blockedPodTTL {
			delete(g.blocked, uid)
			continue
		}
		if rec.pushed {
			continue
		}
		v := g.evaluateLocked(logger, rec, now)
		if v.allowed {
			rec.pushed = true
			admissible = append(admissible, uid)
			continue
		}
		g.armSettleTimerLocked(v.settledAt, now)
	}
	g.mu.Unlock()
	if len(admissible) > 0 {
		logger.V(2).Info("Asking the kubelet to evaluate pods again", "pods", len(admissible))
		g.pusher.Reevaluate(admissible...)
	}
}

// cachesSynced asks the kubelet to evaluate every pod the gate holds, so
// that pods held for the caches get the real decision or message at once.
func (g *gate) cachesSynced(ctx context.Context) {
	klog.FromContext(ctx).Info("NetworkPolicy and Namespace caches synced")
	g.pusher.ReevaluateAll()
	g.requestRecheck()
}
