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
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
)

// The checkpoint keeps what the plugins admitted of admitted pods'
// containers across kubelet restarts, in Options.StateDir (state_dir.go),
// like the allocation manager's. It matters for what the runtime
// does not show: a container admitted but not started yet, and the exact
// image a running container was admitted with while an update of it is
// held. A lost or stale checkpoint never stops what runs: what the runtime
// has started counts as admitted (see reconcile).

// AdmittedCheckpointName is the file in Options.StateDir that keeps what the
// plugins admitted of admitted pods' containers.
const AdmittedCheckpointName = "admitted_containers_state"

// restoredStateGrace is how long after NewManager the state of a pod
// restored from the checkpoint is kept although the kubelet does not list
// it: until the kubelet's pod sources are ready (the API server may be out
// of reach when it starts) its list of active pods is incomplete.
const restoredStateGrace = 10 * time.Minute

type admittedCheckpointData struct {
	// Pods maps a pod's UID to the images the plugins admitted of its
	// containers.
	Pods map[types.UID]admittedImages `json:"pods"`
}

// admittedStore reads and writes the checkpoint.
type admittedStore struct {
	state *stateDirectory
	path  string

	// mu serializes writes; savedGen is the Manager's admittedGen of the
	// last write.
	mu       sync.Mutex
	savedGen uint64
}

// newAdmittedStore is the checkpoint in state.
func newAdmittedStore(state *stateDirectory) *admittedStore {
	return &admittedStore{state: state, path: state.path(AdmittedCheckpointName)}
}

// load returns the pods of the checkpoint; none, without an error, when
// there is no checkpoint yet.
func (s *admittedStore) load() (map[types.UID]admittedImages, error) {
	var cp stateCheckpoint
	if found, err := s.state.read(AdmittedCheckpointName, &cp); !found || err != nil {
		return nil, err
	}
	var data admittedCheckpointData
	if err := strictJSON([]byte(cp.Data), &data); err != nil {
		return nil, fmt.Errorf("%s: data: %w", s.path, err)
	}
	for uid, images := range data.Pods {
		if uid == "" || images == nil {
			return nil, fmt.Errorf("%s: data: pods: an entry without a pod UID or containers", s.path)
		}
	}
	return data.Pods, nil
}

// save writes pods as the checkpoint, durably.
func (s *admittedStore) save(pods map[types.UID]admittedImages) error {
	cp, err := newStateCheckpoint(admittedCheckpointData{Pods: pods})
	if err != nil {
		return err
	}
	return s.state.write(AdmittedCheckpointName, cp)
}

// restoreAdmitted gives the Manager the pods of the checkpoint, as
// admitted. A checkpoint it cannot use (corrupt, untrusted) is logged and
// left out: every pod is then taken as having no record, so what the
// runtime runs counts as admitted and the rest goes to the plugins.
func (m *Manager) restoreAdmitted(logger klog.Logger) {
	pods, err := m.store.load()
	if err != nil {
		logger.Error(err, "Pod admission cannot use its checkpoint of admitted containers; it is rewritten from what the kubelet runs. Until then, every container a pod's record would cover counts as admitted only if the runtime has started it as it is in the pod's spec, and ephemeral containers that have not started go to the plugins", "path", m.store.path)
		return
	}
	keepUntil := m.clock.Now().Add(restoredStateGrace)
	for uid, images := range pods {
		// lastSeen in the future keeps the state from garbage collection
		// for restoredStateGrace (see collectGarbage).
		m.pods[uid] = &podState{admitted: true, containers: images, lastSeen: keepUntil}
	}
	logger.V(2).Info("Pod admission restored what the plugins admitted of pods' containers", "path", m.store.path, "pods", len(pods))
}

// admittedChanged notes that a pod's record changed; m.mu is held.
func (m *Manager) admittedChanged() { m.admittedGen++ }

// saveAdmitted writes every admitted pod's record, if one changed since
// the last write; m.mu is not held. Writers that come while one writes
// are served by the next write, which has their changes. A failure is
// logged: the runtime still tells what it started.
func (m *Manager) saveAdmitted(ctx context.Context) {
	if m.store == nil {
		return
	}
	m.mu.Lock()
	gen := m.admittedGen
	m.mu.Unlock()

	m.store.mu.Lock()
	defer m.store.mu.Unlock()
	if m.store.savedGen >= gen {
		return
	}
	m.mu.Lock()
	gen = m.admittedGen
	pods := make(map[types.UID]admittedImages, len(m.pods))
	for uid, st := range m.pods {
		if st.admitted && st.containers != nil {
			pods[uid] = st.containers
		}
	}
	m.mu.Unlock()
	// The records are never modified, only replaced: no copy needed.
	if err := m.store.save(pods); err != nil {
		klog.FromContext(ctx).Error(err, "Pod admission cannot write its checkpoint of admitted containers", "path", m.store.path)
		return
	}
	m.store.savedGen = gen
}
