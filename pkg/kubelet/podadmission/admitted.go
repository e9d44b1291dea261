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
	"slices"

	"github.com/distribution/reference"
	v1 "k8s.io/api/core/v1"
	kubecontainer "k8s.io/kubernetes/pkg/kubelet/container"
)

// What the plugins admitted of a pod, and what of it the kubelet may run.
//
// What reaches the runtime after a pod's admission is what can change in
// its spec: a container's or init container's image (the only mutable
// field of a container, and all that kubecontainer.HashContainer, by which
// the runtime tells a changed container, hashes besides the name) and
// ephemeral containers, which are added but never changed. So the record of
// an admitted pod is the image of each of its containers by name (names are
// unique across containers, init containers and ephemeral containers).
// Resources are not in it: a resize is admitted by the kubelet's admit
// handlers (the allocation manager), and the runtime applies allocated
// resources only.

// admittedImages maps the name of every container, init container and
// ephemeral container of a pod the plugins admitted to its image.
type admittedImages map[string]string

// admittedImagesOf is the record of pod as a whole, once the plugins
// admitted it.
func admittedImagesOf(pod *v1.Pod) admittedImages {
	images := make(admittedImages, len(pod.Spec.InitContainers)+len(pod.Spec.Containers)+len(pod.Spec.EphemeralContainers))
	for _, c := range pod.Spec.InitContainers {
		images[c.Name] = c.Image
	}
	for _, c := range pod.Spec.Containers {
		images[c.Name] = c.Image
	}
	for _, c := range pod.Spec.EphemeralContainers {
		images[c.Name] = c.Image
	}
	return images
}

// changedContainer is a container of an admitted pod whose spec the
// plugins have not admitted: the kubelet must not start it as it is.
type changedContainer struct {
	name  string
	image string
	// ephemeral containers are left out of the runnable pod.
	ephemeral bool
	// admittedImage is, for a container or init container, the image the
	// plugins admitted: the runnable pod keeps it, so the runtime neither
	// stops the running container nor starts the new image.
	admittedImage string
}

func (c *changedContainer) equal(o *changedContainer) bool { return *c == *o }

// reconcile compares pod with what the plugins admitted of it (admitted;
// nil when there is no record of the pod) and with the runtime's
// containers, and returns the containers of pod the plugins have not
// admitted, and the record with what the runtime shows was admitted added
// (changed says whether it differs from admitted).
//
// The runtime is evidence: a container it has (running or exited) with the
// hash of the spec's container was started by the kubelet with that spec,
// so that spec was admitted, whatever the record says (a record can be
// older than what was admitted, if the kubelet stopped before it was
// written). A container or init container's changed image keeps the image
// it was admitted with in the runnable pod: the record's, or else the one
// the runtime runs. Without a record (the pod ran before the plugins were
// configured, or the record was lost), a container that never ran counts as
// admitted as it is, and an ephemeral container that never ran is new.
func reconcile(admitted admittedImages, pod *v1.Pod, podStatus *kubecontainer.PodStatus) (record admittedImages, changes []changedContainer, changed bool) {
	record = admitted
	learn := func(name, image string) {
		if record[name] == image {
			return
		}
		if !changed {
			record = make(admittedImages, len(admitted)+1)
			for n, i := range admitted {
				record[n] = i
			}
			changed = true
		}
		record[name] = image
	}
	check := func(c *v1.Container) {
		admittedImage, known := admitted[c.Name]
		if isAdmitted(admitted, c.Name, c.Image) {
			return
		}
		status := podStatus.FindContainerStatusByName(c.Name)
		switch {
		case status != nil && status.Hash == kubecontainer.HashContainer(c):
			learn(c.Name, c.Image)
		case known && (status == nil || status.Hash == hashWithImage(c, admittedImage)):
			changes = append(changes, changedContainer{name: c.Name, image: c.Image, admittedImage: admittedImage})
		case status != nil:
			// The record, if any, is older than what runs: the image the
			// runtime runs is the admitted one.
			image := runningImage(c, status)
			learn(c.Name, image)
			changes = append(changes, changedContainer{name: c.Name, image: c.Image, admittedImage: image})
		default:
			learn(c.Name, c.Image)
		}
	}
	for i := range pod.Spec.InitContainers {
		check(&pod.Spec.InitContainers[i])
	}
	for i := range pod.Spec.Containers {
		check(&pod.Spec.Containers[i])
	}
	for i := range pod.Spec.EphemeralContainers {
		c := &pod.Spec.EphemeralContainers[i].EphemeralContainerCommon
		switch {
		case isAdmitted(admitted, c.Name, c.Image):
		case podStatus.FindContainerStatusByName(c.Name) != nil:
			// It ran, so it was admitted; ephemeral containers never change.
			learn(c.Name, c.Image)
		default:
			changes = append(changes, changedContainer{name: c.Name, image: c.Image, ephemeral: true})
		}
	}
	return record, changes, changed
}

func isAdmitted(admitted admittedImages, name, image string) bool {
	admittedImage, ok := admitted[name]
	return ok && admittedImage == image
}

// runningImage is the image of the spec the runtime started the container
// of status with, so that the runnable pod keeps it running: the runtime's
// hash is the spec's. The runtime reports images by its own name for them
// (containerd: docker.io/library/busybox:latest for busybox), so the short
// forms of that name are tried too; when none has the hash (a digest, a
// registry's other spelling) the runtime's name is the best there is, and
// the runtime restarts the container once at that name of the same image.
func runningImage(c *v1.Container, status *kubecontainer.Status) string {
	candidates := []string{status.Image}
	if named, err := reference.ParseNormalizedNamed(status.Image); err == nil {
		candidates = append(candidates, reference.FamiliarString(named), named.String())
		if tagged, ok := named.(reference.Tagged); ok && tagged.Tag() == "latest" {
			candidates = append(candidates, reference.FamiliarName(named), named.Name())
		}
	}
	for _, image := range candidates {
		if hashWithImage(c, image) == status.Hash {
			return image
		}
	}
	return status.Image
}

// hashWithImage is the runtime's hash of c with image instead of its own.
func hashWithImage(c *v1.Container, image string) uint64 {
	withImage := *c
	withImage.Image = image
	return kubecontainer.HashContainer(&withImage)
}

// runnablePod is pod as the plugins admitted it, which is what the kubelet
// may run: the changed containers and init containers at their admitted
// image, the changed ephemeral containers left out. It is a copy of pod
// that shares everything the changes do not touch; no one may modify it.
// It is also the oldPod of the pod's Update request.
func runnablePod(pod *v1.Pod, changes []changedContainer) *v1.Pod {
	if len(changes) == 0 {
		return pod
	}
	runnable := *pod
	runnable.Spec.InitContainers = withAdmittedImages(pod.Spec.InitContainers, changes)
	runnable.Spec.Containers = withAdmittedImages(pod.Spec.Containers, changes)
	runnable.Spec.EphemeralContainers = slices.DeleteFunc(slices.Clone(pod.Spec.EphemeralContainers), func(c v1.EphemeralContainer) bool {
		return slices.ContainsFunc(changes, func(ch changedContainer) bool { return ch.ephemeral && ch.name == c.Name })
	})
	if len(runnable.Spec.EphemeralContainers) == 0 {
		runnable.Spec.EphemeralContainers = nil
	}
	return &runnable
}

func withAdmittedImages(containers []v1.Container, changes []changedContainer) []v1.Container {
	var out []v1.Container
	for i, c := range containers {
		for _, ch := range changes {
			if ch.ephemeral || ch.name != c.Name {
				continue
			}
			if out == nil {
				out = slices.Clone(containers)
			}
			out[i].Image = ch.admittedImage
		}
	}
	if out == nil {
		return containers
	}
	return out
}
