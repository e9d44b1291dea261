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

// Package benchpod holds what benchmarks of the pod admission path
// share, so that each of them measures the same request.
package benchpod

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	podadmissionv1alpha1 "github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1"
)

// BenchPod returns a typical workload pod, as a Deployment creates it: two
// containers with resources, probes, env and a volume (about 2 KB of JSON).
func BenchPod() *corev1.Pod {
	container := func(name, image string) corev1.Container {
		return corev1.Container{
			Name:  name,
			Image: image,
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
			Env: []corev1.EnvVar{
				{Name: "LOG_LEVEL", Value: "info"},
				{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
			},
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
			},
			VolumeMounts:   []corev1.VolumeMount{{Name: "config", MountPath: "/etc/app"}},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}}, PeriodSeconds: 5},
		}
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "team-a", Name: "web-7d9f8c6b5-x2x4z", UID: "1f0c2a9e-3b1d-4a8e-9c55-0d7c3c1e2b7a",
			Labels:          map[string]string{"app": "web", "pod-template-hash": "7d9f8c6b5", "team": "a"},
			Annotations:     map[string]string{"kubectl.kubernetes.io/restartedAt": "2026-11-29T10:00:00Z"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-7d9f8c6b5", UID: "5b2e", Controller: ptr.To(true)}},
		},
		Spec: corev1.PodSpec{
			Containers:         []corev1.Container{container("web", "registry.example/web:1.4.2"), container("sidecar", "registry.example/proxy:2.0.1")},
			Volumes:            []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "web-config"}}}}},
			ServiceAccountName: "web",
			NodeName:           "node-a",
			Tolerations:        []corev1.Toleration{{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}},
		},
	}
}

// BenchNode returns the node the benchmark's pods run on, with the labels
// and system information the kubelet sends plugins.
func BenchNode() *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:   "node-a",
			Labels: map[string]string{"kubernetes.io/hostname": "node-a", "topology.kubernetes.io/zone": "eu-1a"},
		},
		Status: corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{
			KernelVersion: "6.1.0-28-amd64", OSImage: "Debian GNU/Linux 12 (bookworm)", ContainerRuntimeVersion: "containerd://2.1.0",
			KubeletVersion: "v1.37.2", OperatingSystem: "linux", Architecture: "amd64",
		}},
	}
}

// RequestJSON is the request the kubelet sends an Exec plugin for
// BenchPod on BenchNode, as its codec writes it (about 2 KB).
func RequestJSON() ([]byte, error) {
	node := BenchNode()
	return podadmissionv1alpha1.EncodeRequest(&podadmissionv1alpha1.PodAdmissionRequest{
		TypeMeta: podadmissionv1alpha1.RequestTypeMeta(),
		UID:      "1b4e28ba-2fa1-11d2-883f-0016d3cca427",
		Pod:      BenchPod(),
		Node:     podadmissionv1alpha1.NodeInfo{Name: node.Name, Labels: node.Labels, NodeInfo: node.Status.NodeInfo},
		Attempt:  1,
	})
}
