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
	"fmt"
	"math"
	"time"

	"github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1/protocol"
)

// Response is a plugin's decision. Build it with Allow, Deny or
// DenyRetryAfter. The SDK adds the envelope the protocol's response has
// (apiVersion, kind and the request's uid) when it sends it.
type Response struct {
	// Allowed admits the pod as far as this plugin is concerned.
	Allowed bool
	// Reason is a CamelCase word that says why the pod was rejected, such
	// as "ImageNotSigned"; it becomes the pod's status.reason. Required
	// when Allowed is false: an upper-case ASCII letter followed by ASCII
	// letters and digits, at most 128 characters.
	Reason string
	// Message says, for a human, why the pod was rejected and what would
	// admit it; at most 1024 bytes (TruncateMessage of package protocol
	// cuts a longer one).
	Message string
	// RetryAfterSeconds asks the kubelet not to evaluate a rejected pod
	// again for this many seconds, instead of its own back-off; 0 means its
	// back-off. Ignored when Allowed is true.
	RetryAfterSeconds *int32
}

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
	seconds := int32(min(math.Ceil(after.Seconds()), math.MaxInt32))
	resp.RetryAfterSeconds = &seconds
	return resp
}

// Validate checks r with the rules the kubelet checks a response with
// (package protocol, one implementation for both): the SDK checks every
// response before it sends it, so that a plugin reports its own mistake,
// such as a rejection without a reason.
func (r *Response) Validate() error {
	errs := protocol.ValidateResponse(protocol.ResponseFields{
		Allowed:           r.Allowed,
		Reason:            r.Reason,
		Message:           r.Message,
		RetryAfterSeconds: r.RetryAfterSeconds,
	}, "")
	if len(errs) > 0 {
		return fmt.Errorf("invalid response: %w", errs.ToAggregate())
	}
	return nil
}
