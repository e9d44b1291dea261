package podadmission

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"
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
	unknown := Reevaluation{PodUIDs: []types.UID{"unknown-1", "unknown-2", "unknown-3"}}
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
		tm.reevaluate(ctx, "a", Reevaluation{All: true})
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
