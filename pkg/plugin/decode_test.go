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

package plugin

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	podadmissionv1alpha1 "github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1"
	"github.com/podadmission/podadmission/pkg/plugin/corev1"
)

const apiVersion = "podadmission.kubelet.k8s.io/v1alpha1"

// kubeletRequest is a request as the kubelet builds it.
func kubeletRequest() *podadmissionv1alpha1.PodAdmissionRequest {
	return &podadmissionv1alpha1.PodAdmissionRequest{
		TypeMeta: podadmissionv1alpha1.RequestTypeMeta(),
		UID:      "req-1",
		Pod: &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "pod-1", Labels: map[string]string{"app": "web"}},
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

// decodeKubeletRequest encodes req with the kubelet's codec and decodes
// it as a plugin does.
func decodeKubeletRequest(t *testing.T, req *podadmissionv1alpha1.PodAdmissionRequest) (*Request, []byte) {
	t.Helper()
	data, err := podadmissionv1alpha1.EncodeRequest(req)
	require.NoError(t, err)
	got, err := DecodeRequest(data)
	require.NoError(t, err)
	return got, data
}

// assertSameJSON says that got, one of the SDK's types, marshals to the
// JSON want, the kubelet's, does.
func assertSameJSON(t *testing.T, want, got any) {
	t.Helper()
	w, err := json.Marshal(want)
	require.NoError(t, err)
	g, err := json.Marshal(got)
	require.NoError(t, err)
	assert.Equal(t, string(w), string(g))
}

func TestDecodeRequestOfTheKubelet(t *testing.T) {
	want := kubeletRequest()
	got, data := decodeKubeletRequest(t, want)
	assert.Equal(t, corev1.UID("req-1"), got.UID)
	assert.Equal(t, OperationCreate, got.Operation, "a request without an operation is a Create")
	assert.Nil(t, got.OldPod)
	assert.Nil(t, got.OldPodJSON)
	assert.Equal(t, "node-a", got.Node.Name)
	assert.Equal(t, map[string]string{"zone": "a"}, got.Node.Labels)
	assert.True(t, got.Static)
	assert.Equal(t, int32(3), got.Attempt)
	assertSameJSON(t, want.Pod, got.Pod)
	assertSameJSON(t, want.Node.NodeInfo, got.Node.NodeInfo)
	podJSON, err := json.Marshal(want.Pod)
	require.NoError(t, err)
	assert.Equal(t, string(podJSON), string(got.PodJSON), "the pod as the kubelet sent it")
	assert.Contains(t, string(data), string(got.PodJSON))
}

func TestDecodeUpdateRequestOfTheKubelet(t *testing.T) {
	want := kubeletRequest()
	want.OldPod = want.Pod.DeepCopy()
	want.Pod.Spec.EphemeralContainers = []v1.EphemeralContainer{{EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: "debugger", Image: "busybox"}}}
	want.Operation = podadmissionv1alpha1.OperationUpdate
	got, _ := decodeKubeletRequest(t, want)
	assert.Equal(t, OperationUpdate, got.Operation)
	assert.Equal(t, "busybox", got.Pod.Spec.EphemeralContainers[0].Image)
	assertSameJSON(t, want.OldPod, got.OldPod)
	oldJSON, err := json.Marshal(want.OldPod)
	require.NoError(t, err)
	assert.Equal(t, string(oldJSON), string(got.OldPodJSON))
}

func TestDecodeRequestRejects(t *testing.T) {
	const head = `"apiVersion":"` + apiVersion + `","kind":"PodAdmissionRequest"`
	for name, tc := range map[string]struct {
		data    string
		wantErr string
	}{
		"empty":                        {data: "", wantErr: "invalid request: empty, want a PodAdmissionRequest JSON object"},
		"blank":                        {data: " \n", wantErr: "invalid request: empty, want a PodAdmissionRequest JSON object"},
		"not JSON":                     {data: "{", wantErr: "invalid request: not JSON: unexpected end of JSON input"},
		"trailing data":                {data: "{" + head + `,"uid":"req-1","pod":{},"attempt":1}{}`, wantErr: "invalid request: not JSON: invalid character '{' after top-level value"},
		"not an object":                {data: "[]", wantErr: "invalid request: want an object, got an array"},
		"other version":                {data: `{"apiVersion":"podadmission.kubelet.k8s.io/v1","kind":"PodAdmissionRequest","uid":"req-1","pod":{},"attempt":1}`, wantErr: `invalid request: apiVersion "podadmission.kubelet.k8s.io/v1" is not supported, want "podadmission.kubelet.k8s.io/v1alpha1"`},
		"wrong kind":                   {data: `{"apiVersion":"` + apiVersion + `","kind":"PodAdmissionResponse","uid":"req-1","pod":{},"attempt":1}`, wantErr: `invalid request: kind "PodAdmissionResponse" must be "PodAdmissionRequest"`},
		"unknown field":                {data: "{" + head + `,"uid":"req-1","pod":{},"attempt":1,"extra":1}`, wantErr: `invalid request: unknown field "extra"`},
		"wrongly-cased field":          {data: "{" + head + `,"UID":"req-1","pod":{},"attempt":1}`, wantErr: `invalid request: unknown field "UID"`},
		"duplicate field":              {data: "{" + head + `,"uid":"req-1","uid":"req-2","pod":{},"attempt":1}`, wantErr: `invalid request: duplicate field "uid"`},
		"unknown field in pod":         {data: "{" + head + `,"uid":"req-1","pod":{"spec":{"futureField":true}},"attempt":1}`, wantErr: `invalid request: unknown field "pod.spec.futureField"`},
		"unknown field in a container": {data: "{" + head + `,"uid":"req-1","pod":{"spec":{"containers":[{"imagePulPolicy":"Always"}]}},"attempt":1}`, wantErr: `invalid request: unknown field "pod.spec.containers[0].imagePulPolicy"`},
		"wrong type in pod":            {data: "{" + head + `,"uid":"req-1","pod":{"spec":{"hostNetwork":"yes"}},"attempt":1}`, wantErr: `invalid request: pod.spec.hostNetwork: want a boolean, got a string`},
		"pod not an object":            {data: "{" + head + `,"uid":"req-1","pod":"web","attempt":1}`, wantErr: `invalid request: pod: want an object, got a string`},
		"invalid JSON in pod":          {data: "{" + head + `,"uid":"req-1","pod":{"spec":{"hostNetwork":tru}},"attempt":1}`, wantErr: "invalid request: pod: not JSON: invalid character '}' in literal true (expecting 'e')"},
		"unknown field in node":        {data: "{" + head + `,"uid":"req-1","pod":{},"node":{"name":"a","zone":"b"},"attempt":1}`, wantErr: `invalid request: unknown field "node.zone"`},
		"duplicate node label":         {data: "{" + head + `,"uid":"req-1","pod":{},"node":{"labels":{"a":"1","a":"2"}},"attempt":1}`, wantErr: `invalid request: duplicate field "node.labels.a"`},
		"unknown field in node info":   {data: "{" + head + `,"uid":"req-1","pod":{},"node":{"nodeInfo":{"kernel":"6"}},"attempt":1}`, wantErr: `invalid request: unknown field "node.nodeInfo.kernel"`},
		"attempt not an integer":       {data: "{" + head + `,"uid":"req-1","pod":{},"attempt":1.5}`, wantErr: "invalid request: attempt: want a 32-bit integer, got 1.5"},
		"missing fields":               {data: "{" + head + "}", wantErr: `invalid request: [uid: Required value, pod: Required value, attempt: Invalid value: 0: must be at least 1]`},
		"null pod":                     {data: "{" + head + `,"uid":"req-1","pod":null,"attempt":1}`, wantErr: `invalid request: pod: Required value`},
		"unknown operation":            {data: "{" + head + `,"uid":"req-1","pod":{},"attempt":1,"operation":"Delete"}`, wantErr: `invalid request: operation: Unsupported value: "Delete": supported values: "Create", "Update"`},
		"update without the old pod":   {data: "{" + head + `,"uid":"req-1","pod":{},"attempt":1,"operation":"Update"}`, wantErr: `invalid request: oldPod: Required value: an Update carries the pod as it was admitted`},
		"update of another pod":        {data: "{" + head + `,"uid":"req-1","pod":{"metadata":{"uid":"p1"}},"oldPod":{"metadata":{"uid":"p2"}},"attempt":1,"operation":"Update"}`, wantErr: `invalid request: oldPod.metadata.uid: Invalid value: "p2": must be the pod's uid "p1"`},
		"create with an old pod":       {data: "{" + head + `,"uid":"req-1","pod":{},"oldPod":{},"attempt":1}`, wantErr: `invalid request: oldPod: Forbidden: only an Update carries the pod as it was admitted`},
		"unknown field in the old pod": {data: "{" + head + `,"uid":"req-1","pod":{},"oldPod":{"spec":{"futureField":true}},"attempt":1,"operation":"Update"}`, wantErr: `invalid request: unknown field "oldPod.spec.futureField"`},
	} {
		t.Run(name, func(t *testing.T) {
			req, err := DecodeRequest([]byte(tc.data))
			require.EqualError(t, err, tc.wantErr)
			assert.Nil(t, req)
		})
	}
}

func TestResponseValidate(t *testing.T) {
	negative := int32(-1)
	for name, tc := range map[string]struct {
		resp    *Response
		wantErr string
	}{
		"allow":                {resp: Allow()},
		"deny":                 {resp: Deny("Nope", "not today")},
		"deny without reason":  {resp: Deny("", "no"), wantErr: "invalid response: reason: Required value: required when allowed is false"},
		"reason not CamelCase": {resp: Deny("not camel", ""), wantErr: `invalid response: reason: Invalid value: "not camel": must be CamelCase: an upper-case letter followed by letters and digits, like "ImageNotSigned"`},
		"message too long":     {resp: Deny("Nope", strings.Repeat("m", 1025)), wantErr: "invalid response: message: Too long: may not be more than 1024 bytes"},
		"negative retry":       {resp: &Response{Reason: "Nope", RetryAfterSeconds: &negative}, wantErr: "invalid response: retryAfterSeconds: Invalid value: -1: must not be negative"},
	} {
		t.Run(name, func(t *testing.T) {
			err := tc.resp.Validate()
			if tc.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			assert.EqualError(t, err, tc.wantErr)
		})
	}
}
