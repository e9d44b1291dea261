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
		p.start(func(requests <-chan transport.Reevaluation) {
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

// reevaluate marks pods for evaluation ahead of their back-off and wakes
// them: the pods r names, or with All every pod not yet decided. A pod
// whose evaluation is running is marked too, so a request that races with
// a rejection is not lost. Only a pod that was not marked yet is woken:
// however many requests name it before its worker runs, it is evaluated
// once, and requests for pods the Manager does not know cost a map lookup.
func (m *Manager) reevaluate(ctx context.Context, plugin string, r transport.Reevaluation) {
	cause := wakePush
	if plugin == "" {
		cause = wakeReload
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	marked := 0
	mark := func(uid types.UID, st *podState) {
		if !st.awaitsDecision() {
			return
		}
		marked++
		if !st.reevaluate {
			st.reevaluate = true
			m.waker.wakeAfter(uid, st.pod, cause, 0)
		}
	}
	if r.All {
		for uid, st := range m.pods {
			mark(uid, st)
		}
	} else {
		for _, uid := range r.PodUIDs {
			if st, ok := m.pods[uid]; ok {
				mark(uid, st)
			}
		}
	}
	// A flood of requests for pods the Manager does not hold is logged
	// only at high verbosity, and costs no allocation when not logged.
	verbosity := 2
	if marked == 0 {
		verbosity = 5
	}
	if logger := klog.FromContext(ctx).V(verbosity); logger.Enabled() {
		logger.Info("Pod admission plugin asked for re-evaluation", "plugin", plugin,
			"all", r.All, "podUIDs", len(r.PodUIDs), "marked", marked)
	}
}

// reevaluateAll marks every pod not yet decided, after a configuration change.
func (m *Manager) reevaluateAll(ctx context.Context) {
	m.reevaluate(ctx, "", transport.Reevaluation{All: true})
}
