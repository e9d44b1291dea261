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

package testing

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	podadmissionv1alpha1 "github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1"
	"github.com/podadmission/podadmission/pkg/plugin"
)

// HostNetworkPod is a pod that every level rejects: it uses the host's
// network.
func HostNetworkPod(namespace string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: namespace},
		Spec: corev1.PodSpec{
			HostNetwork: true,
			Containers:  []corev1.Container{{Name: "web", Image: "registry.example/web:1"}},
		},
	}
}

// KubeletRequest is the kubelet's request for pod.
func KubeletRequest(pod *corev1.Pod, static bool) *podadmissionv1alpha1.PodAdmissionRequest {
	return &podadmissionv1alpha1.PodAdmissionRequest{
		TypeMeta: podadmissionv1alpha1.RequestTypeMeta(),
		UID:      "request-uid", Pod: pod, Static: static, Attempt: 1, Node: podadmissionv1alpha1.NodeInfo{Name: "node-1"},
	}
}

// Request is the kubelet's request for pod as the Exec plugin gets it:
// encoded by the kubelet, decoded by the SDK.
func Request(t testing.TB, pod *corev1.Pod, static bool) *plugin.Request {
	t.Helper()
	data, err := podadmissionv1alpha1.EncodeRequest(KubeletRequest(pod, static))
	require.NoError(t, err)
	req, err := plugin.DecodeRequest(data)
	require.NoError(t, err)
	return req
}
