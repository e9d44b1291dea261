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

package corepod_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	podadmissionv1alpha1 "github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1"
	"github.com/podadmission/podadmission/pkg/plugin"
	"github.com/podadmission/podadmission/pkg/plugin/corepod"
	sdk "github.com/podadmission/podadmission/pkg/plugin/corev1"
)

func kubeletPod(image string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "web", UID: "pod-1", CreationTimestamp: metav1.Unix(1700000000, 0)},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "web", Image: image,
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}},
		}}},
	}
}

// decode decodes req as a plugin receives it from the kubelet.
func decode(t *testing.T, req *podadmissionv1alpha1.PodAdmissionRequest) *plugin.Request {
	t.Helper()
	req.TypeMeta = podadmissionv1alpha1.RequestTypeMeta()
	req.UID, req.Attempt = "call-1", 1
	data, err := podadmissionv1alpha1.EncodeRequest(req)
	require.NoError(t, err)
	got, err := plugin.DecodeRequest(data)
	require.NoError(t, err)
	return got
}

func TestPodIsTheKubelets(t *testing.T) {
	want := kubeletPod("nginx:2")
	old := kubeletPod("nginx:1")
	req := decode(t, &podadmissionv1alpha1.PodAdmissionRequest{Pod: want, OldPod: old, Operation: podadmissionv1alpha1.OperationUpdate})

	pod, err := corepod.Pod(req)
	require.NoError(t, err)
	assert.Equal(t, want.Spec, pod.Spec)
	assert.True(t, want.CreationTimestamp.Equal(&pod.CreationTimestamp))
	cpu := pod.Spec.Containers[0].Resources.Limits[corev1.ResourceCPU]
	assert.Equal(t, int64(500), cpu.MilliValue(), "a resource.Quantity, with its arithmetic")

	oldPod, err := corepod.OldPod(req)
	require.NoError(t, err)
	assert.Equal(t, old.Spec, oldPod.Spec)
}

func TestOldPodOfACreateIsNil(t *testing.T) {
	oldPod, err := corepod.OldPod(decode(t, &podadmissionv1alpha1.PodAdmissionRequest{Pod: kubeletPod("nginx")}))
	require.NoError(t, err)
	assert.Nil(t, oldPod)
}

func TestPodNeedsAPod(t *testing.T) {
	_, err := corepod.Pod(&plugin.Request{UID: "call-1"})
	assert.EqualError(t, err, "pod: the request carries no pod (plugin.Request.Pod)")
}

// TestPodOfARequestBuiltInGo: a test's request, built in Go rather than
// decoded, converts too, what a security policy reads of it included.
func TestPodOfARequestBuiltInGo(t *testing.T) {
	privileged := true
	container := sdk.Container{
		Name:            "web",
		SecurityContext: &sdk.SecurityContext{Privileged: &privileged},
		Resources:       sdk.ResourceRequirements{Limits: sdk.ResourceList{sdk.ResourceCPU: sdk.MustParseQuantity("500m")}},
	}
	req := &plugin.Request{Pod: &sdk.Pod{
		ObjectMeta: sdk.ObjectMeta{Namespace: "team-a", Name: "web"},
		Spec:       sdk.PodSpec{HostNetwork: true, Containers: []sdk.Container{container}},
	}}

	pod, err := corepod.Pod(req)
	require.NoError(t, err)
	assert.Equal(t, "team-a", pod.Namespace)
	assert.True(t, pod.Spec.HostNetwork)
	require.Len(t, pod.Spec.Containers, 1)
	require.NotNil(t, pod.Spec.Containers[0].SecurityContext)
	assert.Equal(t, &privileged, pod.Spec.Containers[0].SecurityContext.Privileged)
	cpu := pod.Spec.Containers[0].Resources.Limits[corev1.ResourceCPU]
	assert.Equal(t, int64(500), cpu.MilliValue())
}
