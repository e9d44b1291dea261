package podadmission

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
)

// watchReevaluations forwards the re-evaluation requests of p, if it is a
// Reevaluator, until its channel is closed (the plugin was closed) or ctx is
// done. It starts one goroutine per plugin instance, however often called.
func (m *Manager) watchReevaluations(ctx context.Context, p *chainPlugin) {
	reevaluator, ok := p.plugin.(Reevaluator)
	if !ok {
		return
	}
	p.watchOnce.Do(func() {
		requests := reevaluator.Reevaluations()
		go func() {
			for {
				select {
				case <-ctx.Done():
					return
				case r, ok := <-requests:
					if !ok {
						return
					}
					m.reevaluate(ctx, p.name(), r)
				}
			}
		}()
	})
}

// reevaluate marks pods for evaluation ahead of their back-off and wakes
// them: the pods r names, or with All every pod not yet decided. A pod
// whose evaluation is running is marked too, so a request that races with
// a rejection is not lost. Only a pod that was not marked yet is woken:
// however many requests name it before its worker runs, it is evaluated
// once, and requests for pods the Manager does not know cost a map lookup.
func (m *Manager) reevaluate(ctx context.Context, plugin string, r Reevaluation) {
	cause := wakePush
	if plugin == "" {
		cause = wakeReload
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	marked := 0
	mark := func(uid types.UID, st *podState) {
		if st.admitted || st.terminal {
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
	// only at high verbosity.
	verbosity := 2
	if marked == 0 {
		verbosity = 5
	}
	klog.FromContext(ctx).V(verbosity).Info("Pod admission plugin asked for re-evaluation", "plugin", plugin,
		"all", r.All, "podUIDs", len(r.PodUIDs), "marked", marked)
}

// reevaluateAll marks every pod not yet decided, after a configuration change.
func (m *Manager) reevaluateAll(ctx context.Context) {
	m.reevaluate(ctx, "", Reevaluation{All: true})
}
