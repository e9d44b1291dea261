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
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podadmission/podadmission/test/e2e_node/crirecord"
	"github.com/podadmission/podadmission/test/e2e_node/framework"
)

// blockedWith is true once the kubelet has held the pod with reason.
func blockedWith(reason string) framework.PodCondition {
	return func(p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodPending && p.Status.Reason == reason
	}
}

// failedWith is true once the kubelet has rejected the pod for good with
// reason.
func failedWith(reason string) framework.PodCondition {
	return func(p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodFailed && p.Status.Reason == reason
	}
}

// waitBlocked waits until the pod is held with reason and returns it.
func waitBlocked(t *testing.T, ctx context.Context, namespace, name, reason string) *corev1.Pod {
	t.Helper()
	pod, _, err := framework.WaitForPod(ctx, suite.Cluster.Client, namespace, name, 90*time.Second, blockedWith(reason))
	require.NoError(t, err, "pod should be held by a plugin with reason %s", reason)
	return pod
}

// assertSoftBlocked checks everything the admission contract promises
// about a pod a plugin holds: Pending with the plugin's reason, a message
// that names the plugin, containers Waiting with the reason of any pod that
// has not started (upstream's conformance tests of init containers require
// it), an event on the pod, and no sandbox (nor container, nor image pull)
// in the runtime.
func assertSoftBlocked(t *testing.T, ctx context.Context, pod *corev1.Pod, plugin, reason string) {
	t.Helper()
	assert.Equal(t, corev1.PodPending, pod.Status.Phase, "phase of %s", pod.Name)
	assert.Equal(t, reason, pod.Status.Reason, "status.reason of %s", pod.Name)
	assert.Contains(t, pod.Status.Message, `"`+plugin+`"`, "status.message of %s should name the plugin", pod.Name)
	require.NotEmpty(t, pod.Status.ContainerStatuses, "container statuses of %s", pod.Name)
	waitingReason := "ContainerCreating"
	if len(pod.Spec.InitContainers) > 0 {
		waitingReason = "PodInitializing"
	}
	for _, cs := range slices.Concat(pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses) {
		if assert.NotNil(t, cs.State.Waiting, "container %s of %s should be Waiting", cs.Name, pod.Name) {
			assert.Equal(t, waitingReason, cs.State.Waiting.Reason, "waiting reason of container %s of %s", cs.Name, pod.Name)
		}
	}
	assertEventFor(t, ctx, pod, reason, plugin)
	assertNoRuntimeWork(t, pod)
}

// kubeletUID is the uid the kubelet knows the pod by: for a mirror pod,
// the static pod's (its config.mirror annotation), else the pod's own.
func kubeletUID(pod *corev1.Pod) types.UID {
	if hash, ok := pod.Annotations[corev1.MirrorPodAnnotationKey]; ok {
		return types.UID(hash)
	}
	return pod.UID
}

// assertEventFor checks that the pod has an event with reason whose
// message names plugin.
func assertEventFor(t *testing.T, ctx context.Context, pod *corev1.Pod, reason, plugin string) {
	t.Helper()
	var events *corev1.EventList
	require.Eventually(t, func() bool {
		var err error
		events, err = suite.Cluster.Client.CoreV1().Events(pod.Namespace).List(ctx, metav1.ListOptions{
			FieldSelector: fields.OneTermEqualSelector("involvedObject.uid", string(kubeletUID(pod))).String(),
		})
		if err != nil {
			return false
		}
		for _, e := range events.Items {
			if e.Reason == reason && strings.Contains(e.Message, `"`+plugin+`"`) {
				return true
			}
		}
		return false
	}, 30*time.Second, 200*time.Millisecond, "pod %s should have an event with reason %s naming plugin %q", pod.Name, reason, plugin)
}

// assertNoRuntimeWork checks the CRI journal: the kubelet never created a
// sandbox or a container, nor pulled an image, for the pod.
func assertNoRuntimeWork(t *testing.T, pod *corev1.Pod) {
	t.Helper()
	calls := criCalls(t)
	for _, method := range []string{"RunPodSandbox", "CreateContainer", "PullImage"} {
		assert.Empty(t, crirecord.Filter(calls, method, string(kubeletUID(pod))), "%s calls for held pod %s", method, pod.Name)
	}
}
