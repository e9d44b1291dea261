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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1/protocol"
)

// GroupName is the API group of the pod admission plugin protocol.
const GroupName = protocol.GroupName

// SchemeGroupVersion is the group and version of the types in this package.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: protocol.Version}

// Kinds of the protocol's objects, as they appear in their kind field.
const (
	PodAdmissionRequestKind  = protocol.RequestKind
	PodAdmissionResponseKind = protocol.ResponseKind
)

// RequestTypeMeta is the apiVersion and kind of every PodAdmissionRequest.
func RequestTypeMeta() metav1.TypeMeta { return requestTypeMeta }

var requestTypeMeta = metav1.TypeMeta{APIVersion: SchemeGroupVersion.String(), Kind: PodAdmissionRequestKind}

var (
	// SchemeBuilder registers the protocol's types with a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds the protocol's types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion,
		&PodAdmissionRequest{},
		&PodAdmissionResponse{},
	)
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}
