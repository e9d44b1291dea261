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
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1/protocol"
)

const apiVersion = "podadmission.kubelet.k8s.io/v1alpha1"

func testRequest() *PodAdmissionRequest {
	return &PodAdmissionRequest{
		UID: "req-1",
		Pod: &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "pod-1"},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
		},
		Node:    NodeInfo{Name: "node-a", Labels: map[string]string{"zone": "a"}},
		Attempt: 1,
	}
}

func TestEncodeRequestWritesTheRequestAsItIs(t *testing.T) {
	req := testRequest()
	req.TypeMeta = RequestTypeMeta()
	data, err := EncodeRequest(req)
	require.NoError(t, err)
	assert.Contains(t, string(data), `"apiVersion":"podadmission.kubelet.k8s.io/v1alpha1"`)
	assert.Contains(t, string(data), `"kind":"PodAdmissionRequest"`)

	assert.Equal(t, req, decodeRequest(t, data))
}

// decodeRequest decodes data strictly into the kubelet's request type. (A
// plugin decodes it with the SDK: package plugin's tests.)
func decodeRequest(t *testing.T, data []byte) *PodAdmissionRequest {
	t.Helper()
	req := &PodAdmissionRequest{}
	require.NoError(t, decodeStrict(data, req, PodAdmissionRequestKind))
	return req
}

// TestCreateRequestIsWhatPluginsBuiltBeforeUpdatesAccept: the kubelet
// leaves the operation of a Create out, so a plugin whose strict decoding
// predates the field still decides on pods' first admissions.
func TestCreateRequestIsWhatPluginsBuiltBeforeUpdatesAccept(t *testing.T) {
	req := testRequest()
	req.TypeMeta = RequestTypeMeta()
	data, err := EncodeRequest(req)
	require.NoError(t, err)
	assert.NotContains(t, string(data), `"operation"`)
	assert.NotContains(t, string(data), `"oldPod"`)
}

func TestUpdateRequestRoundTrips(t *testing.T) {
	req := testRequest()
	req.TypeMeta = RequestTypeMeta()
	req.OldPod = req.Pod.DeepCopy()
	req.Pod.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debugger", Image: "busybox"}}}
	req.Operation = OperationUpdate
	data, err := EncodeRequest(req)
	require.NoError(t, err)
	assert.Contains(t, string(data), `"operation":"Update"`)
	assert.Contains(t, string(data), `"oldPod":{`)

	assert.Equal(t, req, decodeRequest(t, data))
}

func TestEncodeRequestRefusesARequestWithoutItsEnvelope(t *testing.T) {
	_, err := EncodeRequest(testRequest())
	require.EqualError(t, err, `cannot encode the request: apiVersion "" and kind "", want "podadmission.kubelet.k8s.io/v1alpha1" and "PodAdmissionRequest"`)
}

func TestDecodeResponseAccepts(t *testing.T) {
	req := testRequest()
	req.APIVersion = apiVersion
	for name, tc := range map[string]struct {
		data string
		want PodAdmissionResponse
	}{
		"allow": {
			data: `{"apiVersion":"` + apiVersion + `","kind":"PodAdmissionResponse","uid":"req-1","allowed":true}`,
			want: PodAdmissionResponse{Allowed: true},
		},
		"deny with every field": {
			data: `{"apiVersion":"` + apiVersion + `","kind":"PodAdmissionResponse","uid":"req-1","allowed":false,"reason":"ImageNotSigned","message":"image nginx is not signed","retryAfterSeconds":30}`,
			want: PodAdmissionResponse{Reason: "ImageNotSigned", Message: "image nginx is not signed", RetryAfterSeconds: ptr.To[int32](30)},
		},
		"surrounding whitespace": {
			data: "\n  {\"apiVersion\":\"" + apiVersion + "\",\"kind\":\"PodAdmissionResponse\",\"uid\":\"req-1\",\"allowed\":true}\n",
			want: PodAdmissionResponse{Allowed: true},
		},
		"message at the limit": {
			data: `{"apiVersion":"` + apiVersion + `","kind":"PodAdmissionResponse","uid":"req-1","allowed":false,"reason":"R2D2","message":"` + strings.Repeat("m", protocol.MaxMessageLength) + `"}`,
			want: PodAdmissionResponse{Reason: "R2D2", Message: strings.Repeat("m", protocol.MaxMessageLength)},
		},
	} {
		t.Run(name, func(t *testing.T) {
			resp, err := DecodeResponse([]byte(tc.data), req)
			require.NoError(t, err)
			tc.want.TypeMeta = metav1.TypeMeta{APIVersion: apiVersion, Kind: "PodAdmissionResponse"}
			tc.want.UID = "req-1"
			assert.Equal(t, &tc.want, resp)
		})
	}
}

func TestDecodeResponseRejects(t *testing.T) {
	req := testRequest()
	req.APIVersion = apiVersion
	head := `"apiVersion":"` + apiVersion + `","kind":"PodAdmissionResponse","uid":"req-1"`
	for name, tc := range map[string]struct {
		data    string
		wantErr string
	}{
		"empty": {
			data:    " \n",
			wantErr: "invalid response: empty, want a PodAdmissionResponse JSON object",
		},
		"not JSON": {
			data:    "hello, kubelet",
			wantErr: "invalid response: not JSON: invalid character 'h' looking for beginning of value",
		},
		"two objects": {
			data:    "{" + head + `,"allowed":true}{}`,
			wantErr: "invalid response: not JSON: invalid character '{' after top-level value",
		},
		"array": {
			data:    "[]",
			wantErr: "invalid response: not a PodAdmissionResponse JSON object: json: cannot unmarshal array into Go value of type v1alpha1.PodAdmissionResponse",
		},
		"wrong type of field": {
			data:    "{" + head + `,"allowed":"yes"}`,
			wantErr: "invalid response: not a PodAdmissionResponse JSON object: json: cannot unmarshal string into Go struct field PodAdmissionResponse.allowed of type bool",
		},
		"wrong apiVersion": {
			data:    `{"apiVersion":"podadmission.kubelet.k8s.io/v1","kind":"PodAdmissionResponse","uid":"req-1","allowed":true}`,
			wantErr: `invalid response: apiVersion "podadmission.kubelet.k8s.io/v1" does not match the request's "podadmission.kubelet.k8s.io/v1alpha1"`,
		},
		"missing apiVersion": {
			data:    `{"kind":"PodAdmissionResponse","uid":"req-1","allowed":true}`,
			wantErr: `invalid response: apiVersion "" does not match the request's "podadmission.kubelet.k8s.io/v1alpha1"`,
		},
		"wrong kind": {
			data:    `{"apiVersion":"` + apiVersion + `","kind":"PodAdmissionRequest","uid":"req-1","allowed":true}`,
			wantErr: `invalid response: kind "PodAdmissionRequest" must be "PodAdmissionResponse"`,
		},
		"unknown field": {
			data:    "{" + head + `,"allowed":true,"alowed":true}`,
			wantErr: `invalid response: unknown field "alowed"`,
		},
		"field with wrong case": {
			data:    "{" + head + `,"Allowed":true}`,
			wantErr: `invalid response: unknown field "Allowed"`,
		},
		"duplicate field": {
			data:    "{" + head + `,"allowed":false,"allowed":true}`,
			wantErr: `invalid response: duplicate field "allowed"`,
		},
		"many unknown fields": {
			data:    "{" + head + `,"allowed":true,"a":1,"b":1,"c":1,"d":1,"e":1,"f":1,"g":1}`,
			wantErr: `invalid response: unknown field "a", unknown field "b", unknown field "c", unknown field "d", unknown field "e", and 2 more`,
		},
		"uid not echoed": {
			data:    `{"apiVersion":"` + apiVersion + `","kind":"PodAdmissionResponse","uid":"other","allowed":true}`,
			wantErr: `invalid response: uid: Invalid value: "other": must echo the request's uid "req-1"`,
		},
		"uid missing": {
			data:    `{"apiVersion":"` + apiVersion + `","kind":"PodAdmissionResponse","allowed":true}`,
			wantErr: `invalid response: uid: Invalid value: "": must echo the request's uid "req-1"`,
		},
		"deny without reason": {
			data:    "{" + head + `,"allowed":false,"message":"no"}`,
			wantErr: "invalid response: reason: Required value: required when allowed is false",
		},
		"allowed missing means deny and needs a reason": {
			data:    "{" + head + `}`,
			wantErr: "invalid response: reason: Required value: required when allowed is false",
		},
		"reason not CamelCase": {
			data:    "{" + head + `,"allowed":false,"reason":"image not signed"}`,
			wantErr: `invalid response: reason: Invalid value: "image not signed": must be CamelCase: an upper-case letter followed by letters and digits, like "ImageNotSigned"`,
		},
		"reason lower case": {
			data:    "{" + head + `,"allowed":false,"reason":"imageNotSigned"}`,
			wantErr: `invalid response: reason: Invalid value: "imageNotSigned": must be CamelCase: an upper-case letter followed by letters and digits, like "ImageNotSigned"`,
		},
		"reason too long": {
			data:    "{" + head + `,"allowed":false,"reason":"` + strings.Repeat("A", protocol.MaxReasonLength+1) + `"}`,
			wantErr: "invalid response: reason: Too long: may not be more than 128 bytes",
		},
		"message too long": {
			data:    "{" + head + `,"allowed":false,"reason":"No","message":"` + strings.Repeat("m", protocol.MaxMessageLength+1) + `"}`,
			wantErr: "invalid response: message: Too long: may not be more than 1024 bytes",
		},
		"negative retryAfterSeconds": {
			data:    "{" + head + `,"allowed":false,"reason":"No","retryAfterSeconds":-1}`,
			wantErr: "invalid response: retryAfterSeconds: Invalid value: -1: must not be negative",
		},
		"several faults": {
			data:    `{"apiVersion":"` + apiVersion + `","kind":"PodAdmissionResponse","uid":"x","allowed":false,"retryAfterSeconds":-5}`,
			wantErr: `invalid response: [uid: Invalid value: "x": must echo the request's uid "req-1", reason: Required value: required when allowed is false, retryAfterSeconds: Invalid value: -5: must not be negative]`,
		},
		"long values are shortened": {
			data:    `{"apiVersion":"` + strings.Repeat("v", 100) + `","kind":"PodAdmissionResponse","uid":"req-1","allowed":true}`,
			wantErr: `invalid response: apiVersion "` + strings.Repeat("v", 64) + `..." does not match the request's "podadmission.kubelet.k8s.io/v1alpha1"`,
		},
	} {
		t.Run(name, func(t *testing.T) {
			resp, err := DecodeResponse([]byte(tc.data), req)
			require.EqualError(t, err, tc.wantErr)
			assert.Nil(t, resp)
		})
	}
}

func TestDecodeResponseWantsThisVersionForRequestWithoutTypeMeta(t *testing.T) {
	req := testRequest()
	_, err := DecodeResponse([]byte(`{"apiVersion":"`+apiVersion+`","kind":"PodAdmissionResponse","uid":"req-1","allowed":true}`), req)
	require.NoError(t, err)
}
