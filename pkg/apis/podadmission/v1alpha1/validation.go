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
