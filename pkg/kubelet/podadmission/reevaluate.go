package podadmission

import (
	"context"

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

// reevaluate marks pods for evaluation at the next sync, ahead of their
// back-off: the pods r names, or with All every pod not yet decided. A pod
// whose evaluation is running is marked too, so a request that races with
// a rejection is not lost.
func (m *Manager) reevaluate(ctx context.Context, plugin string, r Reevaluation) {
	m.mu.Lock()
	defer m.mu.Unlock()
	marked := 0
	mark := func(st *podState) {
		if !st.admitted && !st.terminal {
			st.reevaluate = true
			marked++
		}
	}
	if r.All {
		for _, st := range m.pods {
			mark(st)
		}
	} else {
		for _, uid := range r.PodUIDs {
			if st, ok := m.pods[uid]; ok {
				mark(st)
			}
		}
	}
	klog.FromContext(ctx).V(2).Info("Pod admission plugin asked for re-evaluation", "plugin", plugin,
		"all", r.All, "podUIDs", len(r.PodUIDs), "marked", marked)
}

// reevaluateAll marks every pod not yet decided, after a configuration change.
func (m *Manager) reevaluateAll(ctx context.Context) {
	m.reevaluate(ctx, "", Reevaluation{All: true})
}
