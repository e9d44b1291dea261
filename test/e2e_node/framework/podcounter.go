//go:build e2e_node

package framework

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// PodCounter watches a namespace and remembers every pod that ever
// existed in it, however briefly: the measure of controller thrash is the
// number of pods a controller created, not how many exist at the end. It
// also notes when each pod was first seen Running, on the watch event.
type PodCounter struct {
	mu      sync.Mutex
	pods    map[types.UID]*corev1.Pod
	order   []types.UID
	running map[types.UID]time.Time
	cancel  context.CancelFunc
	done    chan struct{}
	err     error
}

// CountPods starts watching namespace (from its current, empty state).
func CountPods(ctx context.Context, client kubernetes.Interface, namespace string) (*PodCounter, error) {
	list, err := client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	w, err := client.CoreV1().Pods(namespace).Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		cancel()
		return nil, err
	}
	c := &PodCounter{pods: map[types.UID]*corev1.Pod{}, running: map[types.UID]time.Time{}, cancel: cancel, done: make(chan struct{})}
	for i := range list.Items {
		c.observe(&list.Items[i])
	}
	go func() {
		defer close(c.done)
		defer w.Stop()
		for ev := range w.ResultChan() {
			switch ev.Type {
			case watch.Added, watch.Modified, watch.Deleted:
				if p, ok := ev.Object.(*corev1.Pod); ok {
					c.observe(p)
				}
			case watch.Error:
				// Stop cancels the watch, which can end in an error event.
				if ctx.Err() == nil {
					c.mu.Lock()
					c.err = fmt.Errorf("pod watch in %s failed: %v", namespace, ev.Object)
					c.mu.Unlock()
				}
				return
			}
		}
		if ctx.Err() == nil {
			c.mu.Lock()
			c.err = fmt.Errorf("pod watch in %s ended early", namespace)
			c.mu.Unlock()
		}
	}()
	return c, nil
}

func (c *PodCounter) observe(p *corev1.Pod) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, seen := c.pods[p.UID]; !seen {
		c.order = append(c.order, p.UID)
	}
	c.pods[p.UID] = p.DeepCopy()
	if _, ok := c.running[p.UID]; !ok && PodRunning(p) {
		c.running[p.UID] = time.Now()
	}
}

// RunningAt is when the watch first showed the pod with uid Running.
func (c *PodCounter) RunningAt(uid types.UID) (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.running[uid]
	return t, ok
}

// Stop ends the watch; the counts stay readable.
func (c *PodCounter) Stop() {
	c.cancel()
	<-c.done
}

// Err is why the watch ended early, if it did: counts after that are not
// complete.
func (c *PodCounter) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Created is the number of distinct pods seen.
func (c *PodCounter) Created() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.order)
}

// Pods is the last state seen of every pod, in creation order.
func (c *PodCounter) Pods() []*corev1.Pod {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*corev1.Pod, 0, len(c.order))
	for _, uid := range c.order {
		out = append(out, c.pods[uid])
	}
	return out
}
