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
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1/protocol"
)

// ValidateResponse checks the fields of resp, a plugin's answer to req, other
// than apiVersion and kind (which only exist in the JSON form and are checked
// by DecodeResponse), with the protocol's rules (package protocol), which
// the SDK applies too.
func ValidateResponse(resp *PodAdmissionResponse, req *PodAdmissionRequest) field.ErrorList {
	return protocol.ValidateResponse(protocol.ResponseFields{
		UID:               string(resp.UID),
		Allowed:           resp.Allowed,
		Reason:            resp.Reason,
		Message:           resp.Message,
		RetryAfterSeconds: resp.RetryAfterSeconds,
	}, string(req.UID))
}

// ValidateRequest checks the fields of a request other than apiVersion and
// kind. The kubelet always sends valid requests; plugins check them so that
// a plugin run by hand with a hand-written request fails clearly.
func ValidateRequest(req *PodAdmissionRequest) field.ErrorList {
	var errs field.ErrorList
	if req.UID == "" {
		errs = append(errs, field.Required(field.NewPath("uid"), ""))
	}
	if req.Pod == nil {
		errs = append(errs, field.Required(field.NewPath("pod"), ""))
	}
	if req.Attempt < 1 {
		errs = append(errs, field.Invalid(field.NewPath("attempt"), req.Attempt, "must be at least 1"))
	}
	oldPodPath := field.NewPath("oldPod")
	switch req.Operation {
	case "", OperationCreate:
		if req.OldPod != nil {
			errs = append(errs, field.Forbidden(oldPodPath, "only an Update carries the pod as it was admitted"))
		}
	case OperationUpdate:
		switch {
		case req.OldPod == nil:
			errs = append(errs, field.Required(oldPodPath, "an Update carries the pod as it was admitted"))
		case req.Pod != nil && req.OldPod.UID != req.Pod.UID:
			errs = append(errs, field.Invalid(oldPodPath.Child("metadata", "uid"), protocol.Shorten(string(req.OldPod.UID)), "must be the pod's uid "+protocol.Quote(string(req.Pod.UID))))
		}
	default:
		errs = append(errs, field.NotSupported(field.NewPath("operation"), protocol.Shorten(string(req.Operation)), []Operation{OperationCreate, OperationUpdate}))
	}
	return errs
}
