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
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
)

// wakeCause says why a held pod is woken; the log line says it.
type wakeCause string

const (
	// wakePush: a GRPC plugin asked for the pod to be evaluated again.
	wakePush wakeCause = "push"
	// wakeBackoff: the pod's back-off (or its plugin's retryAfterSeconds,
	// or its maxBlockedDuration deadline) expired.
	wakeBackoff wakeCause = "backoff"
	// wakeReload: the configuration changed.
	wakeReload wakeCause = "reload"
	// wakeInterrupted: the pod's evaluation was cut short.
	wakeInterrupted wakeCause = "interrupted"
)

type wakeItem struct {
	uid   types.UID
	pod   klog.ObjectRef
	cause wakeCause
}

// podWaker asks the kubelet to sync held pods, so that their pod workers
// evaluate them again: at once for a push or a configuration change, after
// a delay for a back-off. It never waits for the kubelet's sync loop, and it
// never blocks its callers: a queue coalesces the requests (a pod woken
// twice for the same cause before its worker runs is woken once) and one
// goroutine hands them to the kubelet, so a flood of pushes costs a queue
// insertion each, never a pod sync each.
type podWaker struct {
	queue workqueue.TypedDelayingInterface[wakeItem]
	wake  func(uid types.UID, urgent bool)
	done  chan struct{}
}

// startPodWaker starts a waker that calls Options.WakePod for every pod it
// wakes, until ctx is done.
func (m *Manager) startPodWaker(ctx context.Context) *podWaker {
	w := &podWaker{
		queue: workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[wakeItem]{Clock: m.clock}),
		wake:  m.opts.WakePod,
		done:  make(chan struct{}),
	}
	logger := klog.FromContext(ctx)
	m.goRun(func() { w.run(logger) })
	m.goRun(func() {
		<-ctx.Done()
		w.stop()
	})
	return w
}

func (w *podWaker) run(logger klog.Logger) {
	defer close(w.done)
	for {
		item, shutdown := w.queue.Get()
		if shutdown {
			return
		}
		// A back-off expiring is routine; a push, a reload or an
		// interrupted evaluation is news.
		level := 2
		if item.cause == wakeBackoff {
			level = 4
		}
		logger.V(level).Info("Pod admission woke a held pod", "pod", item.pod, "podUID", item.uid, "cause", item.cause)
		w.wake(item.uid, item.cause != wakeBackoff)
		w.queue.Done(item)
	}
}

// wakeAfter wakes the pod after delay; at once when delay <= 0. A nil
// waker (the Manager has not started) wakes nothing: the kubelet syncs
// every pod when it starts.
func (w *podWaker) wakeAfter(uid types.UID, pod klog.ObjectRef, cause wakeCause, delay time.Duration) {
	if w == nil {
		return
	}
	w.queue.AddAfter(wakeItem{uid: uid, pod: pod, cause: cause}, delay)
}

// stop drops the pending wakes and waits for the waking goroutine to end.
func (w *podWaker) stop() {
	w.queue.ShutDown()
	<-w.done
}
