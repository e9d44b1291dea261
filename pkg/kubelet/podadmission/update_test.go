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
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-base/metrics/testutil"
	kubecontainer "k8s.io/kubernetes/pkg/kubelet/container"

	podadmissionv1alpha1 "github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/transport"
)

// updateTest is a Manager with one plugin, "policy", and a pod it admitted
// as a whole, running as it was admitted.
type updateTest struct {
	*testManager
	plugin   *fakePlugin
	admitted *v1.Pod
}

func newUpdateTest(t *testing.T, setup func(*fakeFactory, *Options)) *updateTest {
	t.Helper()
	tm := newTestManager(t, pluginsYAML(execPlugin("policy")), setup)
	tt := &updateTest{testManager: tm, plugin: tm.factory.plugin(t, "policy"), admitted: appPod("web")}
	admitted, _, _, _ := tm.admit(tt.admitted)
	require.True(t, admitted)
	require.Equal(t, 1, tt.plugin.calls())
	return tt
}

// sync is what the kubelet does at every sync of the admitted pod: it
// hands AdmitContainers' pod to the runtime.
func (tt *updateTest) sync(pod *v1.Pod, status *kubecontainer.PodStatus) (*v1.Pod, []HeldContainer) {
	return tt.AdmitContainers(context.Background(), pod, status)
}

func (tt *updateTest) running() *kubecontainer.PodStatus {
	return runtimeStatus(tt.admitted, "app", "sidecar")
}

func (tt *updateTest) events() []string {
	var events []string
	for len(tt.recorder.Events) > 0 {
		events = append(events, <-tt.recorder.Events)
	}
	return events
}

func heldContainersValue(t *testing.T) float64 {
	t.Helper()
	v, err := testutil.GetGaugeMetricValue(heldContainers)
	require.NoError(t, err)
	return v
}

func TestAdmittedPodAsItIsNeedsNoPlugin(t *testing.T) {
	tt := newUpdateTest(t, nil)
	for range 3 {
		runnable, held := tt.sync(tt.admitted, tt.running())
		assert.Same(t, tt.admitted, runnable)
		assert.Empty(t, held)
	}
	assert.Equal(t, 1, tt.plugin.calls(), "an admitted pod that did not change is not evaluated again")
}

func TestEphemeralContainerAddedAfterAdmissionIsSentAsAnUpdate(t *testing.T) {
	tt := newUpdateTest(t, nil)
	debug := withEphemeral(tt.admitted, "debug", "busybox")

	runnable, held := tt.sync(debug, tt.running())
	assert.Same(t, debug, runnable, "admitted: the kubelet starts it")
	assert.Empty(t, held)
	require.Equal(t, 2, tt.plugin.calls())
	req := tt.plugin.lastRequest()
	assert.Equal(t, podadmissionv1alpha1.OperationUpdate, req.Operation)
	assert.Same(t, debug, req.Pod, "the pod as it would run")
	require.NotNil(t, req.OldPod)
	assert.Empty(t, req.OldPod.Spec.EphemeralContainers, "the old pod is the pod as it was admitted")
	assert.Equal(t, tt.admitted.Spec.Containers, req.OldPod.Spec.Containers)
	assert.Equal(t, int32(1), req.Attempt, "an update counts its own attempts")

	// Sticky: never evaluated again, whatever the plugin says now.
	tt.plugin.setDecide(deny("Changed", "changed its mind"))
	tt.reevaluate(context.Background(), "policy", transport.Reevaluation{All: true})
	for range 3 {
		tt.clock.Step(time.Hour)
		runnable, held = tt.sync(debug, tt.running())
		assert.Same(t, debug, runnable)
		assert.Empty(t, held)
	}
	assert.Equal(t, 2, tt.plugin.calls(), "an admitted update is sticky")
}

func TestRejectedEphemeralContainerIsHeld(t *testing.T) {
	tt := newUpdateTest(t, nil)
	tt.events()
	tt.plugin.setDecide(deny("PodSecurity", `violates PodSecurity "baseline:latest": privileged (container "debug" must not set securityContext.privileged=true)`))
	debug := withEphemeral(tt.admitted, "debug", "busybox")

	runnable, held := tt.sync(debug, tt.running())
	assert.Empty(t, runnable.Spec.EphemeralContainers, "the runtime never gets the held container")
	assert.Equal(t, tt.admitted.Spec.Containers, runnable.Spec.Containers, "the pod's containers are untouched")
	message := `Pod admission plugin "policy" rejected the pod: violates PodSecurity "baseline:latest": privileged (container "debug" must not set securityContext.privileged=true)`
	assert.Equal(t, []HeldContainer{{Name: "debug", Reason: "PodSecurity", Message: message}}, held)
	assert.Equal(t, []string{`Warning PodSecurity Not starting ephemeral container "debug": ` + message}, tt.events())
	assert.Equal(t, 1.0, heldContainersValue(t))
	assert.Equal(t, 0.0, blockedPodsValue(t), "the pod is not held: it runs")
	assert.Len(t, debug.Spec.EphemeralContainers, 1, "the pod is not modified")

	// Until its back-off expires, the same answer without a call and
	// without a new event.
	tt.clock.Step(initialBackoff - time.Millisecond)
	_, held = tt.sync(debug, tt.running())
	assert.Equal(t, "PodSecurity", held[0].Reason)
	assert.Equal(t, 2, tt.plugin.calls())
	tt.clock.Step(time.Millisecond)
	_, held = tt.sync(debug, tt.running())
	require.Len(t, held, 1)
	assert.Equal(t, 3, tt.plugin.calls())
	assert.Equal(t, int32(2), tt.plugin.lastRequest().Attempt)
	assert.Empty(t, tt.events(), "an unchanged decision records no event")

	tt.plugin.setDecide(allow())
	tt.clock.Step(time.Hour)
	runnable, held = tt.sync(debug, tt.running())
	assert.Same(t, debug, runnable)
	assert.Empty(t, held)
	assert.Equal(t, 0.0, heldContainersValue(t))
}

func TestReplacedImageKeepsTheRunningContainerAtItsAdmittedImage(t *testing.T) {
	tt := newUpdateTest(t, nil)
	tt.plugin.setDecide(deny("ImageNotAllowed", `image "registry.example/app:evil" is not allowed`))
	replaced := withImage(tt.admitted, "app", "registry.example/app:evil")
	running := tt.running()

	runnable, held := tt.sync(replaced, running)
	assert.Empty(t, held, "nothing is left out: the container runs")
	assert.Equal(t, "registry.example/app:1", runnable.Spec.Containers[0].Image)
	assert.Equal(t, running.FindContainerStatusByName("app").Hash, kubecontainer.HashContainer(&runnable.Spec.Containers[0]),
		"the runtime sees the spec of the container it runs: it does not stop it")
	assert.Equal(t, tt.admitted.Spec.Containers[1], runnable.Spec.Containers[1])
	req := tt.plugin.lastRequest()
	assert.Equal(t, "registry.example/app:evil", req.Pod.Spec.Containers[0].Image)
	assert.Equal(t, "registry.example/app:1", req.OldPod.Spec.Containers[0].Image)
	assert.Equal(t, []string{`Warning ImageNotAllowed Not starting container "app" with image "registry.example/app:evil" (it keeps "registry.example/app:1"): Pod admission plugin "policy" rejected the pod: image "registry.example/app:evil" is not allowed`}, tt.events())

	// The container exits while its update is held (restartPolicy Always,
	// OnFailure, or a pod sandbox recreated): the runtime would start it
	// again, at its admitted image.
	exited := tt.running()
	exited.ContainerStatuses[0].State = kubecontainer.ContainerStateExited
	runnable, _ = tt.sync(replaced, exited)
	assert.Equal(t, "registry.example/app:1", runnable.Spec.Containers[0].Image)
	runnable, _ = tt.sync(replaced, &kubecontainer.PodStatus{})
	assert.Equal(t, "registry.example/app:1", runnable.Spec.Containers[0].Image, "no container left (a new sandbox): the admitted image")
}

func TestReplacedInitContainerImageKeepsItsAdmittedImage(t *testing.T) {
	tt := newUpdateTest(t, nil)
	tt.plugin.setDecide(deny("ImageNotAllowed", "no"))
	replaced := withImage(tt.admitted, "setup", "registry.example/setup:evil")
	runnable, held := tt.sync(replaced, tt.running())
	assert.Empty(t, held)
	assert.Equal(t, "registry.example/setup:1", runnable.Spec.InitContainers[0].Image, "init containers run again with a new sandbox: at the admitted image")
}

func TestPluginOutageHoldsOnlyTheNewContainer(t *testing.T) {
	tt := newUpdateTest(t, nil)
	tt.plugin.setDecide(fail("connection refused"))
	pod := withEphemeral(tt.admitted, "debug", "busybox")
	runnable, held := tt.sync(pod, tt.running())
	require.Len(t, held, 1)
	assert.Equal(t, ReasonPluginFailed, held[0].Reason)
	assert.Equal(t, `Pod admission plugin "policy" failed (failurePolicy Fail): connection refused`, held[0].Message)
	assert.Equal(t, tt.admitted.Spec, runnable.Spec, "the pod runs as it was admitted")
}

// TestRejectionOfAnUpdateNeverFailsThePod: rejectionMode Hard and
// maxBlockedDuration end a pod's hold by failing it, which for an update
// would stop what runs: an update stays held instead.
func TestRejectionOfAnUpdateNeverFailsThePod(t *testing.T) {
	for name, plugin := range map[string]string{
		"rejectionMode Hard":    execPlugin("policy", "rejectionMode: Hard"),
		"maxBlockedDuration 1s": execPlugin("policy", "maxBlockedDuration: 1s"),
	} {
		t.Run(name, func(t *testing.T) {
			tm := newTestManager(t, pluginsYAML(plugin), nil)
			pod := appPod("web")
			admitted, _, _, _ := tm.admit(pod)
			require.True(t, admitted)
			tm.factory.plugin(t, "policy").setDecide(deny("No", "no"))
			debug := withEphemeral(pod, "debug", "busybox")
			for range 3 {
				runnable, held := tm.AdmitContainers(context.Background(), debug, runtimeStatus(pod, "app"))
				assert.Len(t, held, 1)
				assert.Empty(t, runnable.Spec.EphemeralContainers)
				tm.clock.Step(time.Hour)
			}
			assert.Equal(t, 4, tm.factory.plugin(t, "policy").calls(), "the held update is evaluated again")
			admitted, _, _, terminal := tm.admit(pod)
			assert.True(t, admitted, "the pod stays admitted")
			assert.False(t, terminal)
		})
	}
}

func TestPushAndReloadWakeAHeldUpdate(t *testing.T) {
	tt := newUpdateTest(t, nil)
	tt.plugin.setDecide(deny("NotYet", ""))
	debug := withEphemeral(tt.admitted, "debug", "busybox")
	_, held := tt.sync(debug, tt.running())
	require.Len(t, held, 1)
	assert.False(t, tt.dueUpdate(debug))

	tt.reevaluate(context.Background(), "policy", transport.Reevaluation{PodUIDs: []types.UID{debug.UID}})
	assert.True(t, tt.dueUpdate(debug), "a push asks for the held update's evaluation")
	tt.plugin.setDecide(allow())
	_, held = tt.sync(debug, tt.running())
	assert.Empty(t, held)

	// A new change, held, then a reload.
	tt.plugin.setDecide(deny("NotYet", ""))
	again := withEphemeral(debug, "debug-2", "busybox")
	_, held = tt.sync(again, tt.running())
	require.Len(t, held, 1)
	assert.Equal(t, "debug-2", held[0].Name, "only what is new is held")
	tt.reevaluateAll(context.Background())
	assert.True(t, tt.dueUpdate(again))
}

// dueUpdate says whether the pod's held update is due for evaluation.
func (tm *testManager) dueUpdate(pod *v1.Pod) bool {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	st := tm.pods[pod.UID]
	return st != nil && st.update != nil && st.dueForEvaluation(tm.clock.Now())
}

func TestAnotherChangeIsEvaluatedAtOnce(t *testing.T) {
	tt := newUpdateTest(t, nil)
	tt.plugin.setDecide(deny("NotYet", ""))
	_, held := tt.sync(withImage(tt.admitted, "app", "registry.example/app:2"), tt.running())
	assert.Empty(t, held)
	assert.Equal(t, 2, tt.plugin.calls())
	_, _ = tt.sync(withImage(tt.admitted, "app", "registry.example/app:3"), tt.running())
	assert.Equal(t, 3, tt.plugin.calls(), "a new image is a new update, evaluated without waiting for the back-off")
	assert.Equal(t, int32(1), tt.plugin.lastRequest().Attempt)

	// Back to the admitted image: nothing is held any more.
	runnable, _ := tt.sync(tt.admitted, tt.running())
	assert.Same(t, tt.admitted, runnable)
	assert.Equal(t, 0.0, heldContainersValue(t))
	assert.Equal(t, 3, tt.plugin.calls())
}

func TestInterruptedUpdateEvaluationIsHeld(t *testing.T) {
	tt := newUpdateTest(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	tt.plugin.setDecide(func(context.Context, *podadmissionv1alpha1.PodAdmissionRequest) (*podadmissionv1alpha1.PodAdmissionResponse, error) {
		cancel()
		return nil, context.Canceled
	})
	debug := withEphemeral(tt.admitted, "debug", "busybox")
	runnable, held := tt.AdmitContainers(ctx, debug, tt.running())
	require.Len(t, held, 1)
	assert.Equal(t, ReasonUpdatePending, held[0].Reason)
	assert.Empty(t, runnable.Spec.EphemeralContainers, "what no plugin decided is not started")
	assert.True(t, tt.dueUpdate(debug), "evaluated again at the next sync")
}

func TestStoppedManagerHoldsUpdates(t *testing.T) {
	tt := newUpdateTest(t, nil)
	tt.Stop()
	runnable, held := tt.sync(withEphemeral(tt.admitted, "debug", "busybox"), tt.running())
	require.Len(t, held, 1)
	assert.Equal(t, ReasonUpdatePending, held[0].Reason)
	assert.Empty(t, runnable.Spec.EphemeralContainers)
}

// TestPodThatRanBeforeThePluginsIsOnlyEvaluatedForWhatIsNew: a pod the
// kubelet admitted without this Manager (it ran before a restart, or
// before the plugins were configured) and that has no record.
func TestPodThatRanBeforeThePluginsIsOnlyEvaluatedForWhatIsNew(t *testing.T) {
	tm := newTestManager(t, pluginsYAML(execPlugin("policy")), func(f *fakeFactory, _ *Options) {
		f.set("policy", deny("No", "no"))
	})
	plugin := tm.factory.plugin(t, "policy")
	pod := withEphemeral(appPod("web"), "ran", "busybox")
	running := runtimeStatus(pod, "app", "sidecar", "ran")

	runnable, held := tm.AdmitContainers(context.Background(), pod, running)
	assert.Same(t, pod, runnable, "what runs counts as admitted")
	assert.Empty(t, held)
	assert.Zero(t, plugin.calls())

	debug := withEphemeral(pod, "debug", "busybox")
	runnable, held = tm.AdmitContainers(context.Background(), debug, running)
	require.Len(t, held, 1)
	assert.Equal(t, "debug", held[0].Name)
	assert.Equal(t, pod.Spec.EphemeralContainers, runnable.Spec.EphemeralContainers)
	assert.Equal(t, 1, plugin.calls())

	admitted, _, _, _ := tm.admit(pod)
	assert.True(t, admitted, "a pod the kubelet runs is never evaluated as a whole")
	assert.Equal(t, 1, plugin.calls())
}

// stateDir is a trusted directory for Options.StateDir.
func stateDir(t *testing.T) string {
	t.Helper()
	return filepath.Join(configDir(t), "state")
}

func TestAdmittedUpdateIsStickyAcrossARestart(t *testing.T) {
	state := stateDir(t)
	withState := func(_ *fakeFactory, opts *Options) { opts.StateDir = state }
	tt := newUpdateTest(t, withState)
	info, err := os.Stat(state)
	require.NoError(t, err)
	assert.Equal(t, os.ModeDir|0o700, info.Mode(), "created for root only")

	// An admitted update whose container has not started yet, and a held
	// one of a running container.
	debug := withEphemeral(tt.admitted, "debug", "busybox")
	_, held := tt.sync(debug, tt.running())
	require.Empty(t, held)
	tt.plugin.setDecide(deny("No", "no"))
	replaced := withImage(debug, "app", "registry.example/app:evil")
	runnable, _ := tt.sync(replaced, tt.running())
	require.Equal(t, "registry.example/app:1", runnable.Spec.Containers[0].Image)
	tt.Stop()

	// The kubelet restarts. Its new Manager knows the pod from the
	// checkpoint.
	restarted := newTestManager(t, pluginsYAML(execPlugin("policy")), func(f *fakeFactory, opts *Options) {
		withState(f, opts)
		f.set("policy", deny("No", "no"))
	})
	plugin := restarted.factory.plugin(t, "policy")
	runnable, held = restarted.AdmitContainers(context.Background(), replaced, tt.running())
	assert.Empty(t, held, "the admitted ephemeral container is still admitted")
	assert.Len(t, runnable.Spec.EphemeralContainers, 1)
	assert.Equal(t, "registry.example/app:1", runnable.Spec.Containers[0].Image, "the held update is still held")
	assert.Equal(t, 1, plugin.calls(), "the held update is evaluated again, the admitted one never")
	assert.Equal(t, podadmissionv1alpha1.OperationUpdate, plugin.lastRequest().Operation)

	admitted, _, _, _ := restarted.admit(tt.admitted)
	assert.True(t, admitted, "the checkpoint keeps a pod admitted even when its status does not say so")
	assert.Equal(t, 1, plugin.calls())
}

func TestForgottenPodsLeaveTheCheckpoint(t *testing.T) {
	state := stateDir(t)
	var active []*v1.Pod
	withState := func(_ *fakeFactory, opts *Options) {
		opts.StateDir = state
		opts.ActivePods = func() []*v1.Pod { return active }
	}
	tt := newUpdateTest(t, withState)
	tt.clock.Step(time.Second)
	tt.collectGarbage(context.Background())

	restarted := newTestManager(t, pluginsYAML(execPlugin("policy")), func(f *fakeFactory, opts *Options) {
		withState(f, opts)
		f.set("policy", deny("No", "no"))
	})
	pod := withEphemeral(tt.admitted, "debug", "busybox")
	_, held := restarted.AdmitContainers(context.Background(), pod, &kubecontainer.PodStatus{})
	assert.Len(t, held, 1, "no record is left of the pod: the ephemeral container that never ran is new")
}

func TestRestoredPodsOutliveAnIncompleteListOfActivePods(t *testing.T) {
	state := stateDir(t)
	tt := newUpdateTest(t, func(_ *fakeFactory, opts *Options) { opts.StateDir = state })
	tt.Stop()
	restarted := newTestManager(t, pluginsYAML(execPlugin("policy")), func(_ *fakeFactory, opts *Options) {
		opts.StateDir = state
		opts.ActivePods = func() []*v1.Pod { return nil } // the API server is not reachable yet
	})
	restarted.clock.Step(restoredStateGrace - time.Second)
	restarted.collectGarbage(context.Background())
	admitted, _, _, _ := restarted.admit(tt.admitted)
	assert.True(t, admitted)
	assert.Zero(t, restarted.factory.plugin(t, "policy").calls())
}
