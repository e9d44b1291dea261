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
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	kubecontainer "k8s.io/kubernetes/pkg/kubelet/container"
)

// appPod is an admitted-looking pod: init container "setup", containers
// "app" and "sidecar", at images of version 1.
func appPod(name string) *v1.Pod {
	pod := testPod(name)
	pod.Spec.InitContainers = []v1.Container{{Name: "setup", Image: "registry.example/setup:1"}}
	pod.Spec.Containers = []v1.Container{
		{Name: "app", Image: "registry.example/app:1"},
		{Name: "sidecar", Image: "registry.example/sidecar:1"},
	}
	return pod
}

func withEphemeral(pod *v1.Pod, name, image string) *v1.Pod {
	pod = pod.DeepCopy()
	pod.Spec.EphemeralContainers = append(pod.Spec.EphemeralContainers, v1.EphemeralContainer{EphemeralContainerCommon: v1.EphemeralContainerCommon{
		Name: name, Image: image, SecurityContext: &v1.SecurityContext{Privileged: ptrTo(true)},
	}})
	return pod
}

func withImage(pod *v1.Pod, container, image string) *v1.Pod {
	pod = pod.DeepCopy()
	for _, list := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			if list[i].Name == container {
				list[i].Image = image
			}
		}
	}
	return pod
}

func ptrTo[T any](v T) *T { return &v }

// runtimeStatus is what the runtime reports of pod's containers: each of
// running (with the spec pod has now) as running, started the given time
// ago so that the newest comes first.
func runtimeStatus(pod *v1.Pod, containers ...string) *kubecontainer.PodStatus {
	status := &kubecontainer.PodStatus{ID: pod.UID, Name: pod.Name, Namespace: pod.Namespace}
	for i, name := range containers {
		c := containerByName(pod, name)
		status.ContainerStatuses = append(status.ContainerStatuses, &kubecontainer.Status{
			ID:        kubecontainer.ContainerID{Type: "containerd", ID: name + "-id"},
			Name:      name,
			State:     kubecontainer.ContainerStateRunning,
			Image:     c.Image,
			Hash:      kubecontainer.HashContainer(c),
			CreatedAt: testStart.Add(-time.Duration(i) * time.Minute),
		})
	}
	return status
}

func containerByName(pod *v1.Pod, name string) *v1.Container {
	for _, list := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	for i := range pod.Spec.EphemeralContainers {
		if pod.Spec.EphemeralContainers[i].Name == name {
			return (*v1.Container)(&pod.Spec.EphemeralContainers[i].EphemeralContainerCommon)
		}
	}
	return nil
}

func TestReconcileWithTheRecord(t *testing.T) {
	admitted := appPod("web")
	record := admittedImagesOf(admitted)
	assert.Equal(t, admittedImages{"setup": "registry.example/setup:1", "app": "registry.example/app:1", "sidecar": "registry.example/sidecar:1"}, record)

	got, changes, changed := reconcile(record, admitted, &kubecontainer.PodStatus{})
	assert.Empty(t, changes, "the pod as it was admitted")
	assert.False(t, changed)
	assert.Equal(t, record, got)

	updated := withEphemeral(withImage(withImage(admitted, "app", "registry.example/app:2"), "setup", "registry.example/setup:2"), "debug", "busybox")
	_, changes, changed = reconcile(record, updated, runtimeStatus(admitted, "app", "sidecar"))
	assert.False(t, changed)
	assert.Equal(t, []changedContainer{
		{name: "setup", image: "registry.example/setup:2", admittedImage: "registry.example/setup:1"},
		{name: "app", image: "registry.example/app:2", admittedImage: "registry.example/app:1"},
		{name: "debug", image: "busybox", ephemeral: true},
	}, changes)
}

// TestReconcileTakesWhatTheRuntimeStartedAsAdmitted: the kubelet starts
// only what was admitted, so a container the runtime has with the spec's
// hash was admitted, whatever a (stale) record says.
func TestReconcileTakesWhatTheRuntimeStartedAsAdmitted(t *testing.T) {
	pod := withEphemeral(withImage(appPod("web"), "app", "registry.example/app:2"), "debug", "busybox")
	stale := admittedImagesOf(appPod("web"))
	record, changes, changed := reconcile(stale, pod, runtimeStatus(pod, "app", "debug"))
	assert.Empty(t, changes)
	assert.True(t, changed)
	assert.Equal(t, "registry.example/app:2", record["app"])
	assert.Equal(t, "busybox", record["debug"])
	assert.Equal(t, "registry.example/app:1", stale["app"], "the record given is not modified")
}

// TestReconcileWithoutARecord: a pod that ran before the plugins were
// configured, or whose record is lost. What the runtime runs counts as
// admitted; an ephemeral container that never ran is new.
func TestReconcileWithoutARecord(t *testing.T) {
	before := appPod("web")
	pod := withEphemeral(withImage(before, "app", "registry.example/app:2"), "debug", "busybox")
	record, changes, changed := reconcile(nil, pod, runtimeStatus(before, "app"))
	assert.True(t, changed)
	assert.Equal(t, []changedContainer{
		{name: "app", image: "registry.example/app:2", admittedImage: "registry.example/app:1"},
		{name: "debug", image: "busybox", ephemeral: true},
	}, changes)
	assert.Equal(t, admittedImages{
		"setup":   "registry.example/setup:1",   // never ran: taken as it is
		"app":     "registry.example/app:1",     // what runs
		"sidecar": "registry.example/sidecar:1", // never ran: taken as it is
	}, record)

	runnable := runnablePod(pod, changes)
	assert.Equal(t, kubecontainer.HashContainer(&before.Spec.Containers[0]), kubecontainer.HashContainer(&runnable.Spec.Containers[0]),
		"the runtime sees the container it runs, so it neither stops it nor starts the new image")
}

// TestReconcileKeepsWhatRunsUnderTheRuntimesNameOfItsImage: without a
// record, the admitted image of a running container is the runtime's, which
// names images its own way (containerd: docker.io/library/busybox:latest
// for busybox). The runnable pod has the image the container was started
// with, so the runtime's hash matches and it neither stops nor restarts it.
func TestReconcileKeepsWhatRunsUnderTheRuntimesNameOfItsImage(t *testing.T) {
	for started, reported := range map[string]string{
		"busybox":                        "docker.io/library/busybox:latest",
		"busybox:1.36":                   "docker.io/library/busybox:1.36",
		"docker.io/library/busybox:1.36": "docker.io/library/busybox:1.36",
		"registry.example:5000/app":      "registry.example:5000/app:latest",
		"registry.example/team/app:1":    "registry.example/team/app:1",
	} {
		t.Run(started, func(t *testing.T) {
			before := withImage(appPod("web"), "app", started)
			status := runtimeStatus(before, "app")
			status.ContainerStatuses[0].Image = reported
			pod := withImage(before, "app", "registry.example/evil:1")

			record, changes, _ := reconcile(nil, pod, status)
			require.Equal(t, []changedContainer{{name: "app", image: "registry.example/evil:1", admittedImage: started}}, changes)
			assert.Equal(t, started, record["app"])
			runnable := runnablePod(pod, changes)
			assert.Equal(t, status.ContainerStatuses[0].Hash, kubecontainer.HashContainer(&runnable.Spec.Containers[0]),
				"the runtime sees the container it runs")
		})
	}

	// A spelling the runtime's name does not give back: the best there is.
	before := withImage(appPod("web"), "app", "library/busybox")
	status := runtimeStatus(before, "app")
	status.ContainerStatuses[0].Image = "docker.io/library/busybox:latest"
	_, changes, _ := reconcile(nil, withImage(before, "app", "registry.example/evil:1"), status)
	require.Len(t, changes, 1)
	assert.Equal(t, "docker.io/library/busybox:latest", changes[0].admittedImage)
}

func TestRunnablePodKeepsWhatWasAdmitted(t *testing.T) {
	admitted := appPod("web")
	pod := withEphemeral(withEphemeral(withImage(admitted, "app", "registry.example/app:2"), "debug", "busybox"), "ok", "registry.example/tools:1")
	record := admittedImagesOf(admitted)
	record["ok"] = "registry.example/tools:1"
	_, changes, _ := reconcile(record, pod, runtimeStatus(admitted, "app", "sidecar"))

	runnable := runnablePod(pod, changes)
	assert.Equal(t, admitted.Spec.InitContainers, runnable.Spec.InitContainers)
	assert.Equal(t, admitted.Spec.Containers, runnable.Spec.Containers, "the replaced image is back at the admitted one, the sidecar untouched")
	require.Len(t, runnable.Spec.EphemeralContainers, 1)
	assert.Equal(t, "ok", runnable.Spec.EphemeralContainers[0].Name, "only the held ephemeral container is left out")
	assert.Equal(t, "registry.example/app:2", pod.Spec.Containers[0].Image, "the pod itself is not modified")
	assert.Len(t, pod.Spec.EphemeralContainers, 2)
	assert.Equal(t, pod.ObjectMeta, runnable.ObjectMeta)

	assert.Same(t, pod, runnablePod(pod, nil), "nothing held: the pod itself")
}
