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
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"
	"k8s.io/utils/clock"

	podadmissionv1alpha1 "github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/transport"
)

// These benchmarks measure what a push costs on the real clock, with a pod
// worker per held pod that evaluates the pod again whenever the Manager
// wakes it (as the kubelet's pod workers do). make bench-push runs them
// with -benchtime 1x: each iteration is one whole scenario.

// podWorkers evaluates a pod each time the Manager wakes it, one
// evaluation at a time per pod, and records when each pod was admitted.
type podWorkers struct {
	tm       *testManager
	mu       sync.Mutex
	wakeups  map[types.UID]chan struct{}
	admitted map[types.UID]time.Time
}

func (w *podWorkers) wake(uid types.UID, _ bool) {
	w.mu.Lock()
	c := w.wakeups[uid]
	w.mu.Unlock()
	if c == nil {
		return
	}
	select {
	case c <- struct{}{}:
	default: // a sync is pending already
	}
}

// run has pod evaluated now and at every wake until ctx ends.
func (w *podWorkers) run(ctx context.Context, pod *v1.Pod) {
	c := make(chan struct{}, 1)
	w.mu.Lock()
	w.wakeups[pod.UID] = c
	w.mu.Unlock()
	c <- struct{}{}
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-c:
			}
			if result, _ := w.tm.SoftAdmit(ctx, &lifecycle.PodAdmitAttributes{Pod: pod}); result.Admit {
				w.mu.Lock()
				w.admitted[pod.UID] = time.Now()
				w.mu.Unlock()
				return
			}
		}
	}()
}

func (w *podWorkers) admittedAt(uid types.UID) (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	t, ok := w.admitted[uid]
	return t, ok
}

// benchContext is the context of one scenario, whose logger discards: the
// Manager's log lines would break the benchmark's output lines.
func benchContext(b *testing.B) (context.Context, context.CancelFunc) {
	return context.WithCancel(klog.NewContext(b.Context(), logr.Discard()))
}

// pushBench is a started Manager on the real clock whose chain is "other"
// (an Exec plugin in the kubelet, here in process: it answers after
// latency, once set) and then "pusher" (a GRPC plugin in the kubelet),
// each holding the pods labelled for it.
func pushBench(b *testing.B, ctx context.Context, latency *atomic.Int64) (*testManager, *podWorkers) {
	workers := &podWorkers{wakeups: map[types.UID]chan struct{}{}, admitted: map[types.UID]time.Time{}}
	tm := newTestManager(b, pluginsYAML(execPlugin("other"), execPlugin("pusher")), func(f *fakeFactory, opts *Options) {
		other := holdLabelled("other")
		f.set("other", func(ctx context.Context, req *podadmissionv1alpha1.PodAdmissionRequest) (*podadmissionv1alpha1.PodAdmissionResponse, error) {
			time.Sleep(time.Duration(latency.Load()))
			return other(ctx, req)
		})
		f.set("pusher", holdLabelled("pusher"))
		opts.Clock = clock.RealClock{}
		opts.WakePod = workers.wake
	})
	workers.tm = tm
	tm.Start(ctx)
	return tm, workers
}

// holdForBench starts the workers of n pods labelled for holder and waits
// until each is held.
func holdForBench(b *testing.B, ctx context.Context, tm *testManager, workers *podWorkers, holder string, n int) []*v1.Pod {
	pods := make([]*v1.Pod, 0, n)
	for i := range n {
		pod := testPod(fmt.Sprintf("%s-%d", holder, i))
		pod.Labels = map[string]string{holderLabel: holder}
		workers.run(ctx, pod)
		pods = append(pods, pod)
	}
	deadline := time.Now().Add(time.Minute)
	for _, pod := range pods {
		for {
			tm.mu.Lock()
			st := tm.pods[pod.UID]
			held := st != nil && st.blocked
			tm.mu.Unlock()
			if held {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("%s not held after a minute", pod.Name)
			}
			time.Sleep(time.Millisecond)
		}
	}
	return pods
}

// BenchmarkPushFlood: "other" holds held pods, and "pusher", which holds
// none, pushes All in a loop (or, for the reference, does not push): the
// calls per second the pushes drive into "other", and how long the first
// evaluation of a new pod takes meanwhile.
func BenchmarkPushFlood(b *testing.B) {
	for _, latency := range []time.Duration{0, 500 * time.Millisecond} {
		for _, held := range []int{50, 110} {
			for _, pushing := range []bool{false, true} {
				name := fmt.Sprintf("other=%s/held=%d/pusher=none", latency, held)
				if pushing {
					name = fmt.Sprintf("other=%s/held=%d/pusher=all-in-a-loop", latency, held)
				}
				b.Run(name, func(b *testing.B) {
					for b.Loop() {
						pushFlood(b, latency, held, pushing)
					}
				})
			}
		}
	}
}

func pushFlood(b *testing.B, latency time.Duration, held int, pushing bool) {
	const window = 3 * time.Second
	ctx, cancel := benchContext(b)
	defer cancel()
	var otherLatency atomic.Int64
	tm, workers := pushBench(b, ctx, &otherLatency)
	holdForBench(b, ctx, tm, workers, "other", held)
	otherLatency.Store(int64(latency)) // once held: the hold itself is quick
	other, pusher := tm.factory.plugin(b, "other"), tm.factory.plugin(b, "pusher")

	start, callsBefore := time.Now(), other.calls()
	if pushing {
		go func() {
			for ctx.Err() == nil {
				select {
				case pusher.reevaluations <- transport.Reevaluation{All: true}:
				case <-ctx.Done():
				}
			}
		}()
	}
	time.Sleep(window / 6)
	newPod := testPod("new")
	evaluationStart := time.Now()
	result, _ := tm.SoftAdmit(ctx, &lifecycle.PodAdmitAttributes{Pod: newPod})
	firstEvaluation := time.Since(evaluationStart)
	if !result.Admit {
		b.Logf("the new pod was not admitted: %s: %s", result.Reason, result.Message)
	}
	time.Sleep(time.Until(start.Add(window)))
	elapsed, calls := time.Since(start), other.calls()-callsBefore-1
	cancel()
	b.ReportMetric(float64(calls)/elapsed.Seconds(), "other-calls/s")
	b.ReportMetric(firstEvaluation.Seconds(), "new-pod-first-evaluation-s")
}

// BenchmarkPushReleasesOwnPods: "pusher" holds held pods, lets them go and
// pushes All once: how long from the push until each is admitted. With
// afterConnect, a push of All came just before (what the transport sends
// when it connects), so the release is the pods' second push in a row.
func BenchmarkPushReleasesOwnPods(b *testing.B) {
	for _, held := range []int{50, 110} {
		for _, afterConnect := range []bool{false, true} {
			name := fmt.Sprintf("held=%d/first-push", held)
			if afterConnect {
				name = fmt.Sprintf("held=%d/push-after-connect", held)
			}
			b.Run(name, func(b *testing.B) {
				for b.Loop() {
					pushRelease(b, held, afterConnect)
				}
			})
		}
	}
}

func pushRelease(b *testing.B, held int, afterConnect bool) {
	ctx, cancel := benchContext(b)
	defer cancel()
	tm, workers := pushBench(b, ctx, new(atomic.Int64))
	pods := holdForBench(b, ctx, tm, workers, "pusher", held)
	pusher := tm.factory.plugin(b, "pusher")
	if afterConnect {
		calls := pusher.calls()
		pusher.reevaluations <- transport.Reevaluation{All: true}
		for pusher.calls() < calls+held {
			time.Sleep(time.Millisecond)
		}
	}
	pusher.setDecide(allow())
	pushed := time.Now()
	pusher.reevaluations <- transport.Reevaluation{All: true}
	latencies := make([]time.Duration, 0, held)
	deadline := pushed.Add(time.Minute)
	for _, pod := range pods {
		for {
			if at, ok := workers.admittedAt(pod.UID); ok {
				latencies = append(latencies, at.Sub(pushed))
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("%s not admitted a minute after the push", pod.Name)
			}
			time.Sleep(100 * time.Microsecond)
		}
	}
	slices.Sort(latencies)
	b.ReportMetric(float64(latencies[len(latencies)/2].Microseconds())/1e3, "release-p50-ms")
	b.ReportMetric(float64(latencies[len(latencies)-1].Microseconds())/1e3, "release-max-ms")
}
