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
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-base/metrics/testutil"

	podadmissionv1alpha1 "github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/transport"
)

// holderLabel names the plugin that holds a pod of these tests.
const holderLabel = "push-test-holder"

// holdLabelled rejects the pods labelled for plugin, for ten minutes at a
// time (only pushes and reloads wake them while a test runs), and admits
// the rest.
func holdLabelled(plugin string) decideFunc {
	return func(_ context.Context, req *podadmissionv1alpha1.PodAdmissionRequest) (*podadmissionv1alpha1.PodAdmissionResponse, error) {
		if req.Pod.Labels[holderLabel] == plugin {
			return &podadmissionv1alpha1.PodAdmissionResponse{UID: req.UID, Reason: "HeldBy" + plugin, RetryAfterSeconds: new(int32(600))}, nil
		}
		return &podadmissionv1alpha1.PodAdmissionResponse{UID: req.UID, Allowed: true}, nil
	}
}

// pushTestManager is a started manager whose chain is "exec" and then
// "gate" (a GRPC plugin in the kubelet; in process here), each holding the
// pods labelled for it.
func pushTestManager(t *testing.T) (*testManager, *wakeRecorder) {
	return newWakingManager(t, pluginsYAML(execPlugin("exec"), execPlugin("gate")), func(f *fakeFactory, _ *Options) {
		f.set("exec", holdLabelled("exec"))
		f.set("gate", holdLabelled("gate"))
	})
}

// holdPods has n new pods labelled for holder evaluated, and held.
func holdPods(t *testing.T, tm *testManager, holder string, n int) []*v1.Pod {
	t.Helper()
	pods := make([]*v1.Pod, 0, n)
	for i := range n {
		pod := testPod(fmt.Sprintf("%s-%d", holder, i))
		pod.Labels = map[string]string{holderLabel: holder}
		admitted, reason, _, _ := tm.admit(pod)
		require.False(t, admitted)
		require.Equal(t, "HeldBy"+holder, reason)
		pods = append(pods, pod)
	}
	return pods
}

func uidsOf(pods []*v1.Pod) []types.UID {
	uids := make([]types.UID, 0, len(pods))
	for _, pod := range pods {
		uids = append(uids, pod.UID)
	}
	return uids
}

func ignoredReevaluations(t *testing.T, plugin string) float64 {
	t.Helper()
	v, err := testutil.GetCounterMetricValue(reevaluationsIgnored.WithLabelValues(plugin))
	require.NoError(t, err)
	return v
}

// Case 5 of issue 18: a plugin pushing All, or the UIDs of pods another
// plugin holds, had every held pod evaluated again, driving the other
// plugin's calls (723 calls/s with 50 held pods).
func TestPushReachesOnlyThePodsThePluginHolds(t *testing.T) {
	tm, wakes := pushTestManager(t)
	execHeld := holdPods(t, tm, "exec", 3)
	gateHeld := holdPods(t, tm, "gate", 2)
	exec := tm.factory.plugin(t, "exec")
	execCalls := exec.calls()
	ignoredBefore := ignoredReevaluations(t, "gate")

	ctx := context.Background()
	for range 100 {
		tm.reevaluate(ctx, "gate", transport.Reevaluation{All: true})
		tm.reevaluate(ctx, "gate", transport.Reevaluation{PodUIDs: append(uidsOf(execHeld), "unknown-uid")})
	}
	for _, pod := range gateHeld {
		require.Eventually(t, func() bool { return wakes.count(pod.UID) == 1 }, 5*time.Second, time.Millisecond, "%s: the gate's pods are woken", pod.Name)
		assert.True(t, tm.due(pod))
	}
	for _, pod := range execHeld {
		assert.False(t, tm.due(pod), "%s is held by exec: the gate's push does not reach it", pod.Name)
		assert.Zero(t, wakes.count(pod.UID))
		admitted, _, _, _ := tm.admit(pod)
		assert.False(t, admitted)
	}
	assert.Equal(t, execCalls, exec.calls(), "the gate's pushes cost the exec plugin no call")
	assert.Equal(t, 100.0*4, ignoredReevaluations(t, "gate")-ignoredBefore, "every pod named that the gate does not hold is counted")

	// The exec plugin's own push reaches its pods, and only those.
	tm.reevaluate(ctx, "exec", transport.Reevaluation{All: true})
	for _, pod := range execHeld {
		assert.True(t, tm.due(pod))
	}
}

// Pods no plugin decided yet, admitted pods and pods rejected for good
// are nobody's: a push naming them is ignored and counted.
func TestPushNamingPodsNoPluginHoldsIsIgnored(t *testing.T) {
	tm, wakes := pushTestManager(t)
	admittedPod := testPod("admitted")
	admitted, _, _, _ := tm.admit(admittedPod)
	require.True(t, admitted)
	restarted := heldPod("held-before-a-restart", testStart.Add(-time.Minute))
	tm.mu.Lock()
	tm.pods[restarted.UID] = newPodState(restarted) // seen, not evaluated yet
	tm.mu.Unlock()
	ignoredBefore := ignoredReevaluations(t, "gate")

	tm.reevaluate(context.Background(), "gate", transport.Reevaluation{PodUIDs: []types.UID{admittedPod.UID, restarted.UID}})
	tm.reevaluate(context.Background(), "gate", transport.Reevaluation{All: true})
	assert.Equal(t, 2.0, ignoredReevaluations(t, "gate")-ignoredBefore, "All names no pod: only the named ones count")
	time.Sleep(50 * time.Millisecond)
	assert.Zero(t, wakes.count(admittedPod.UID))
	assert.Zero(t, wakes.count(restarted.UID))
}

// The first push of a pod the plugin holds wakes it at once, and so does
// the next one (after the Reevaluation{All} a GRPC plugin's transport sends
// when it connects, the plugin's own push is not delayed); beyond that the
// pod is evaluated once per pushInterval, however fast the plugin pushes.
func TestPushesAreRateLimitedPerPod(t *testing.T) {
	tm, wakes := pushTestManager(t)
	pod := holdPods(t, tm, "gate", 1)[0]
	gate := tm.factory.plugin(t, "gate")
	ctx := context.Background()
	pushAndEvaluate := func() bool {
		tm.reevaluate(ctx, "gate", transport.Reevaluation{All: true})
		if !tm.due(pod) {
			return false
		}
		admitted, _, _, _ := tm.admit(pod)
		require.False(t, admitted)
		return true
	}

	for i := range pushBurst {
		require.True(t, pushAndEvaluate(), "push %d of a burst is evaluated at once", i)
	}
	calls := gate.calls()
	for range 1000 {
		require.False(t, pushAndEvaluate(), "over the rate: not evaluated before its turn")
	}
	assert.Equal(t, calls, gate.calls())
	time.Sleep(50 * time.Millisecond) // the burst's wakes (coalesced or not) are delivered
	woken := wakes.count(pod.UID)
	tm.clock.Step(pushInterval - time.Millisecond)
	assert.False(t, tm.due(pod))
	tm.clock.Step(time.Millisecond)
	require.Eventually(t, func() bool { return wakes.count(pod.UID) == woken+1 }, 5*time.Second, time.Millisecond, "woken when its turn comes")
	assert.True(t, tm.due(pod), "the deferred push is kept")

	// A plugin pushing in a loop for ten seconds has its pod evaluated
	// once per interval.
	evaluations := 0
	for range 10 {
		for range 100 {
			if pushAndEvaluate() {
				evaluations++
			}
		}
		tm.clock.Step(pushInterval)
	}
	assert.InDelta(t, 10, evaluations, 1)

	// A pod left alone for a while gets its burst back.
	tm.clock.Step(pushBurst * pushInterval)
	for i := range pushBurst {
		require.True(t, pushAndEvaluate(), "push %d after a pause", i)
	}
}

// The limit is per plugin: a pod another plugin pushed in a loop while it
// held it is evaluated at once at the first push of the plugin that holds
// it now.
func TestPushLimitIsPerPlugin(t *testing.T) {
	tm, _ := pushTestManager(t)
	pod := holdPods(t, tm, "gate", 1)[0]
	ctx := context.Background()
	for range 5 {
		tm.reevaluate(ctx, "gate", transport.Reevaluation{All: true})
		if tm.due(pod) {
			tm.admit(pod)
		}
	}
	pod.Labels[holderLabel] = "exec" // the gate admits it now, exec holds it
	tm.reevaluate(ctx, "gate", transport.Reevaluation{All: true})
	tm.clock.Step(pushBurst * pushInterval) // the gate's deferred turn
	require.True(t, tm.due(pod))
	_, reason, _, _ := tm.admit(pod)
	require.Equal(t, "HeldByexec", reason)

	tm.reevaluate(ctx, "exec", transport.Reevaluation{PodUIDs: []types.UID{pod.UID}})
	assert.True(t, tm.due(pod), "exec's first push is not limited by the gate's")
}

// A push that names a pod while another plugin's rejection of it is being
// computed is not the pushing plugin's: it does not make the pod due.
func TestPushDuringAnotherPluginsRejectionIsIgnored(t *testing.T) {
	tm, _ := pushTestManager(t)
	pod := testPod("new")
	pod.Labels = map[string]string{holderLabel: "exec"}
	ignoredBefore := ignoredReevaluations(t, "gate")
	tm.factory.plugin(t, "exec").setDecide(func(ctx context.Context, req *podadmissionv1alpha1.PodAdmissionRequest) (*podadmissionv1alpha1.PodAdmissionResponse, error) {
		tm.reevaluate(ctx, "gate", transport.Reevaluation{PodUIDs: []types.UID{pod.UID}})
		return holdLabelled("exec")(ctx, req)
	})
	admitted, _, _, _ := tm.admit(pod)
	require.False(t, admitted)
	assert.False(t, tm.due(pod), "the gate does not hold it")
	assert.Equal(t, 1.0, ignoredReevaluations(t, "gate")-ignoredBefore, "counted once the evaluation said who holds it")
}

// A pod held by the pushing plugin's failure (it timed out, or its socket
// was gone) is the plugin's: the Reevaluation{All} its transport sends when
// it connects again has it evaluated at once, and no other plugin's pushes
// do.
func TestPushOfAPluginThatFailedReachesThePodsItsFailureHolds(t *testing.T) {
	tm, _ := pushTestManager(t)
	gate := tm.factory.plugin(t, "gate")
	gate.setDecide(fail("connection refused"))
	pod := testPod("web")
	admitted, reason, _, _ := tm.admit(pod)
	require.False(t, admitted)
	require.Equal(t, ReasonPluginFailed, reason)

	tm.reevaluate(context.Background(), "exec", transport.Reevaluation{All: true})
	assert.False(t, tm.due(pod), "exec does not hold it")
	tm.reevaluate(context.Background(), "gate", transport.Reevaluation{All: true})
	assert.True(t, tm.due(pod))
	gate.setDecide(allow())
	admitted, _, _, _ = tm.admit(pod)
	assert.True(t, admitted)
}

// A push of the plugin that holds an update of an admitted pod re-evaluates
// that update, and nothing else: not the pod as a whole, not the pods other
// plugins hold. Another plugin's push leaves the update alone.
func TestPushReachesTheUpdateThePluginHolds(t *testing.T) {
	tm, _ := pushTestManager(t)
	execHeld := holdPods(t, tm, "exec", 2)
	pod := appPod("web")
	admitted, _, _, _ := tm.admit(pod)
	require.True(t, admitted)
	gate := tm.factory.plugin(t, "gate")
	gate.setDecide(func(ctx context.Context, req *podadmissionv1alpha1.PodAdmissionRequest) (*podadmissionv1alpha1.PodAdmissionResponse, error) {
		if req.Operation == podadmissionv1alpha1.OperationUpdate {
			return &podadmissionv1alpha1.PodAdmissionResponse{UID: req.UID, Reason: "NotSigned", RetryAfterSeconds: new(int32(600))}, nil
		}
		return holdLabelled("gate")(ctx, req)
	})
	debug := withEphemeral(pod, "debug", "busybox")
	_, held := tm.AdmitContainers(context.Background(), debug, runtimeStatus(pod, "app", "sidecar"))
	require.Len(t, held, 1)
	require.False(t, tm.dueUpdate(debug))

	tm.reevaluate(context.Background(), "exec", transport.Reevaluation{PodUIDs: []types.UID{debug.UID}})
	assert.False(t, tm.dueUpdate(debug), "exec does not hold the update")
	tm.reevaluate(context.Background(), "gate", transport.Reevaluation{All: true})
	assert.True(t, tm.dueUpdate(debug), "the gate holds it")
	for _, p := range execHeld {
		assert.False(t, tm.due(p))
	}
	gate.setDecide(allow())
	calls := gate.calls()
	_, held = tm.AdmitContainers(context.Background(), debug, runtimeStatus(pod, "app", "sidecar"))
	assert.Empty(t, held)
	assert.Equal(t, calls+1, gate.calls(), "the update alone is evaluated")
}

// A reload wakes every held pod at once, whatever held it and however
// recently pushes woke it; a pod held by a plugin the reload renamed is the
// new name's once it is evaluated, and a push of the old name reaches
// nothing.
func TestReloadWakesEveryHeldPodAndRenamedPluginsTakeTheirPodsOver(t *testing.T) {
	tm, _ := pushTestManager(t)
	execHeld := holdPods(t, tm, "exec", 2)
	gateHeld := holdPods(t, tm, "gate", 2)
	ctx := context.Background()
	for range pushBurst + 1 {
		tm.reevaluate(ctx, "gate", transport.Reevaluation{All: true})
		for _, pod := range gateHeld {
			if tm.due(pod) {
				tm.admit(pod)
			}
		}
	}

	tm.factory.set("gate-2", holdLabelled("gate"))
	writeConfig(t, tm.file, pluginsYAML(execPlugin("exec"), execPlugin("gate-2")))
	require.Eventually(t, func() bool {
		tm.clock.Step(time.Second) // past the reload's settle window
		return assert.ObjectsAreEqual([]string{"exec", "gate-2"}, tm.pluginNames())
	}, 10*time.Second, 10*time.Millisecond)
	for _, pod := range append(execHeld, gateHeld...) {
		assert.Eventually(t, func() bool { return tm.due(pod) }, 5*time.Second, time.Millisecond, "%s is woken by the reload", pod.Name)
	}
	for _, pod := range append(execHeld, gateHeld...) {
		admitted, _, _, _ := tm.admit(pod)
		assert.False(t, admitted)
	}
	tm.reevaluate(ctx, "gate", transport.Reevaluation{All: true})
	for _, pod := range gateHeld {
		assert.False(t, tm.due(pod), "%s: gate is gone", pod.Name)
	}
	tm.reevaluate(ctx, "gate-2", transport.Reevaluation{All: true})
	for _, pod := range gateHeld {
		assert.True(t, tm.due(pod), "%s is gate-2's now", pod.Name)
	}
	for _, pod := range execHeld {
		assert.False(t, tm.due(pod))
	}
}
