//go:build e2e_node

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

package framework

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// PodCounter watches a namespace and remembers every pod that ever
// existed in it, however briefly: the measure of controller thrash is the
// number of pods a controller created, not how many exist at the end. It
// also notes when each pod was first seen Running, on the watch event, and
// keeps every state it saw, in order (History).
//
// It watches through an informer: on a busy machine the apiserver closes
// watches whose client falls behind, and the informer resumes them from
// the last resource version without losing an event.
type PodCounter struct {
	mu      sync.Mutex
	pods    map[types.UID]*corev1.Pod
	order   []types.UID
	running map[types.UID]time.Time
	history []PodObservation

	cancel context.CancelFunc
	done   chan struct{}
	err    error
}

// CountPods starts watching namespace and returns once the counter has
// seen the namespace's current pods.
func CountPods(ctx context.Context, client kubernetes.Interface, namespace string) (*PodCounter, error) {
	ctx, cancel := context.WithCancel(ctx)
	c := &PodCounter{
		pods:    map[types.UID]*corev1.Pod{},
		running: map[types.UID]time.Time{},
		cancel:  cancel,
		done:    make(chan struct{}),
	}
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return client.CoreV1().Pods(namespace).List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return client.CoreV1().Pods(namespace).Watch(ctx, opts)
		},
	}
	informer := cache.NewSharedIndexInformer(lw, &corev1.Pod{}, 0, cache.Indexers{})
	if err := informer.SetWatchErrorHandlerWithContext(func(ctx context.Context, r *cache.Reflector, err error) {
		// A watch the apiserver closed resumes from where it was; any
		// other failure means a re-list, which can miss a short-lived pod.
		if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			c.mu.Lock()
			c.err = fmt.Errorf("pod watch in %s: %w", namespace, err)
			c.mu.Unlock()
		}
		cache.DefaultWatchErrorHandler(ctx, r, err)
	}); err != nil {
		cancel()
		return nil, err
	}
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.observe,
		UpdateFunc: func(_, obj any) { c.observe(obj) },
		DeleteFunc: c.observe,
	}); err != nil {
		cancel()
		return nil, err
	}
	go func() {
		defer close(c.done)
		informer.RunWithContext(ctx)
	}()
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		c.Stop()
		return nil, fmt.Errorf("pod watch in %s did not sync: %w", namespace, ctx.Err())
	}
	return c, nil
}

func (c *PodCounter) observe(obj any) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, seen := c.pods[p.UID]; !seen {
		c.order = append(c.order, p.UID)
	}
	now := time.Now()
	copied := p.DeepCopy()
	c.pods[p.UID] = copied
	c.history = append(c.history, PodObservation{Time: now, Pod: copied})
	if _, ok := c.running[p.UID]; !ok && PodRunning(p) {
		c.running[p.UID] = now
	}
}

// PodObservation is one state of a pod the watch showed, and when.
type PodObservation struct {
	Time time.Time
	Pod  *corev1.Pod
}

// History is every state of every pod the watch showed, oldest first.
// The pods are shared: do not modify them.
func (c *PodCounter) History() []PodObservation {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]PodObservation(nil), c.history...)
}

// FirstSeen is when the watch first showed the pod with uid in a state
// cond is true of.
func (c *PodCounter) FirstSeen(uid types.UID, cond PodCondition) (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, o := range c.history {
		if o.Pod.UID == uid && cond(o.Pod) {
			return o.Time, true
		}
	}
	return time.Time{}, false
}

// RunningAt is when the watch first showed the pod with uid Running.
func (c *PodCounter) RunningAt(uid types.UID) (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.running[uid]
	return t, ok
}

// Pod is the last state the watch showed of the pod with uid.
func (c *PodCounter) Pod(uid types.UID) (*corev1.Pod, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.pods[uid]
	return p, ok
}

// Stop ends the watch; the counts stay readable.
func (c *PodCounter) Stop() {
	c.cancel()
	<-c.done
}

// Err is the last watch failure that may have made the counter miss a
// pod (a re-list after an error); a watch the apiserver merely closed and
// the counter resumed is not one.
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
