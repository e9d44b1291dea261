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

// Package corepod gives a plugin the k8s.io/api/core/v1 Pod of a request,
// for a plugin that hands the pod to Kubernetes libraries (such as the
// policy evaluator of k8s.io/pod-security-admission, which takes
// *metav1.ObjectMeta and *corev1.PodSpec). It converts the SDK's Pod
// (Request.Pod and OldPod) field by field, with functions that
// build/podtypes-gen generates from k8s.io/api/core/v1 along with the
// SDK's types: no reflection, and no second decode of the JSON the kubelet
// sent.
//
// Nothing is lost on the way. The SDK decoded its Pod from that JSON as
// strictly as the kubelet decodes its own objects (sigs.k8s.io/json's
// UnmarshalStrict), into types with upstream's fields, and the conversion
// gives the Pod that decoding the same JSON into k8s.io/api/core/v1's Pod
// gives, down to nil and empty lists, the formats of quantities and the
// zones of times. The package's tests check that on random pods that set
// every field. The Pod shares no memory with the SDK's: a plugin may
// change it.
//
// The price is what the SDK avoids (docs/plugins.md): importing this
// package links k8s.io/api and k8s.io/apimachinery, about 200 packages
// whose initialisation runs at every start of an Exec plugin. A GRPC
// plugin pays that once.
package corepod

import (
	"errors"

	corev1 "k8s.io/api/core/v1"

	"github.com/podadmission/podadmission/pkg/plugin"
)

// Pod returns the pod of req as k8s.io/api/core/v1's Pod. It fails when
// req carries no pod, which a request the SDK decoded always does.
func Pod(req *plugin.Request) (*corev1.Pod, error) {
	if req.Pod == nil {
		return nil, errors.New("pod: the request carries no pod (plugin.Request.Pod)")
	}
	return convert("pod", req.Pod)
}

// OldPod returns the old pod of req, an Update's, as k8s.io/api/core/v1's
// Pod; nil for a Create.
func OldPod(req *plugin.Request) (*corev1.Pod, error) {
	if req.OldPod == nil {
		return nil, nil
	}
	return convert("oldPod", req.OldPod)
}
