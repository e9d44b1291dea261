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
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
)

// gcInterval is how often the Manager forgets pods the kubelet dropped.
const gcInterval = time.Minute

func (m *Manager) runGarbageCollection(ctx context.Context) {
	if m.opts.ActivePods == nil {
		return
	}
	ticker := m.clock.NewTicker(gcInterval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C():
			m.collectGarbage(ctx)
		}
	}
}

// collectGarbage forgets the pods that are not active any more. A pod seen
// by SoftAdmit after the list was taken is kept: it may be too new to be in
// the list.
func (m *Manager) collectGarbage(ctx context.Context) {
	listedAt := m.clock.Now()
	active := sets.New[types.UID]()
	for _, pod := range m.opts.ActivePods() {
		active.Insert(pod.UID)
	}

	m.mu.Lock()
	forgotten := 0
	for uid, st := range m.pods {
		if active.Has(uid) || !st.lastSeen.Before(listedAt) {
			continue
		}
		st.setBlocked(false)
		if st.update != nil {
			heldContainers.Add(-float64(len(st.update.changes)))
		}
		if st.containers != nil {
			m.admittedChanged()
		}
		delete(m.pods, uid)
		forgotten++
	}
	remaining := len(m.pods)
	m.mu.Unlock()
	if forgotten > 0 {
		klog.FromContext(ctx).V(4).Info("Pod admission forgot pods that are gone", "pods", forgotten, "remaining", remaining)
		m.saveAdmitted(ctx)
	}
}
