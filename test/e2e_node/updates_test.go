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

package e2enode

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/utils/ptr"

	configv1alpha1 "github.com/podadmission/podadmission/pkg/apis/config/v1alpha1"
	"github.com/podadmission/podadmission/test/e2e_node/framework"
)

// Updates of admitted pods (issue 18): every container the kubelet starts
// after a pod's admission passes the plugins first, as an Update; a
// rejection holds that container and stops nothing.

const (
	// pluginImagePolicy is a test plugin with an image rule.
	pluginImagePolicy = "image-policy"
	// forbiddenImage is the image pluginImagePolicy refuses. It exists
	// nowhere: a kubelet that tried to start it would pull and fail.
	forbiddenImage = "e2e.podadmission.local/forbidden:1"
	// heldUpdateWindow is how long a held update is watched for anything the
	// runtime does to the pod.
	heldUpdateWindow = 10 * time.Second
)

// runningContainer is the identity of a running container in the pod's
// status.
type runningContainer struct {
	ID           string
	RestartCount int32
}

func runningWorkload(t *testing.T, pod *corev1.Pod) runningContainer {
	t.Helper()
	require.Len(t, pod.Status.ContainerStatuses, 1, "container statuses of %s", pod.Name)
	cs := pod.Status.ContainerStatuses[0]
	require.NotNil(t, cs.State.Running, "container %s of %s should run: %s", cs.Name, pod.Name, framework.DescribePod(pod))
	return runningContainer{ID: cs.ContainerID, RestartCount: cs.RestartCount}
}

// assertUntouched checks that the pod's container still runs, the same
// container without a restart, and that the runtime got no call for the
// pod's containers since since: no container created, started or stopped,
// no image pulled.
func assertUntouched(t *testing.T, ctx context.Context, pod *corev1.Pod, before runningContainer, since time.Time) {
	t.Helper()
	now, err := suite.Cluster.Client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, before, runningWorkload(t, now), "the running container keeps running: same container, no restart")
	for _, call := range criCalls(t) {
		if call.Image == forbiddenImage {
			t.Errorf("the runtime got %s of the held image %s", call.Method, forbiddenImage)
		}
		if call.PodUID != string(pod.UID) || call.Time.Before(since) {
			continue
		}
		switch call.Method {
		case "CreateContainer", "StartContainer", "StopContainer", "RemoveContainer", "PullImage", "StopPodSandbox", "RunPodSandbox":
			t.Errorf("the runtime got %s for %s (container %q, image %q) while its update was held", call.Method, pod.Name, call.ContainerName, call.Image)
		}
	}
}

// podEvent waits for an event on pod with reason whose message contains
// text, and returns it.
func podEvent(t *testing.T, ctx context.Context, pod *corev1.Pod, reason, text string) corev1.Event {
	t.Helper()
	var found corev1.Event
	require.Eventually(t, func() bool {
		events, err := suite.Cluster.Client.CoreV1().Events(pod.Namespace).List(ctx, metav1.ListOptions{
			FieldSelector: fields.OneTermEqualSelector("involvedObject.uid", string(pod.UID)).String(),
		})
		if err != nil {
			return false
		}
		for _, e := range events.Items {
			if e.Reason == reason && strings.Contains(e.Message, text) {
				found = e
				return true
			}
		}
		return false
	}, 30*time.Second, 200*time.Millisecond, "pod %s should have an event %s saying %q", pod.Name, reason, text)
	return found
}

// TestPrivilegedEphemeralContainerIsNotStarted: pod-security-plugin at the
// baseline level admits a compliant pod; a privileged ephemeral container
// added to it later (kubectl debug --profile=sysadmin) is not started: it
// waits with the plugin's reason and message, the pod has an event, and the
// pod's container keeps running.
func TestPrivilegedEphemeralContainerIsNotStarted(t *testing.T) {
	usePluginKubelet(t, pluginKubelet)
	ctx := testContext(t, 5*time.Minute)
	c := suite.Cluster
	installPluginBinary(t, examplePluginBinary(t, "pod-security-plugin"), pluginPodSecurity)
	writeExamplePluginConfig(t, ctx, "80-pod-security.yaml", configv1alpha1.PluginConfig{
		Name:  pluginPodSecurity,
		Type:  configv1alpha1.ExecPluginType,
		Args:  []string{"--level=baseline", "--version=latest"},
		Match: framework.MatchPluginLabel(pluginPodSecurity),
	})

	ns := newNamespace(t, ctx)
	pod, err := c.Client.CoreV1().Pods(ns).Create(ctx, c.NewPod(ns, "web", framework.PluginLabels(pluginPodSecurity)), metav1.CreateOptions{})
	require.NoError(t, err)
	pod, _ = waitRunning(t, ctx, ns, pod.Name, 2*time.Minute, "pod-security-plugin admits a baseline pod")
	before := runningWorkload(t, pod)

	updated := time.Now()
	pod.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
		Name:                     "debugger",
		Image:                    c.Runtime.WorkloadImage(),
		ImagePullPolicy:          corev1.PullIfNotPresent,
		TerminationMessagePolicy: corev1.TerminationMessageReadFile,
		SecurityContext:          &corev1.SecurityContext{Privileged: ptr.To(true)},
	}}}
	_, err = c.Client.CoreV1().Pods(ns).UpdateEphemeralContainers(ctx, pod.Name, pod, metav1.UpdateOptions{})
	require.NoError(t, err, "the API server admits the privileged ephemeral container: its namespace enforces no level")

	const wantMessage = `Pod admission plugin "pod-security-plugin" rejected the pod: violates PodSecurity "baseline:latest": privileged (container "debugger" must not set securityContext.privileged=true)`
	held, at, err := framework.WaitForPod(ctx, c.Client, ns, pod.Name, time.Minute, func(p *corev1.Pod) bool {
		for _, s := range p.Status.EphemeralContainerStatuses {
			if s.Name == "debugger" && s.State.Waiting != nil && s.State.Waiting.Reason == reasonPodSecurity {
				return true
			}
		}
		return false
	})
	require.NoError(t, err, "the ephemeral container should wait with the plugin's reason")
	durationFigure(t, "ephemeral container added to held with the plugin's reason in its status", at.Sub(updated))
	assert.Equal(t, wantMessage, held.Status.EphemeralContainerStatuses[0].State.Waiting.Message)
	event := podEvent(t, ctx, held, reasonPodSecurity, `Not starting ephemeral container "debugger"`)
	assert.Equal(t, corev1.EventTypeWarning, event.Type)
	assert.Contains(t, event.Message, wantMessage)
	assert.Equal(t, corev1.PodRunning, held.Status.Phase)

	time.Sleep(heldUpdateWindow)
	assertUntouched(t, ctx, held, before, updated)
	now, err := c.Client.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
	require.NoError(t, err)
	require.Len(t, now.Status.EphemeralContainerStatuses, 1)
	assert.NotNil(t, now.Status.EphemeralContainerStatuses[0].State.Waiting, "still not started")
}

// TestReplacedImageIsNotStarted: a plugin with an image rule admits a pod;
// its container's image replaced by one the rule refuses is not started
// (never pulled), and the running container keeps running: the same
// container, restartCount 0. Put back, the admitted image needs no plugin
// call and restarts nothing.
func TestReplacedImageIsNotStarted(t *testing.T) {
	usePluginKubelet(t, pluginKubelet)
	ctx := testContext(t, 5*time.Minute)
	c := suite.Cluster
	require.NoError(t, c.InstallExecPlugin(pluginImagePolicy))
	writeExamplePluginConfig(t, ctx, "81-image-policy.yaml", execPlugin(pluginImagePolicy, "--mode=allow", "--deny-images="+forbiddenImage))

	ns := newNamespace(t, ctx)
	pod, err := c.Client.CoreV1().Pods(ns).Create(ctx, c.NewPod(ns, "web", framework.PluginLabels(pluginImagePolicy)), metav1.CreateOptions{})
	require.NoError(t, err)
	pod, _ = waitRunning(t, ctx, ns, pod.Name, 2*time.Minute, "the image policy admits the workload image")
	before := runningWorkload(t, pod)

	updated := time.Now()
	pod.Spec.Containers[0].Image = forbiddenImage
	pod, err = c.Client.CoreV1().Pods(ns).Update(ctx, pod, metav1.UpdateOptions{})
	require.NoError(t, err)

	event := podEvent(t, ctx, pod, "ImageNotAllowed", `Not starting container "workload" with image "`+forbiddenImage+`"`)
	assert.Equal(t, corev1.EventTypeWarning, event.Type)
	assert.Contains(t, event.Message, `Pod admission plugin "`+pluginImagePolicy+`" rejected the pod: image "`+forbiddenImage+`" is not allowed on this node`)

	time.Sleep(heldUpdateWindow)
	assertUntouched(t, ctx, pod, before, updated)
	calls, err := framework.ReadPluginLog(c.PluginFile(pluginImagePolicy + ".log"))
	require.NoError(t, err)
	calls = framework.CallsFor(calls, string(pod.UID))
	require.GreaterOrEqual(t, len(calls), 2, "the pod's admission and its update")
	assert.False(t, calls[0].Update, "the pod's first admission is a Create")
	assert.True(t, calls[1].Update, "the replaced image is an Update")

	// The image put back is what was admitted: no call, nothing restarted.
	pod, err = c.Client.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
	require.NoError(t, err)
	pod.Spec.Containers[0].Image = c.Runtime.WorkloadImage()
	reverted := time.Now()
	_, err = c.Client.CoreV1().Pods(ns).Update(ctx, pod, metav1.UpdateOptions{})
	require.NoError(t, err)
	time.Sleep(5 * time.Second)
	assertUntouched(t, ctx, pod, before, reverted)
	after, err := framework.ReadPluginLog(c.PluginFile(pluginImagePolicy + ".log"))
	require.NoError(t, err)
	assert.Len(t, framework.CallsFor(after, string(pod.UID)), len(calls), "the admitted image needs no plugin call")
}
