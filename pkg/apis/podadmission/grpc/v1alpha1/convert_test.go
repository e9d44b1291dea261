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

package v1alpha1

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	podadmissionv1alpha1 "github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1"
)

func testRequest() *podadmissionv1alpha1.PodAdmissionRequest {
	return &podadmissionv1alpha1.PodAdmissionRequest{
		TypeMeta: metav1.TypeMeta{APIVersion: "podadmission.kubelet.k8s.io/v1alpha1", Kind: "PodAdmissionRequest"},
		UID:      "call-1",
		Pod: &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "web", UID: "pod-1", Labels: map[string]string{"app": "web"}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
		},
		Node: podadmissionv1alpha1.NodeInfo{
			Name:     "node-a",
			Labels:   map[string]string{"zone": "a"},
			NodeInfo: corev1.NodeSystemInfo{KernelVersion: "6.1.0", OperatingSystem: "linux"},
		},
		Static:  true,
		Attempt: 3,
	}
}

// TestRequestToProto: the proto carries every field of the request, the
// pods and the node information as their JSON. (What the SDK's server
// makes of it: package grpcplugin's tests.)
func TestRequestToProto(t *testing.T) {
	req := testRequest()
	in, err := RequestToProto(req)
	require.NoError(t, err)
	assert.Equal(t, "call-1", in.GetUid())
	assert.Empty(t, in.GetOperation(), "a Create leaves the operation out")
	assert.True(t, in.GetStatic())
	assert.Equal(t, int32(3), in.GetAttempt())
	assert.Equal(t, "node-a", in.GetNode().GetName())
	assert.Equal(t, map[string]string{"zone": "a"}, in.GetNode().GetLabels())
	assert.JSONEq(t, `{"kernelVersion":"6.1.0","osImage":"","containerRuntimeVersion":"","kubeletVersion":"","kubeProxyVersion":"","operatingSystem":"linux","architecture":"","bootID":"","machineID":"","systemUUID":""}`, string(in.GetNode().GetNodeInfo()))
	assert.JSONEq(t, `{"metadata":{"namespace":"team-a","name":"web","uid":"pod-1","labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"nginx","resources":{}}]},"status":{}}`, string(in.GetPod()))
	assert.Nil(t, in.GetOldPod())
}

func TestUpdateRequestToProto(t *testing.T) {
	req := testRequest()
	req.Operation = podadmissionv1alpha1.OperationUpdate
	req.OldPod = req.Pod.DeepCopy()
	req.Pod.Spec.Containers[0].Image = "nginx:2"
	in, err := RequestToProto(req)
	require.NoError(t, err)
	assert.Equal(t, "Update", in.GetOperation())
	assert.JSONEq(t, `{"metadata":{"namespace":"team-a","name":"web","uid":"pod-1","labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"nginx","resources":{}}]},"status":{}}`, string(in.GetOldPod()))
}

func TestResponseRoundTrip(t *testing.T) {
	req := testRequest()
	for name, resp := range map[string]*podadmissionv1alpha1.PodAdmissionResponse{
		"allow":          {UID: "call-1", Allowed: true},
		"deny":           {UID: "call-1", Reason: "Nope", Message: "not today"},
		"deny and retry": {UID: "call-1", Reason: "Nope", RetryAfterSeconds: ptr.To[int32](0)},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := ResponseFromProto(&AdmitResponse{
				Uid: string(resp.UID), Allowed: resp.Allowed, Reason: resp.Reason, Message: resp.Message, RetryAfterSeconds: resp.RetryAfterSeconds,
			}, req)
			require.NoError(t, err)
			resp.TypeMeta = metav1.TypeMeta{APIVersion: "podadmission.kubelet.k8s.io/v1alpha1", Kind: "PodAdmissionResponse"}
			assert.Equal(t, resp, got)
		})
	}
}

func TestResponseFromProtoRejects(t *testing.T) {
	_, err := ResponseFromProto(&AdmitResponse{Uid: "other", Reason: "not camel", RetryAfterSeconds: ptr.To[int32](-1)}, testRequest())
	require.EqualError(t, err, `invalid response: [uid: Invalid value: "other": must echo the request's uid "call-1", `+
		`reason: Invalid value: "not camel": must be CamelCase: an upper-case letter followed by letters and digits, like "ImageNotSigned", `+
		`retryAfterSeconds: Invalid value: -1: must not be negative]`)
}
