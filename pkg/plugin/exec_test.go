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
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	podadmissionv1alpha1 "github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1"
)

const testRequestJSON = `{"apiVersion":"podadmission.kubelet.k8s.io/v1alpha1","kind":"PodAdmissionRequest","uid":"call-1",` +
	`"pod":{"metadata":{"namespace":"team-a","name":"web","uid":"pod-1"},"spec":{"hostNetwork":true}},"node":{"name":"node-a"},"static":false,"attempt":1}`

func handleExec(t *testing.T, h Handler, in string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := HandleExec(context.Background(), h, strings.NewReader(in), &out)
	return out.String(), err
}

func TestHandleExecAnswers(t *testing.T) {
	var seen *Request
	out, err := handleExec(t, func(_ context.Context, req *Request) (*Response, error) {
		seen = req
		return DenyRetryAfter("HostNetwork", "no host network here", 90*time.Second), nil
	}, testRequestJSON)
	require.NoError(t, err)
	assert.Equal(t, `{"kind":"PodAdmissionResponse","apiVersion":"podadmission.kubelet.k8s.io/v1alpha1","uid":"call-1","allowed":false,"reason":"HostNetwork","message":"no host network here","retryAfterSeconds":90}`+"\n", out)
	require.NotNil(t, seen)
	assert.Equal(t, "web", seen.Pod.Name)
	assert.True(t, seen.Pod.Spec.HostNetwork)
}

// TestHandleExecSetsTheEnvelope: the response echoes each request's uid,
// also when a handler returns the same response every time.
func TestHandleExecSetsTheEnvelope(t *testing.T) {
	shared := Allow()
	h := func(context.Context, *Request) (*Response, error) { return shared, nil }
	for _, uid := range []string{"call-1", "call-2"} {
		out, err := handleExec(t, h, strings.Replace(testRequestJSON, `"uid":"call-1"`, `"uid":"`+uid+`"`, 1))
		require.NoError(t, err)
		assert.Equal(t, `{"kind":"PodAdmissionResponse","apiVersion":"podadmission.kubelet.k8s.io/v1alpha1","uid":"`+uid+`","allowed":true}`+"\n", out)
	}
	assert.Equal(t, Allow(), shared, "the handler's response is not modified")
}

// TestHandleExecAnswersWhatTheKubeletAccepts: the response is what the
// kubelet's decoding of a response (v1alpha1.DecodeResponse) accepts.
func TestHandleExecAnswersWhatTheKubeletAccepts(t *testing.T) {
	for name, resp := range map[string]*Response{
		"allow":          Allow(),
		"deny":           Deny("HostNetwork", "no host network here: <é> & \"quotes\""),
		"deny and retry": DenyRetryAfter("Later", "", time.Hour),
	} {
		t.Run(name, func(t *testing.T) {
			out, err := handleExec(t, func(context.Context, *Request) (*Response, error) { return resp, nil }, testRequestJSON)
			require.NoError(t, err)
			got, err := podadmissionv1alpha1.DecodeResponse([]byte(out), &podadmissionv1alpha1.PodAdmissionRequest{
				TypeMeta: podadmissionv1alpha1.RequestTypeMeta(), UID: "call-1",
			})
			require.NoError(t, err)
			assert.Equal(t, resp.Allowed, got.Allowed)
			assert.Equal(t, resp.Reason, got.Reason)
			assert.Equal(t, resp.Message, got.Message)
			assert.Equal(t, resp.RetryAfterSeconds, got.RetryAfterSeconds)
		})
	}
}

func TestHandleExecFails(t *testing.T) {
	allow := func(context.Context, *Request) (*Response, error) { return Allow(), nil }
	for name, tc := range map[string]struct {
		h       Handler
		in      string
		wantErr string
	}{
		"invalid request": {
			h:       allow,
			in:      `{"apiVersion":"podadmission.kubelet.k8s.io/v1alpha1","kind":"PodAdmissionRequest","uid":"call-1","pod":{},"attempt":1,"extra":1}`,
			wantErr: `invalid request: unknown field "extra"`,
		},
		"no request": {
			h:       allow,
			in:      "",
			wantErr: "invalid request: empty, want a PodAdmissionRequest JSON object",
		},
		"request too large": {
			h:       allow,
			in:      `{"uid":"` + strings.Repeat("x", 16<<20) + `"}`,
			wantErr: "invalid request: larger than 16 MiB",
		},
		"handler error": {
			h: func(context.Context, *Request) (*Response, error) {
				return nil, errors.New("policy server unreachable")
			},
			in:      testRequestJSON,
			wantErr: "policy server unreachable",
		},
		"no response": {
			h:       func(context.Context, *Request) (*Response, error) { return nil, nil },
			in:      testRequestJSON,
			wantErr: "handler returned neither a response nor an error",
		},
		"deny without reason": {
			h:       func(context.Context, *Request) (*Response, error) { return Deny("", "no"), nil },
			in:      testRequestJSON,
			wantErr: "invalid response: reason: Required value: required when allowed is false",
		},
		"reason not CamelCase": {
			h:       func(context.Context, *Request) (*Response, error) { return Deny("host network", "no"), nil },
			in:      testRequestJSON,
			wantErr: `invalid response: reason: Invalid value: "host network": must be CamelCase: an upper-case letter followed by letters and digits, like "ImageNotSigned"`,
		},
	} {
		t.Run(name, func(t *testing.T) {
			out, err := handleExec(t, tc.h, tc.in)
			require.EqualError(t, err, tc.wantErr)
			assert.Empty(t, out, "nothing is written when there is no valid response")
		})
	}
}

// TestEncodeResponseIsEncodingJSONs: the response written out is, byte for
// byte, encoding/json's marshalling of the kubelet's PodAdmissionResponse.
func TestEncodeResponseIsEncodingJSONs(t *testing.T) {
	for name, resp := range map[string]*Response{
		"allow":         Allow(),
		"allow, reason": {Allowed: true, Reason: "Fine"},
		"deny":          Deny("HostNetwork", "no host network here"),
		"escapes":       Deny("Nope", "<script>&\"quotes\"\\ \n\t\u2028 é \x00 \xff"),
		"retry":         DenyRetryAfter("Later", "in a minute", time.Minute),
		"retry 0":       {Reason: "Later", RetryAfterSeconds: ptr.To[int32](0)},
		"no message":    Deny("Nope", ""),
		"largest retry": DenyRetryAfter("Later", "", math.MaxInt64),
	} {
		t.Run(name, func(t *testing.T) {
			const uid = "call-1 <&>"
			got, err := encodeResponse(resp, uid)
			require.NoError(t, err)
			want, err := json.Marshal(&podadmissionv1alpha1.PodAdmissionResponse{
				TypeMeta: metav1.TypeMeta{APIVersion: "podadmission.kubelet.k8s.io/v1alpha1", Kind: "PodAdmissionResponse"},
				UID:      uid, Allowed: resp.Allowed, Reason: resp.Reason, Message: resp.Message, RetryAfterSeconds: resp.RetryAfterSeconds,
			})
			require.NoError(t, err)
			assert.Equal(t, string(want), string(got))
		})
	}
}

func TestDenyRetryAfterRoundsUpToSeconds(t *testing.T) {
	for _, after := range []time.Duration{0, -time.Second} {
		assert.Nil(t, DenyRetryAfter("R", "m", after).RetryAfterSeconds, "after %v: no hint, the kubelet's back-off", after)
	}
	for after, want := range map[time.Duration]int32{
		time.Millisecond:        1,
		1500 * time.Millisecond: 2,
		time.Minute:             60,
		math.MaxInt64:           math.MaxInt32,
	} {
		assert.Equal(t, ptr.To(want), DenyRetryAfter("R", "m", after).RetryAfterSeconds, "after %v", after)
	}
}
