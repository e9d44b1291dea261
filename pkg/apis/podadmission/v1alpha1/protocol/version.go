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

package protocol

// The protocol's group, version and kinds, as they appear in the
// apiVersion and kind fields of its JSON form.
const (
	// GroupName is the API group of the protocol.
	GroupName = "podadmission.kubelet.k8s.io"
	// Version is the protocol's version.
	Version = "v1alpha1"
	// APIVersion is the apiVersion of every request and response.
	APIVersion = GroupName + "/" + Version

	// RequestKind is the kind of a request.
	RequestKind = "PodAdmissionRequest"
	// ResponseKind is the kind of a response.
	ResponseKind = "PodAdmissionResponse"
)

// Operation says what a request is for.
type Operation string

const (
	// OperationCreate is a pod's first admission: nothing of it runs yet.
	// The kubelet leaves the operation of a Create out, so that plugins
	// built before the field existed keep deciding on pods' first
	// admissions; decoding sets it.
	OperationCreate Operation = "Create"
	// OperationUpdate is a change of an admitted pod that would make the
	// kubelet start a container the plugins have not admitted.
	OperationUpdate Operation = "Update"
)
