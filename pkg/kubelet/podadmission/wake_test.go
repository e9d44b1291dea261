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
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	podadmissionv1alpha1 "github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/transport"
)

// wakeRecorder is Options.WakePod for tests: it counts the wakes per pod,
// and of them the urgent ones.
type wakeRecorder struct {
	mu     sync.Mutex
	wakes  map[types.UID]int
	urgent map[types.UID]int
}

func newWakeRecorder() *wakeRecorder {
	return &wakeRecorder{wakes: map[types.UID]int{}, urgent: map[types.UID]int{}}
}

func (r *wakeRecorder) wake(uid types.UID, urgent bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.wakes[uid]++
	if urgent {
		r.urgent[uid]++
	}
}

func (r *wakeRecorder) urgentCount(uid types.UID) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.urgent[uid]
}

func (r *wakeRecorder) count(uid types.UID) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.wakes[uid]
}

// newWakingManager is a started test manager whose wakes are recorded.
func newWakingManager(t *testing.T, config string, setup func(*fakeFactory, *Options)) (*testManager, *wakeRecorder) {
	t.Helper()
	recorder := newWakeRecorder()
	tm := newTestManager(t, config, func(f *fakeFactory, opts *Options) {
		opts.WakePod = recorder.wake
		if setup != nil {
			setup(f, opts)
		}
	})
	tm.Start(t.Context())
	return tm, recorder
}

// heldPod is a pod whose PodAdmitted condition says the kubelet has held
// it since heldSince, as a restarted kubelet reads it from the API.
func heldPod(name string, heldSince time.Time) *v1.Pod {
	pod := testPod(name)
	pod.Status.Conditions = []v1.PodCondition{{
		Type:               podadmissionv1alpha1.PodAdmitted,
		Status:             v1.ConditionFalse,
		Reason:             "NoCapacity",
		LastTransitionTime: metav1.NewTime(heldSince),
	}}
	return pod
}

func TestPushWakesAHeldPodAtOnce(t *testing.T) {
	tm, wakes := newWakingManager(t, pluginsYAML(execPlugin("gate")), func(f *fakeFactory, _ *Options) {
		f.set("gate", deny("NotReady", ""))
	})
	plugin := tm.factory.plugin(t, "gate")
	pod := testPod("web")
	admitted, _, _, _ := tm.admit(pod)
	require.False(t, admitted)

	// The fake clock does not move: only the push can wake the pod.
	plugin.reevaluations <- transport.Reevaluation{PodUIDs: []types.UID{pod.UID}}
	require.Eventually(t, func() bool { return wakes.count(pod.UID) == 1 }, 5*time.Second, time.Millisecond)
	assert.Equal(t, 1, wakes.urgentCount(pod.UID), "a push's wake asks the kubelet for a fresh runtime status at once")
	assert.True(t, tm.due(pod))
}

func TestAFloodOfPushesWakesEachPodOnce(t *testing.T) {
	tm, wakes := newWakingManager(t, pluginsYAML(execPlugin("gate")), func(f *fakeFactory, _ *Options) {
		f.set("gate", deny("NotReady", ""))
	})
	held := []*v1.Pod{testPod("a"), testPod("b"), testPod("c")}
	for _, pod := range held {
		admitted, _, _, _ := tm.admit(pod)
		require.False(t, admitted)
	}
	unknown := make([]types.UID, 0, 1000)
	for i := range 1000 {
		unknown = append(unknown, types.UID(fmt.Sprintf("unknown-%d", i)))
	}
	ctx := context.Background()
	for range 2000 {
		tm.reevaluate(ctx, "gate", transport.Reevaluation{All: true})
		tm.reevaluate(ctx, "gate", transport.Reevaluation{PodUIDs: append(unknown, held[0].UID)})
	}
	for _, pod := range held {
		require.Eventually(t, func() bool { return wakes.count(pod.UID) >= 1 }, 5*time.Second, time.Millisecond)
	}
	// Give a stray second wake time to show up.
	time.Sleep(100 * time.Millisecond)
	for _, pod := range held {
		assert.Equal(t, 1, wakes.count(pod.UID), "%s: 4000 requests before its worker ran wake it once", pod.Name)
	}
	wakes.mu.Lock()
	assert.Len(t, wakes.wakes, len(held), "pods the Manager does not hold are never woken")
	wakes.mu.Unlock()

	// Once evaluated again, the next request wakes it again.
	admitted, _, _, _ := tm.admit(held[0])
	require.False(t, admitted)
	tm.reevaluate(ctx, "gate", transport.Reevaluation{PodUIDs: []types.UID{held[0].UID}})
	require.Eventually(t, func() bool { return wakes.count(held[0].UID) == 2 }, 5*time.Second, time.Millisecond)
}

func TestBackoffExpiryWakesThePod(t *testing.T) {
	tm, wakes := newWakingManager(t, pluginsYAML(execPlugin("a")), func(f *fakeFactory, _ *Options) {
		f.set("a", deny("No", ""))
	})
	pod := testPod("web")
	admitted, _, _, _ := tm.admit(pod) // held at 0s; due at 1s
	require.False(t, admitted)
	tm.clock.Step(time.Second - time.Millisecond)
	require.Never(t, func() bool { return wakes.count(pod.UID) > 0 }, 100*time.Millisecond, time.Millisecond, "not woken before its back-off")
	require.Eventually(t, func() bool {
		tm.clock.Step(time.Millisecond)
		return wakes.count(pod.UID) == 1
	}, 5*time.Second, 10*time.Millisecond, "woken when its back-off expires")
	assert.Zero(t, wakes.urgentCount(pod.UID), "a back-off's wake may wait for the kubelet's next relist")
	assert.True(t, tm.due(pod))
}

func TestConfigurationChangeWakesHeldPods(t *testing.T) {
	tm, wakes := newWakingManager(t, pluginsYAML(execPlugin("a")), func(f *fakeFactory, _ *Options) {
		f.set("a", denyRetryAfter("No", 600)) // no back-off wake while the test runs
	})
	pod := testPod("web")
	admitted, _, _, _ := tm.admit(pod)
	require.False(t, admitted)

	writeConfig(t, tm.file, pluginsYAML(execPlugin("b")))
	require.Eventually(t, func() bool {
		tm.clock.Step(time.Second) // past the reload's settle time
		return wakes.count(pod.UID) == 1
	}, 10*time.Second, 10*time.Millisecond)
	assert.Equal(t, 1, wakes.urgentCount(pod.UID), "a reload's wake asks the kubelet for a fresh runtime status at once")
	admitted, _, _, _ = tm.admit(pod)
	assert.True(t, admitted)
}

func TestHoldGoesOnFromThePodAdmittedCondition(t *testing.T) {
	tm, wakes := newWakingManager(t, pluginsYAML(execPlugin("a", "maxBlockedDuration: 60s")), func(f *fakeFactory, _ *Options) {
		f.set("a", deny("NoCapacity", "no device free"))
	})
	// The kubelet held the pod for 50 s before it restarted.
	pod := heldPod("web", testStart.Add(-50*time.Second))
	admitted, reason, _, terminal := tm.admit(pod)
	require.False(t, admitted)
	require.False(t, terminal, "held for 50s of 60s")
	assert.Equal(t, "NoCapacity", reason)

	// The back-off after 50 s of hold is 51 s, past the deadline: the pod
	// is due at the deadline, 10 s from now, not 60 s after the restart.
	tm.clock.Step(10*time.Second - time.Millisecond)
	assert.False(t, tm.due(pod))
	require.Eventually(t, func() bool {
		tm.clock.Step(time.Millisecond)
		return wakes.count(pod.UID) == 1
	}, 5*time.Second, 10*time.Millisecond)
	admitted, _, message, terminal := tm.admit(pod)
	assert.False(t, admitted)
	assert.True(t, terminal)
	assert.Equal(t, `Pod admission plugin "a" rejected the pod: no device free (blocked for 1m0s, longer than the plugin's maxBlockedDuration of 1m0s)`, message)
}

func TestBackoffGoesOnFromThePodAdmittedCondition(t *testing.T) {
	tm := newTestManager(t, pluginsYAML(execPlugin("a")), func(f *fakeFactory, _ *Options) {
		f.set("a", deny("No", ""))
	})
	// Held for 15 s before the restart: the restarted kubelet evaluates it
	// once at once, then after 16 s, as if it had never restarted.
	pod := heldPod("web", testStart.Add(-15*time.Second))
	admitted, _, _, _ := tm.admit(pod)
	require.False(t, admitted)
	tm.clock.Step(16*time.Second - time.Millisecond)
	assert.False(t, tm.due(pod))
	tm.clock.Step(time.Millisecond)
	assert.True(t, tm.due(pod))
}

func TestAdmittedConditionOfAnotherKindIsNotAHold(t *testing.T) {
	tm := newTestManager(t, pluginsYAML(execPlugin("a", "maxBlockedDuration: 60s")), func(f *fakeFactory, _ *Options) {
		f.set("a", deny("No", ""))
	})
	pod := heldPod("web", testStart.Add(-time.Hour))
	pod.Status.Conditions[0].Status = v1.ConditionUnknown
	_, _, _, terminal := tm.admit(pod)
	assert.False(t, terminal, "only PodAdmitted=False says the pod was held")
}
