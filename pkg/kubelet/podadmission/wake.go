package podadmission

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
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
	wake  func(types.UID)
	done  chan struct{}
}

// startPodWaker starts a waker that calls wake for every pod it wakes,
// until ctx is done.
func startPodWaker(ctx context.Context, clk clock.WithTicker, wake func(types.UID)) *podWaker {
	w := &podWaker{
		queue: workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[wakeItem]{Clock: clk}),
		wake:  wake,
		done:  make(chan struct{}),
	}
	go w.run(klog.FromContext(ctx))
	go func() {
		<-ctx.Done()
		w.stop()
	}()
	return w
}

func (w *podWaker) run(logger klog.Logger) {
	defer close(w.done)
	for {
		item, shutdown := w.queue.Get()
		if shutdown {
			return
		}
		logger.V(2).Info("Pod admission woke a held pod", "pod", item.pod, "podUID", item.uid, "cause", item.cause)
		w.wake(item.uid)
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
