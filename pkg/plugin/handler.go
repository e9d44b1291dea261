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
	"context"
	"errors"
	"math"
	"time"

	"k8s.io/utils/ptr"

	podadmissionv1alpha1 "github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1"
)

// Request is what the kubelet asks: may this pod start on this node?
type Request = podadmissionv1alpha1.PodAdmissionRequest

// Response is a plugin's decision. Build it with Allow, Deny or
// DenyRetryAfter.
type Response = podadmissionv1alpha1.PodAdmissionResponse

// Handler decides on one request. It returns a Response, or an error when it
// cannot decide; the error is reported to the kubelet, which applies the
// plugin's failurePolicy. ctx ends when the kubelet gives up on the call.
// A GRPC plugin calls its handler concurrently.
type Handler = func(ctx context.Context, req *Request) (*Response, error)

// Allow admits the pod.
func Allow() *Response {
	return &Response{Allowed: true}
}

// Deny rejects the pod. reason is a CamelCase word (it becomes the pod's
// status.reason); message tells a human why and what would admit the pod.
func Deny(reason, message string) *Response {
	return &Response{Reason: reason, Message: message}
}

// DenyRetryAfter rejects the pod and asks the kubelet not to evaluate it
// again for after (rounded up to whole seconds), unless the plugin asks for
// an earlier evaluation itself. An after of 0 or less is Deny: the kubelet
// evaluates the pod again after its own back-off.
func DenyRetryAfter(reason, message string, after time.Duration) *Response {
	resp := Deny(reason, message)
	if after <= 0 {
		return resp
	}
	seconds := math.Ceil(after.Seconds())
	resp.RetryAfterSeconds = ptr.To(int32(min(seconds, math.MaxInt32)))
	return resp
}

var errNoResponse = errors.New("handler returned neither a response nor an error")

// Respond runs h on req and returns its response ready to send: a copy with
// the envelope (apiVersion, kind, uid) filled in from req. RunExec answers
// with it, and so does the GRPC server of package grpcplugin.
func Respond(ctx context.Context, h Handler, req *Request) (*Response, error) {
	resp, err := h(ctx, req)
	if err != nil {
		return nil, err
	}
	if resp == nil {
		return nil, errNoResponse
	}
	r := *resp
	r.APIVersion = req.APIVersion
	r.Kind = podadmissionv1alpha1.PodAdmissionResponseKind
	r.UID = req.UID
	return &r, nil
}
