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

package grpcplugin

import (
	"slices"
	"sync"

	pb "github.com/podadmission/podadmission/pkg/apis/podadmission/grpc/v1alpha1"
	"github.com/podadmission/podadmission/pkg/plugin/corev1"
)

// maxUIDsPerReevaluation caps one message; more pending pods are sent as
// "all", which the kubelet handles as cheaply.
const maxUIDsPerReevaluation = 1000

// watcher holds the re-evaluations not yet sent to one kubelet. Pushes merge
// into it and never block, so a slow kubelet cannot stall the plugin.
type watcher struct {
	mu     sync.Mutex
	uids   map[corev1.UID]struct{}
	all    bool
	notify chan struct{}
}

func newWatcher() *watcher {
	return &watcher{uids: map[corev1.UID]struct{}{}, notify: make(chan struct{}, 1)}
}

func (w *watcher) add(uids []corev1.UID) {
	if len(uids) == 0 {
		return
	}
	w.mu.Lock()
	for _, uid := range uids {
		w.uids[uid] = struct{}{}
	}
	w.mu.Unlock()
	w.wake()
}

func (w *watcher) addAll() {
	w.mu.Lock()
	w.all = true
	w.mu.Unlock()
	w.wake()
}

func (w *watcher) wake() {
	select {
	case w.notify <- struct{}{}:
	default:
	}
}

// take returns what is pending as one message and clears it.
func (w *watcher) take() *pb.Reevaluation {
	w.mu.Lock()
	defer w.mu.Unlock()
	msg := &pb.Reevaluation{All: w.all || len(w.uids) > maxUIDsPerReevaluation}
	if !msg.All {
		for uid := range w.uids {
			msg.PodUids = append(msg.PodUids, string(uid))
		}
		slices.Sort(msg.PodUids)
	}
	w.all = false
	clear(w.uids)
	return msg
}
