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
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// PodCondition is true when a pod has reached the state a test waits for.
type PodCondition func(*corev1.Pod) bool

// PodRunning is true for a Running pod whose containers are all running.
func PodRunning(p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodRunning || len(p.Status.ContainerStatuses) == 0 {
		return false
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.State.Running == nil {
			return false
		}
	}
	return true
}

// WaitForPod watches the pod until cond holds and returns the pod as it
// was then, and the time the watch event arrived (timing is measured on
// watch events, not polls). The error carries the last status seen.
func WaitForPod(ctx context.Context, client kubernetes.Interface, namespace, name string, timeout time.Duration, cond PodCondition) (*corev1.Pod, time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	selector := fields.OneTermEqualSelector("metadata.name", name).String()
	lw := &cache.ListWatch{
		ListFunc: func(opts metav1.ListOptions) (runtime.Object, error) {
			opts.FieldSelector = selector
			return client.CoreV1().Pods(namespace).List(ctx, opts)
		},
		WatchFunc: func(opts metav1.ListOptions) (watch.Interface, error) {
			opts.FieldSelector = selector
			return client.CoreV1().Pods(namespace).Watch(ctx, opts)
		},
	}
	var last *corev1.Pod
	var at time.Time
	_, err := watchtools.UntilWithSync(ctx, lw, &corev1.Pod{}, nil, func(ev watch.Event) (bool, error) {
		p, ok := ev.Object.(*corev1.Pod)
		if !ok || ev.Type == watch.Deleted {
			return false, nil
		}
		last = p
		at = time.Now()
		return cond(p), nil
	})
	if err != nil {
		return last, at, fmt.Errorf("pod %s/%s: %w; last seen: %s", namespace, name, err, DescribePod(last))
	}
	return last, at, nil
}

// DescribePod is a one-line summary of a pod's status for messages.
func DescribePod(p *corev1.Pod) string {
	if p == nil {
		return "never"
	}
	s := fmt.Sprintf("phase=%s reason=%q message=%q", p.Status.Phase, p.Status.Reason, p.Status.Message)
	for _, cs := range p.Status.ContainerStatuses {
		switch {
		case cs.State.Waiting != nil:
			s += fmt.Sprintf(" %s=Waiting(%s)", cs.Name, cs.State.Waiting.Reason)
		case cs.State.Running != nil:
			s += fmt.Sprintf(" %s=Running", cs.Name)
		case cs.State.Terminated != nil:
			s += fmt.Sprintf(" %s=Terminated(%s)", cs.Name, cs.State.Terminated.Reason)
		}
	}
	return s
}
