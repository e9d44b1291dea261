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
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	utiljson "sigs.k8s.io/json"

	"github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1/protocol"
)

// The codec turns requests and responses into JSON and back. Decoding is
// strict, like the kubelet's decoding of its own configuration: a field the
// protocol does not define, a duplicate field, a wrong apiVersion or kind,
// or a value that breaks a rule is an error, never silently dropped, so a
// plugin that misspells "allowed" fails loudly instead of rejecting every pod
// for no stated reason.

// EncodeRequest returns req as JSON, as it is: the caller (the kubelet's
// plugin chain) sets its apiVersion and kind to RequestTypeMeta, and a
// request without them is an error rather than a request no plugin accepts.
func EncodeRequest(req *PodAdmissionRequest) ([]byte, error) {
	if req.TypeMeta != RequestTypeMeta() {
		return nil, fmt.Errorf("cannot encode the request: apiVersion %q and kind %q, want %q and %q",
			req.APIVersion, req.Kind, SchemeGroupVersion.String(), PodAdmissionRequestKind)
	}
	return json.Marshal(req)
}

// DecodeResponse decodes data strictly as the answer to req: its apiVersion
// must be the request's, its kind PodAdmissionResponse, and it must pass
// ValidateResponse.
func DecodeResponse(data []byte, req *PodAdmissionRequest) (*PodAdmissionResponse, error) {
	resp := &PodAdmissionResponse{}
	if err := decodeStrict(data, resp, PodAdmissionResponseKind); err != nil {
		return nil, fmt.Errorf("invalid response: %w", err)
	}
	wantAPIVersion := req.APIVersion
	if wantAPIVersion == "" {
		wantAPIVersion = SchemeGroupVersion.String()
	}
	if resp.APIVersion != wantAPIVersion {
		return nil, fmt.Errorf("invalid response: apiVersion %s does not match the request's %q", protocol.Quote(resp.APIVersion), wantAPIVersion)
	}
	if resp.Kind != PodAdmissionResponseKind {
		return nil, fmt.Errorf("invalid response: kind %s must be %q", protocol.Quote(resp.Kind), PodAdmissionResponseKind)
	}
	if errs := ValidateResponse(resp, req); len(errs) > 0 {
		return nil, fmt.Errorf("invalid response: %w", errs.ToAggregate())
	}
	return resp, nil
}

// decodeStrict unmarshals data, one JSON object, into obj: case-sensitively,
// failing on unknown or duplicate fields. kind names the object in errors.
func decodeStrict(data []byte, obj any, kind string) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return fmt.Errorf("empty, want a %s JSON object", kind)
	}
	strictErrs, err := utiljson.UnmarshalStrict(data, obj)
	if err != nil {
		if ok, _ := utiljson.SyntaxErrorOffset(err); ok {
			return fmt.Errorf("not JSON: %w", err)
		}
		return fmt.Errorf("not a %s JSON object: %w", kind, err)
	}
	if len(strictErrs) > 0 {
		return joinErrors(strictErrs)
	}
	return nil
}

// joinErrors joins errs on one line, keeping at most a few of them, since
// they end up in pod status messages.
func joinErrors(errs []error) error {
	const maxErrors = 5
	msgs := make([]string, 0, maxErrors+1)
	for i, err := range errs {
		if i == maxErrors {
			msgs = append(msgs, fmt.Sprintf("and %d more", len(errs)-maxErrors))
			break
		}
		msgs = append(msgs, err.Error())
	}
	return errors.New(strings.Join(msgs, ", "))
}
