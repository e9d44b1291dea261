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

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1/protocol"
)

// Validate checks r as the SDK checks every request before it calls a
// handler (an empty Operation is a Create). The kubelet sends valid
// requests; the checks make a plugin run by hand with a hand-written
// request fail clearly.
func (r *Request) Validate() error {
	if errs := r.validate(); len(errs) > 0 {
		return fmt.Errorf("invalid request: %w", errs.ToAggregate())
	}
	return nil
}

func (r *Request) validate() field.ErrorList {
	var errs field.ErrorList
	if r.UID == "" {
		errs = append(errs, field.Required(field.NewPath("uid"), ""))
	}
	if r.Pod == nil {
		errs = append(errs, field.Required(field.NewPath("pod"), ""))
	}
	if r.Attempt < 1 {
		errs = append(errs, field.Invalid(field.NewPath("attempt"), r.Attempt, "must be at least 1"))
	}
	oldPodPath := field.NewPath("oldPod")
	switch r.Operation {
	case "", OperationCreate:
		if r.OldPod != nil {
			errs = append(errs, field.Forbidden(oldPodPath, "only an Update carries the pod as it was admitted"))
		}
	case OperationUpdate:
		switch {
		case r.OldPod == nil:
			errs = append(errs, field.Required(oldPodPath, "an Update carries the pod as it was admitted"))
		case r.Pod != nil && r.OldPod.UID != r.Pod.UID:
			errs = append(errs, field.Invalid(oldPodPath.Child("metadata", "uid"), protocol.Shorten(string(r.OldPod.UID)), "must be the pod's uid "+protocol.Quote(string(r.Pod.UID))))
		}
	default:
		errs = append(errs, field.NotSupported(field.NewPath("operation"), protocol.Shorten(string(r.Operation)), []Operation{OperationCreate, OperationUpdate}))
	}
	return errs
}
