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
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"

	podadmissionv1alpha1 "github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/transport"
)

func TestNewManagerOptionErrors(t *testing.T) {
	dir := configDir(t)
	factory := newFakeFactory()
	for name, tc := range map[string]struct {
		opts    Options
		wantErr string
	}{
		"no config path": {
			opts:    Options{NodeName: "node-1", newPlugin: factory.New},
			wantErr: "pod admission: the plugin configuration path is required",
		},
		"no node name": {
			opts:    Options{ConfigPath: dir, newPlugin: factory.New},
			wantErr: "pod admission: the node name is required",
		},
	} {
		t.Run(name, func(t *testing.T) {
			m, err := NewManager(tc.opts)
			require.EqualError(t, err, tc.wantErr)
			assert.Nil(t, m)
		})
	}
}

func TestNewManagerConfigErrors(t *testing.T) {
	dir := configDir(t)
	file := filepath.Join(dir, "10-pss.yaml")

	writeConfig(t, file, pluginsYAML(execPlugin("pss", "timeout: 0s")))
	_, err := NewManager(Options{ConfigPath: dir, BinDir: "/bin-dir", NodeName: "node-1", newPlugin: newFakeFactory().New})
	require.EqualError(t, err, file+`: plugins[0].timeout: Invalid value: "0s": must be greater than 0`)

	writeConfig(t, file, pluginsYAML(execPlugin("pss")))
	_, err = NewManager(Options{ConfigPath: dir, NodeName: "node-1", newPlugin: newFakeFactory().New})
	require.EqualError(t, err, file+`: plugins[0].type: Invalid value: "Exec": Exec plugins need the kubelet flag --pod-admission-plugin-bin-dir`)

	factory := newFakeFactory()
	factory.fail["pss"] = errors.New("cannot create")
	_, err = NewManager(Options{ConfigPath: dir, BinDir: "/bin-dir", NodeName: "node-1", newPlugin: factory.New})
	require.EqualError(t, err, file+`: plugins[0]: plugin "pss": cannot create`)
}

func TestGRPCPluginsNeedNoBinDir(t *testing.T) {
	dir := configDir(t)
	writeConfig(t, filepath.Join(dir, "10-gate.yaml"), pluginsYAML("- name: gate\n  type: GRPC\n  endpoint: /run/gate.sock\n"))
	_, err := NewManager(Options{ConfigPath: dir, NodeName: "node-1", newPlugin: newFakeFactory().New})
	require.NoError(t, err)
}

func TestAdmissionIsSticky(t *testing.T) {
	tm := newTestManager(t, pluginsYAML(execPlugin("a")), nil)
	pod := testPod("web")
	admitted, _, _, terminal := tm.admit(pod)
	require.True(t, admitted)
	require.False(t, terminal)

	plugin := tm.factory.plugin(t, "a")
	plugin.setDecide(deny("Changed", "changed its mind"))
	tm.reevaluate(context.Background(), "a", transport.Reevaluation{All: true})
	for range 3 {
		tm.clock.Step(time.Hour)
		admitted, _, _, _ = tm.admit(pod)
		assert.True(t, admitted)
		assert.False(t, tm.due(pod))
	}
	assert.Equal(t, 1, plugin.calls(), "an admitted pod is never evaluated again")
}

func TestSoftRejectionHoldsThePodUntilItsBackoffExpires(t *testing.T) {
	tm := newTestManager(t, pluginsYAML(execPlugin("quota")), func(f *fakeFactory, _ *Options) {
		f.set("quota", deny("OverQuota", "team-a has no GPU quota left"))
	})
	pod := testPod("web")
	plugin := tm.factory.plugin(t, "quota")

	assert.False(t, tm.due(pod), "an unknown pod is synced by the kubelet anyway")
	admitted, reason, message, terminal := tm.admit(pod)
	assert.False(t, admitted)
	assert.False(t, terminal)
	assert.Equal(t, "OverQuota", reason)
	assert.Equal(t, `Pod admission plugin "quota" rejected the pod: team-a has no GPU quota left`, message)
	assert.False(t, tm.due(pod))

	// Syncs before the back-off expired get the same answer without a call.
	tm.clock.Step(initialBackoff - time.Millisecond)
	for range 3 {
		admitted, reason, message, terminal = tm.admit(pod)
		assert.False(t, admitted)
		assert.False(t, terminal)
		assert.Equal(t, "OverQuota", reason)
		assert.Equal(t, `Pod admission plugin "quota" rejected the pod: team-a has no GPU quota left`, message)
	}
	assert.Equal(t, 1, plugin.calls())
	assert.False(t, tm.due(pod))

	tm.clock.Step(time.Millisecond)
	assert.True(t, tm.due(pod))
	plugin.setDecide(allow())
	admitted, _, _, _ = tm.admit(pod)
	assert.True(t, admitted)
	assert.Equal(t, 2, plugin.calls())
	assert.False(t, tm.due(pod))
	assert.Equal(t, int32(2), plugin.lastRequest().Attempt)
}

func TestBackoffGrowsToItsCap(t *testing.T) {
	tm := newTestManager(t, pluginsYAML(execPlugin("a")), func(f *fakeFactory, _ *Options) {
		f.set("a", deny("No", ""))
	})
	pod := testPod("web")
	admitted, _, _, _ := tm.admit(pod)
	require.False(t, admitted)

	want := []time.Duration{1, 2, 4, 8, 16, 32, 64, 120, 120, 120}
	for i, delay := range want {
		delay *= time.Second
		tm.clock.Step(delay - time.Millisecond)
		require.False(t, tm.due(pod), "rejection %d: due before %s", i+1, delay)
		tm.clock.Step(time.Millisecond)
		require.True(t, tm.due(pod), "rejection %d: not due after %s", i+1, delay)
		admitted, _, _, _ = tm.admit(pod)
		require.False(t, admitted)
	}
	plugin := tm.factory.plugin(t, "a")
	assert.Equal(t, len(want)+1, plugin.calls())
	assert.Equal(t, int32(len(want)+1), plugin.lastRequest().Attempt)
}

func TestBackoffValues(t *testing.T) {
	assert.Equal(t, time.Second, backoff(0), "first rejection")
	assert.Equal(t, 2*time.Second, backoff(time.Second))
	assert.Equal(t, 4*time.Second, backoff(3*time.Second))
	assert.Equal(t, 64*time.Second, backoff(63*time.Second))
	assert.Equal(t, 2*time.Minute, backoff(127*time.Second))
	assert.Equal(t, 2*time.Minute, backoff(1000*time.Hour), "capped")
	assert.Equal(t, time.Second, backoff(-time.Hour), "a hold that began after now (clock skew) starts over")
}

func TestRetryAfterSecondsReplacesTheBackoff(t *testing.T) {
	for name, tc := range map[string]struct {
		seconds int32
		wait    time.Duration
	}{
		"longer than the back-off":  {seconds: 30, wait: 30 * time.Second},
		"0 means the back-off":      {seconds: 0, wait: 2 * time.Minute},
		"capped at ten minutes":     {seconds: 86400, wait: 10 * time.Minute},
		"shorter than the back-off": {seconds: 1, wait: time.Second},
	} {
		t.Run(name, func(t *testing.T) {
			tm := newTestManager(t, pluginsYAML(execPlugin("a")), func(f *fakeFactory, _ *Options) {
				f.set("a", denyRetryAfter("Later", tc.seconds))
			})
			pod := testPod("web")
			// Build up back-off first: the hint applies anyway.
			for range 4 {
				tm.clock.Step(time.Hour)
				admitted, _, _, _ := tm.admit(pod)
				require.False(t, admitted)
			}
			tm.clock.Step(tc.wait - time.Millisecond)
			assert.False(t, tm.due(pod))
			tm.clock.Step(time.Millisecond)
			assert.True(t, tm.due(pod))
		})
	}
}

func TestHardRejectionIsTerminal(t *testing.T) {
	tm := newTestManager(t, pluginsYAML(execPlugin("a", "rejectionMode: Hard")), func(f *fakeFactory, _ *Options) {
		f.set("a", deny("Forbidden", "privileged pods are not allowed on this node"))
	})
	pod := testPod("web")
	admitted, reason, message, terminal := tm.admit(pod)
	assert.False(t, admitted)
	assert.True(t, terminal)
	assert.Equal(t, "Forbidden", reason)
	assert.Equal(t, `Pod admission plugin "a" rejected the pod: privileged pods are not allowed on this node`, message)
	assert.Equal(t, 0.0, blockedPodsValue(t))
	assert.False(t, tm.due(pod))

	// The kubelet may sync the pod again before it fails it.
	tm.clock.Step(time.Hour)
	admitted, reason, _, terminal = tm.admit(pod)
	assert.False(t, admitted)
	assert.True(t, terminal)
	assert.Equal(t, "Forbidden", reason)
	assert.Equal(t, 1, tm.factory.plugin(t, "a").calls())
}

func TestHardPluginFailureUnderFailPolicyIsTerminal(t *testing.T) {
	tm := newTestManager(t, pluginsYAML(execPlugin("a", "rejectionMode: Hard")), func(f *fakeFactory, _ *Options) {
		f.set("a", fail("crashed"))
	})
	admitted, reason, message, terminal := tm.admit(testPod("web"))
	assert.False(t, admitted)
	assert.True(t, terminal)
	assert.Equal(t, "PodAdmissionPluginFailed", reason)
	assert.Equal(t, `Pod admission plugin "a" failed (failurePolicy Fail): crashed`, message)
}

func TestSoftFailureBlocksAndIgnoredFailureAdmitsWithAnEvent(t *testing.T) {
	tm := newTestManager(t, pluginsYAML(execPlugin("strict"), execPlugin("lenient", "failurePolicy: Ignore")), func(f *fakeFactory, _ *Options) {
		f.set("strict", fail("socket gone"))
		f.set("lenient", fail("timed out"))
	})
	pod := testPod("web")
	admitted, reason, message, terminal := tm.admit(pod)
	assert.False(t, admitted)
	assert.False(t, terminal)
	assert.Equal(t, "PodAdmissionPluginFailed", reason)
	assert.Equal(t, `Pod admission plugin "strict" failed (failurePolicy Fail): socket gone`, message)

	tm.factory.plugin(t, "strict").setDecide(allow())
	tm.clock.Step(initialBackoff)
	admitted, _, _, _ = tm.admit(pod)
	assert.True(t, admitted)
	require.Len(t, tm.recorder.Events, 1)
	assert.Equal(t, `Warning PodAdmissionPluginFailureIgnored Pod admission plugin "lenient" failed and its failurePolicy is Ignore, so it did not decide: timed out`, <-tm.recorder.Events)
}

func TestEscalationAfterMaxBlockedDuration(t *testing.T) {
	tm := newTestManager(t, pluginsYAML(execPlugin("a", "maxBlockedDuration: 10s")), func(f *fakeFactory, _ *Options) {
		f.set("a", deny("NoCapacity", "no device free"))
	})
	pod := testPod("web")
	// Rejections at 0s, 1s, 3s, 7s; the next back-off (8s) would end at 15s,
	// past the deadline, so the pod is due at 10s exactly.
	for _, step := range []time.Duration{0, 1, 2, 4} {
		tm.clock.Step(step * time.Second)
		require.True(t, step == 0 || tm.due(pod))
		admitted, _, _, terminal := tm.admit(pod)
		require.False(t, admitted)
		require.False(t, terminal)
	}
	tm.clock.Step(3*time.Second - time.Millisecond)
	assert.False(t, tm.due(pod))
	tm.clock.Step(time.Millisecond)
	assert.True(t, tm.due(pod))
	assert.Equal(t, 1.0, blockedPodsValue(t))

	admitted, reason, message, terminal := tm.admit(pod)
	assert.False(t, admitted)
	assert.True(t, terminal)
	assert.Equal(t, "NoCapacity", reason)
	assert.Equal(t, `Pod admission plugin "a" rejected the pod: no device free (blocked for 10s, longer than the plugin's maxBlockedDuration of 10s)`, message)
	assert.Equal(t, 0.0, blockedPodsValue(t))
	assert.False(t, tm.due(pod))
}

func TestEscalationCountsFromTheFirstRejection(t *testing.T) {
	tm := newTestManager(t, pluginsYAML(execPlugin("patient"), execPlugin("strict", "maxBlockedDuration: 30s")), func(f *fakeFactory, _ *Options) {
		f.set("patient", deny("Waiting", ""))
	})
	pod := testPod("web")
	admitted, _, _, _ := tm.admit(pod)
	require.False(t, admitted)

	tm.clock.Step(time.Minute)
	tm.factory.plugin(t, "patient").setDecide(allow())
	tm.factory.plugin(t, "strict").setDecide(deny("Strict", ""))
	admitted, _, message, terminal := tm.admit(pod)
	assert.False(t, admitted)
	assert.True(t, terminal, "the pod has been held for a minute, longer than strict's 30s")
	assert.Equal(t, `Pod admission plugin "strict" rejected the pod (blocked for 1m0s, longer than the plugin's maxBlockedDuration of 30s)`, message)
}

func TestPushedReevaluation(t *testing.T) {
	tm := newTestManager(t, pluginsYAML(execPlugin("gate")), func(f *fakeFactory, _ *Options) {
		f.set("gate", deny("NotReady", "network policy not programmed yet"))
	})
	tm.Start(t.Context())
	plugin := tm.factory.plugin(t, "gate")
	waiting, other, admittedPod := testPod("waiting"), testPod("other"), testPod("admitted")

	plugin.setDecide(allow())
	admitted, _, _, _ := tm.admit(admittedPod)
	require.True(t, admitted)
	plugin.setDecide(deny("NotReady", "network policy not programmed yet"))
	for range 5 { // a long back-off
		tm.clock.Step(time.Hour)
		admitted, _, _, _ = tm.admit(waiting)
		require.False(t, admitted)
	}
	admitted, _, _, _ = tm.admit(other)
	require.False(t, admitted)
	require.False(t, tm.due(waiting))

	plugin.reevaluations <- transport.Reevaluation{PodUIDs: []types.UID{waiting.UID, "unknown-uid", admittedPod.UID}}
	require.Eventually(t, func() bool { return tm.due(waiting) }, 5*time.Second, time.Millisecond)
	assert.False(t, tm.due(other))
	assert.False(t, tm.due(admittedPod))

	plugin.setDecide(allow())
	calls := plugin.calls()
	admitted, _, _, _ = tm.admit(waiting)
	assert.True(t, admitted, "the back-off is skipped after a pushed re-evaluation")
	assert.Equal(t, calls+1, plugin.calls())

	plugin.reevaluations <- transport.Reevaluation{All: true}
	require.Eventually(t, func() bool { return tm.due(other) }, 5*time.Second, time.Millisecond)
	assert.False(t, tm.due(admittedPod))
}

func TestReevaluationPushedDuringAnEvaluationIsKept(t *testing.T) {
	tm := newTestManager(t, pluginsYAML(execPlugin("gate")), nil)
	tm.Start(t.Context())
	plugin := tm.factory.plugin(t, "gate")
	pod := testPod("web")
	pushed := make(chan struct{})
	plugin.setDecide(func(_ context.Context, req *podadmissionv1alpha1.PodAdmissionRequest) (*podadmissionv1alpha1.PodAdmissionResponse, error) {
		// The plugin changes its mind while its rejection is on its way.
		plugin.reevaluations <- transport.Reevaluation{PodUIDs: []types.UID{pod.UID}}
		assert.Eventually(t, func() bool {
			tm.mu.Lock()
			defer tm.mu.Unlock()
			return len(tm.pods[pod.UID].push.racing) == 1
		}, 5*time.Second, time.Millisecond, "the push is kept for when the evaluation ends")
		close(pushed)
		return &podadmissionv1alpha1.PodAdmissionResponse{UID: req.UID, Reason: "NotYet"}, nil
	})
	admitted, _, _, _ := tm.admit(pod)
	<-pushed
	require.False(t, admitted)
	assert.True(t, tm.due(pod), "due at once, not after its back-off")
}

func TestConfigurationChangeReevaluatesBlockedPods(t *testing.T) {
	tm := newTestManager(t, pluginsYAML(execPlugin("a")), func(f *fakeFactory, _ *Options) {
		f.set("a", deny("No", ""))
	})
	pod := testPod("web")
	admitted, _, _, _ := tm.admit(pod)
	require.False(t, admitted)
	tm.runCtx = t.Context()

	writeConfig(t, tm.file, pluginsYAML(execPlugin("b")))
	tm.reloadSettled(t.Context())
	assert.True(t, tm.due(pod))
	admitted, _, _, _ = tm.admit(pod)
	assert.True(t, admitted)
	assert.Eventually(t, tm.factory.plugin(t, "a").isClosed, 5*time.Second, time.Millisecond, "the removed plugin is closed")
}

func TestGarbageCollection(t *testing.T) {
	var active []*v1.Pod
	tm := newTestManager(t, pluginsYAML(execPlugin("a", "match: {namespaces: [blocked]}")), func(f *fakeFactory, opts *Options) {
		f.set("a", deny("No", ""))
		opts.ActivePods = func() []*v1.Pod { return active }
	})
	kept, gone, goneAdmitted := testPod("kept"), testPod("gone"), testPod("gone-admitted")
	kept.Namespace, gone.Namespace = "blocked", "blocked"
	for _, pod := range []*v1.Pod{kept, gone, goneAdmitted} {
		tm.admit(pod)
	}
	require.Equal(t, 2.0, blockedPodsValue(t))
	active = []*v1.Pod{kept}

	tm.Start(t.Context())
	require.Eventually(t, func() bool {
		// Step until the collector's ticker exists and fires.
		tm.clock.Step(gcInterval)
		tm.mu.Lock()
		defer tm.mu.Unlock()
		return len(tm.pods) == 1
	}, 5*time.Second, 10*time.Millisecond)
	tm.mu.Lock()
	assert.Contains(t, tm.pods, kept.UID)
	tm.mu.Unlock()
	assert.Equal(t, 1.0, blockedPodsValue(t))
	assert.False(t, tm.due(gone))
}

func TestGarbageCollectionKeepsPodsSeenAfterTheListing(t *testing.T) {
	tm := newTestManager(t, pluginsYAML(execPlugin("a")), func(_ *fakeFactory, opts *Options) {
		opts.ActivePods = func() []*v1.Pod { return nil }
	})
	pod := testPod("new")
	tm.admit(pod) // seen now, at the time of the listing below
	tm.collectGarbage(context.Background())
	tm.mu.Lock()
	assert.Contains(t, tm.pods, pod.UID)
	tm.mu.Unlock()

	tm.clock.Step(time.Second)
	tm.collectGarbage(context.Background())
	tm.mu.Lock()
	assert.NotContains(t, tm.pods, pod.UID)
	tm.mu.Unlock()
}

func TestRequestsDescribeTheNode(t *testing.T) {
	node := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "node-1", Labels: map[string]string{"zone": "a"}},
		Status:     v1.NodeStatus{NodeInfo: v1.NodeSystemInfo{KubeletVersion: "v1.37.2"}},
	}
	var getNodeErr error
	tm := newTestManager(t, pluginsYAML(execPlugin("a")), func(_ *fakeFactory, opts *Options) {
		opts.GetNode = func() (*v1.Node, error) { return node, getNodeErr }
	})
	tm.admit(testPod("first"))
	assert.Equal(t, podadmissionv1alpha1.NodeInfo{Name: "node-1", Labels: map[string]string{"zone": "a"}, NodeInfo: v1.NodeSystemInfo{KubeletVersion: "v1.37.2"}},
		tm.factory.plugin(t, "a").lastRequest().Node)

	getNodeErr = errors.New("node not synced yet")
	tm.admit(testPod("second"))
	assert.Equal(t, podadmissionv1alpha1.NodeInfo{Name: "node-1"}, tm.factory.plugin(t, "a").lastRequest().Node)
}

func TestStopClosesPluginsAndHoldsNewPods(t *testing.T) {
	tm := newTestManager(t, pluginsYAML(execPlugin("a")), nil)
	ctx, cancel := context.WithCancel(context.Background())
	tm.Start(ctx)
	cancel()
	plugin := tm.factory.plugin(t, "a")
	require.Eventually(t, plugin.isClosed, 5*time.Second, time.Millisecond)

	admitted, reason, message, terminal := tm.admit(testPod("late"))
	assert.False(t, admitted)
	assert.False(t, terminal)
	assert.Equal(t, "PodAdmissionUnavailable", reason)
	assert.Equal(t, "The pod admission manager is stopped; the pod is evaluated when the kubelet runs it again", message)
	assert.Equal(t, 0, plugin.calls())
}

func TestInterruptedEvaluationDecidesNothing(t *testing.T) {
	tm := newTestManager(t, pluginsYAML(execPlugin("a", "failurePolicy: Ignore")), nil)
	plugin := tm.factory.plugin(t, "a")
	ctx, cancel := context.WithCancel(context.Background())
	plugin.setDecide(func(ctx context.Context, _ *podadmissionv1alpha1.PodAdmissionRequest) (*podadmissionv1alpha1.PodAdmissionResponse, error) {
		cancel() // the kubelet gives up on the sync while the plugin works
		<-ctx.Done()
		return nil, ctx.Err()
	})
	pod := testPod("web")
	result, terminal := tm.SoftAdmit(ctx, &lifecycle.PodAdmitAttributes{Pod: pod})
	assert.False(t, result.Admit, "a cancelled call under failurePolicy Ignore admits nothing")
	assert.False(t, terminal)
	assert.Equal(t, "PodAdmissionInterrupted", result.Reason)
	assert.Equal(t, "Pod admission was interrupted (context canceled); the pod is evaluated again at its next sync", result.Message)
	assert.Empty(t, tm.recorder.Events)
	assert.True(t, tm.due(pod), "evaluated again at the next sync")

	plugin.setDecide(allow())
	admitted, _, _, _ := tm.admit(pod)
	assert.True(t, admitted)
	assert.Equal(t, 2, plugin.calls())
}
