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

package grpcplugin

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pb "github.com/podadmission/podadmission/pkg/apis/podadmission/grpc/v1alpha1"
	podadmissionv1alpha1 "github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1"
	"github.com/podadmission/podadmission/pkg/plugin"
	"github.com/podadmission/podadmission/pkg/plugin/corev1"
)

func kubeletRequest() *podadmissionv1alpha1.PodAdmissionRequest {
	return &podadmissionv1alpha1.PodAdmissionRequest{
		TypeMeta: podadmissionv1alpha1.RequestTypeMeta(),
		UID:      "call-1",
		Pod: &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "web", UID: "pod-1", Labels: map[string]string{"app": "web"}},
			Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "nginx"}}},
		},
		Node: podadmissionv1alpha1.NodeInfo{
			Name:     "node-a",
			Labels:   map[string]string{"zone": "a"},
			NodeInfo: v1.NodeSystemInfo{KernelVersion: "6.1.0", OperatingSystem: "linux"},
		},
		Static:  true,
		Attempt: 3,
	}
}

// sameJSON says that the kubelet's value and the SDK's marshal alike.
func sameJSON(t *testing.T, kubelets, sdks any) {
	t.Helper()
	want, err := json.Marshal(kubelets)
	require.NoError(t, err)
	got, err := json.Marshal(sdks)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got))
}

// TestRequestFromTheKubelet: what the kubelet's GRPC transport sends
// (pb.RequestToProto) is the request the handler gets.
func TestRequestFromTheKubelet(t *testing.T) {
	want := kubeletRequest()
	in, err := pb.RequestToProto(want)
	require.NoError(t, err)
	assert.Empty(t, in.GetOperation(), "a Create leaves the operation out")
	got, err := requestFromProto(in)
	require.NoError(t, err)
	assert.Equal(t, corev1.UID("call-1"), got.UID)
	assert.Equal(t, plugin.OperationCreate, got.Operation, "a request without an operation is a Create")
	assert.Equal(t, "node-a", got.Node.Name)
	assert.Equal(t, map[string]string{"zone": "a"}, got.Node.Labels)
	assert.True(t, got.Static)
	assert.Equal(t, int32(3), got.Attempt)
	assert.Nil(t, got.OldPod)
	sameJSON(t, want.Pod, got.Pod)
	sameJSON(t, want.Node.NodeInfo, got.Node.NodeInfo)
	assert.Equal(t, in.GetPod(), got.PodJSON, "the pod as the kubelet sent it")
}

func TestUpdateRequestFromTheKubelet(t *testing.T) {
	want := kubeletRequest()
	want.Operation = podadmissionv1alpha1.OperationUpdate
	want.OldPod = want.Pod.DeepCopy()
	want.Pod.Spec.Containers[0].Image = "nginx:2"
	in, err := pb.RequestToProto(want)
	require.NoError(t, err)
	assert.Equal(t, "Update", in.GetOperation())
	got, err := requestFromProto(in)
	require.NoError(t, err)
	assert.Equal(t, plugin.OperationUpdate, got.Operation)
	assert.Equal(t, "nginx:2", got.Pod.Spec.Containers[0].Image)
	assert.Equal(t, "nginx", got.OldPod.Spec.Containers[0].Image)
	sameJSON(t, want.OldPod, got.OldPod)
	assert.Equal(t, in.GetOldPod(), got.OldPodJSON)
}

func TestRequestFromProtoRejects(t *testing.T) {
	for name, tc := range map[string]struct {
		in      *pb.AdmitRequest
		wantErr string
	}{
		"unknown pod field": {
			in:      &pb.AdmitRequest{Uid: "call-1", Attempt: 1, Pod: []byte(`{"spec":{"futureField":1}}`)},
			wantErr: `invalid request: pod: unknown field "spec.futureField"`,
		},
		"duplicate pod field": {
			in:      &pb.AdmitRequest{Uid: "call-1", Attempt: 1, Pod: []byte(`{"spec":{"hostNetwork":true,"hostNetwork":false}}`)},
			wantErr: `invalid request: pod: duplicate field "spec.hostNetwork"`,
		},
		"pod not JSON": {
			in:      &pb.AdmitRequest{Uid: "call-1", Attempt: 1, Pod: []byte(`pod`)},
			wantErr: `invalid request: pod: not JSON: invalid character 'p' looking for beginning of value`,
		},
		"node info not an object": {
			in:      &pb.AdmitRequest{Uid: "call-1", Attempt: 1, Pod: []byte(`{}`), Node: &pb.NodeInfo{NodeInfo: []byte(`[]`)}},
			wantErr: `invalid request: node.nodeInfo: want an object, got an array`,
		},
		"unknown old pod field": {
			in:      &pb.AdmitRequest{Uid: "call-1", Attempt: 1, Pod: []byte(`{}`), Operation: "Update", OldPod: []byte(`{"spec":{"futureField":1}}`)},
			wantErr: `invalid request: oldPod: unknown field "spec.futureField"`,
		},
		"update without the old pod": {
			in:      &pb.AdmitRequest{Uid: "call-1", Attempt: 1, Pod: []byte(`{}`), Operation: "Update"},
			wantErr: `invalid request: oldPod: Required value: an Update carries the pod as it was admitted`,
		},
		"unknown operation": {
			in:      &pb.AdmitRequest{Uid: "call-1", Attempt: 1, Pod: []byte(`{}`), Operation: "Patch"},
			wantErr: `invalid request: operation: Unsupported value: "Patch": supported values: "Create", "Update"`,
		},
		"missing fields": {
			in:      &pb.AdmitRequest{},
			wantErr: `invalid request: [uid: Required value, pod: Required value, attempt: Invalid value: 0: must be at least 1]`,
		},
	} {
		t.Run(name, func(t *testing.T) {
			req, err := requestFromProto(tc.in)
			require.EqualError(t, err, tc.wantErr)
			assert.Nil(t, req)
		})
	}
}
