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

package framework

import (
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// WriteStaticPod writes pod as a manifest into the kubelet's static pod
// directory. The file is renamed into place, so the kubelet never reads a
// half-written manifest.
func (c *Cluster) WriteStaticPod(pod *corev1.Pod) error {
	pod = pod.DeepCopy()
	pod.APIVersion, pod.Kind = "v1", "Pod"
	data, err := yaml.Marshal(pod)
	if err != nil {
		return err
	}
	return writeFileAtomically(c.staticPodPath(pod), data, 0o644)
}

// RemoveStaticPod deletes the manifest WriteStaticPod wrote for pod.
func (c *Cluster) RemoveStaticPod(pod *corev1.Pod) error {
	err := os.Remove(c.staticPodPath(pod))
	if os.IsNotExist(err) {
		return nil
	}
	return err
}

// MirrorPodName is the name of the mirror pod of a static pod.
func (c *Cluster) MirrorPodName(staticName string) string {
	return staticName + "-" + c.Options.NodeName
}

func (c *Cluster) staticPodPath(pod *corev1.Pod) string {
	return filepath.Join(c.Kubelet.StaticPodDir, pod.Namespace+"-"+pod.Name+".yaml")
}
