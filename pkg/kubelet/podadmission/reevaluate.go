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
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/transport"
)

// startPlugins starts the plugins of chain that have not started yet, and
// forwards the re-evaluation requests of those that push them, on a
// goroutine per plugin instance that ends when the plugin is closed or the
// Manager stops.
func (m *Manager) startPlugins(chain *Chain) {
	for _, p := range chain.plugins {
		p.start(m.runCtx, func(requests <-chan transport.Reevaluation) {
			m.goRun(func() { m.forwardReevaluations(m.runCtx, p.name(), requests) })
		})
	}
}

func (m *Manager) forwardReevaluations(ctx context.Context, plugin string, requests <-chan transport.Reevaluation) {
	for {
		select {
		case <-ctx.Done():
			return
		case r, ok := <-requests:
			if !ok {
				return
			}
			m.reevaluate(ctx, plugin, r)
		}
	}
}

// reevaluate answers a push of plugin: of the pods r names, or with All of
// every pod, those the plugin holds (its rejection or failure holds the pod,
// or an update of it) are woken to be evaluated again, at the rate
// pushInterval and pushBurst allow. A pod the plugin does not hold is not
// evaluated for it, so no plugin's push costs another plugin a call; the
// pods r names that way are counted
// (kubelet_pod_admission_reevaluations_ignored_total). A push that arrives
// while the pod is being evaluated counts once the evaluation says who holds
// it, so a push racing with the plugin's own rejection is not lost. However
// many pushes name a pod before its worker runs, it is evaluated once, and
// pods the Manager does not know cost a map lookup.
func (m *Manager) reevaluate(ctx context.Context, plugin string, r transport.Reevaluation) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.clock.Now()
	woken, ignored := 0, 0
	if r.All {
		for uid, st := range m.pods {
			if m.pushed(uid, st, plugin, false, now) == pushWoke {
				woken++
			}
		}
	} else {
		for _, uid := range r.PodUIDs {
			outcome := pushIgnored
			if st, ok := m.pods[uid]; ok {
				outcome = m.pushed(uid, st, plugin, true, now)
			}
			switch outcome {
			case pushWoke:
				woken++
			case pushIgnored:
				ignored++
			}
		}
	}
	if ignored > 0 {
		reevaluationsIgnored.WithLabelValues(plugin).Add(float64(ignored))
	}
	// A flood of requests for pods the plugin does not hold is logged
	// only at high verbosity, and costs no allocation when not logged.
	verbosity := 2
	if woken == 0 {
		verbosity = 5
	}
	if logger := klog.FromContext(ctx).V(verbosity); logger.Enabled() {
		logger.Info("Pod admission plugin asked for re-evaluation", "plugin", plugin,
			"all", r.All, "podUIDs", len(r.PodUIDs), "held", woken, "ignored", ignored)
	}
}

// pushOutcome is what a push did for one pod.
type pushOutcome int

const (
	pushIgnored pushOutcome = iota // the plugin does not hold the pod
	pushWoke                       // the plugin holds it: due now or at its turn
	pushRacing                     // under evaluation: decided when it ends
)

// pushed answers plugin's push for one pod; m.mu is held.
func (m *Manager) pushed(uid types.UID, st *podState, plugin string, named bool, now time.Time) pushOutcome {
	switch {
	case st.push.evaluating:
		st.push.race(plugin, named)
		return pushRacing
	case st.heldBy() == plugin:
		m.wakeForPush(uid, st, plugin, now)
		return pushWoke
	}
	return pushIgnored
}

// wakeForPush makes a pod its pushing plugin holds due, at once or, over
// the rate, when its turn comes; m.mu is held.
func (m *Manager) wakeForPush(uid types.UID, st *podState, plugin string, now time.Time) {
	if st.dueForEvaluation(now) || !st.push.deferredUntil.IsZero() {
		return // due already, or soon: its wake is on its way
	}
	if wait := st.push.take(plugin, now); wait > 0 {
		st.push.deferredUntil = now.Add(wait)
		m.waker.wakeAfter(uid, st.pod, wakePush, wait)
		return
	}
	st.reevaluate = true
	m.waker.wakeAfter(uid, st.pod, wakePush, 0)
}

// evaluationEnded answers the pushes that arrived during the evaluation of
// a pod (or of its update) that just ended: the push of the plugin that now
// holds the pod wakes it, the others are ignored.
func (m *Manager) evaluationEnded(uid types.UID, st *podState) {
	m.mu.Lock()
	defer m.mu.Unlock()
	holder := st.heldBy()
	for _, r := range st.push.evaluationEnds() {
		switch {
		case r.plugin == holder:
			m.wakeForPush(uid, st, holder, m.clock.Now())
		case r.named:
			reevaluationsIgnored.WithLabelValues(r.plugin).Inc()
		}
	}
}

// reevaluateAll wakes every pod not decided yet (or with an update not
// decided yet) at once, whatever holds it and however recently pushes woke
// it: the configuration changed, and what held them may have too. A pod
// being evaluated is marked as well, to be evaluated again with the new
// configuration.
func (m *Manager) reevaluateAll(ctx context.Context) {
	m.mu.Lock()
	defer m.mu.Unlock()
	woken := 0
	for uid, st := range m.pods {
		if !st.awaitsDecision() {
			continue
		}
		woken++
		if !st.reevaluate {
			st.reevaluate = true
			m.waker.wakeAfter(uid, st.pod, wakeReload, 0)
		}
	}
	klog.FromContext(ctx).V(2).Info("Pod admission woke every pod not decided yet", "cause", wakeReload, "pods", woken)
}
