package grpcplugin

import (
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/types"

	pb "github.com/podadmission/podadmission/pkg/apis/podadmission/grpc/v1alpha1"
)

// maxUIDsPerReevaluation caps one message; more pending pods are sent as
// "all", which the kubelet handles as cheaply.
const maxUIDsPerReevaluation = 1000

// watcher holds the re-evaluations not yet sent to one kubelet. Pushes merge
// into it and never block, so a slow kubelet cannot stall the plugin.
type watcher struct {
	mu     sync.Mutex
	uids   map[types.UID]struct{}
	all    bool
	notify chan struct{}
}

func newWatcher() *watcher {
	return &watcher{uids: map[types.UID]struct{}{}, notify: make(chan struct{}, 1)}
}

func (w *watcher) add(uids []types.UID) {
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
