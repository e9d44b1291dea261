//go:build e2e_node

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
