package podadmission

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/kubernetes/pkg/kubelet/lifecycle"
)

// The kubelet calls ShouldSync for every pod about every second, and
// SoftAdmit at every sync of a pod that has not started; both must be cheap
// when no plugin is called.

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

func BenchmarkShouldSync(b *testing.B) {
	tm, attrs := benchmarkManager(b, 110)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		tm.ShouldSync(attrs[i%len(attrs)].Pod)
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
