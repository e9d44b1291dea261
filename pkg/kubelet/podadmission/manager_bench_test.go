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
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"
	"k8s.io/utils/clock"

	configv1alpha1 "github.com/podadmission/podadmission/pkg/apis/config/v1alpha1"
	podadmissionv1alpha1 "github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/transport"
	"github.com/podadmission/podadmission/test/transportbench/benchpod"
)

// The kubelet calls SoftAdmit at every sync of a pod it has not admitted
// yet; it must be cheap when no plugin is called. A plugin's push costs a
// map lookup per pod it names and a queue insertion per pod it wakes.

func benchmarkManager(b *testing.B, pods int) (*testManager, []*lifecycle.PodAdmitAttributes) {
	tm := newTestManager(b, pluginsYAML(execPlugin("a")), func(f *fakeFactory, _ *Options) {
		f.set("a", deny("No", ""))
	})
	attrs := make([]*lifecycle.PodAdmitAttributes, pods)
	for i := range attrs {
		attrs[i] = &lifecycle.PodAdmitAttributes{Pod: testPod(fmt.Sprintf("pod-%d", i))}
		tm.SoftAdmit(context.Background(), attrs[i])
	}
	return tm, attrs
}

func BenchmarkReevaluateUnknownPods(b *testing.B) {
	tm, _ := benchmarkManager(b, 110)
	ctx := context.Background()
	unknown := transport.Reevaluation{PodUIDs: []types.UID{"unknown-1", "unknown-2", "unknown-3"}}
	b.ResetTimer()
	for b.Loop() {
		tm.reevaluate(ctx, "a", unknown)
	}
}

func BenchmarkReevaluateAllFlood(b *testing.B) {
	tm, _ := benchmarkManager(b, 110)
	tm.Start(b.Context())
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		// Every pod is marked by the first push; the rest wake nothing.
		tm.reevaluate(ctx, "a", transport.Reevaluation{All: true})
	}
}

func BenchmarkSoftAdmitBlockedInBackoff(b *testing.B) {
	tm, attrs := benchmarkManager(b, 110)
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		tm.SoftAdmit(ctx, attrs[i%len(attrs)])
	}
}

func BenchmarkSoftAdmitInProcessPlugin(b *testing.B) {
	tm, _ := benchmarkManager(b, 0)
	tm.factory.plugin(b, "a").setDecide(allow())
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		// A new pod every time: admission is sticky.
		tm.SoftAdmit(ctx, &lifecycle.PodAdmitAttributes{Pod: testPod(fmt.Sprintf("new-%d", i))})
	}
}

// allowingPlugin is a plugin without a transport: it admits every pod.
type allowingPlugin struct{}

func (allowingPlugin) Admit(_ context.Context, req *podadmissionv1alpha1.PodAdmissionRequest) (*podadmissionv1alpha1.PodAdmissionResponse, error) {
	return &podadmissionv1alpha1.PodAdmissionResponse{UID: req.UID, Allowed: true}, nil
}

func (allowingPlugin) Close() error { return nil }

// BenchmarkAdmitManagerNoTransport is the manager's own work on the
// kubelet's path, with a plugin that costs nothing: SoftAdmit of a pod not
// seen before, through a chain of one plugin that admits it in process.
// make bench-transports runs it next to the transports' benchmarks in
// test/transportbench, whose figures include this work.
func BenchmarkAdmitManagerNoTransport(b *testing.B) {
	tm := newTestManager(b, pluginsYAML(execPlugin("in-process")), func(_ *fakeFactory, opts *Options) {
		opts.newPlugin = func(*configv1alpha1.PluginConfig, string) (transport.Plugin, error) { return allowingPlugin{}, nil }
		opts.GetNode = func() (*v1.Node, error) { return benchpod.BenchNode(), nil }
		opts.Clock = clock.RealClock{}
	})
	tm.Start(b.Context())
	ctx := context.Background()
	pod := benchpod.BenchPod()
	attrs := &lifecycle.PodAdmitAttributes{Pod: pod}
	latencies := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		result, _ := tm.SoftAdmit(ctx, attrs)
		latencies = append(latencies, time.Since(start))
		if !result.Admit {
			b.Fatalf("not admitted: %+v", result)
		}
		// Admission is sticky: forget the pod, as garbage collection does
		// once it is gone, so that the next evaluation is a new pod's.
		tm.mu.Lock()
		delete(tm.pods, pod.UID)
		tm.mu.Unlock()
	}
	b.StopTimer()
	slices.Sort(latencies)
	percentile := func(p float64) float64 {
		return float64(latencies[int(p*float64(len(latencies)-1))].Nanoseconds()) / 1e3
	}
	b.ReportMetric(percentile(0.50), "p50-µs")
	b.ReportMetric(percentile(0.99), "p99-µs")
	b.ReportMetric(percentile(1), "max-µs")
}
