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
// *metav1.ObjectMeta and *corev1.PodSpec). It decodes the pod from the JSON
// the kubelet sent (Request.PodJSON and OldPodJSON, which the SDK keeps),
// as strictly as the SDK decodes its own Pod: sigs.k8s.io/json's
// UnmarshalStrict, the kubelet's own decoding. It does not convert the
// SDK's Pod: what the kubelet sent is decoded once per type, by the
// decoders of each type.
//
// The price is what the SDK avoids (docs/plugins.md): importing this
// package links k8s.io/api and k8s.io/apimachinery, about 200 packages
// whose initialisation runs at every start of an Exec plugin, and the
// reflection-based decode builds the JSON field tables of every type the
// Pod reaches in every new process. A GRPC plugin pays that once.
package corepod

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	utiljson "sigs.k8s.io/json"

	"github.com/podadmission/podadmission/pkg/plugin"
)

// Pod returns the pod of req as k8s.io/api/core/v1's Pod. It fails when
// req carries no pod JSON, as a request built in Go rather than decoded by
// the SDK (a test's: build it with plugin.DecodeRequest).
func Pod(req *plugin.Request) (*corev1.Pod, error) {
	if req.PodJSON == nil {
		return nil, errors.New("pod: the request carries no pod JSON (plugin.Request.PodJSON)")
	}
	return decode("pod", req.PodJSON)
}

// OldPod returns the old pod of req, an Update's, as k8s.io/api/core/v1's
// Pod; nil for a Create.
func OldPod(req *plugin.Request) (*corev1.Pod, error) {
	if req.OldPodJSON == nil {
		if req.OldPod != nil {
			return nil, errors.New("oldPod: the request carries no pod JSON (plugin.Request.OldPodJSON)")
		}
		return nil, nil
	}
	return decode("oldPod", req.OldPodJSON)
}

func decode(field string, data []byte) (*corev1.Pod, error) {
	pod := &corev1.Pod{}
	strictErrs, err := utiljson.UnmarshalStrict(data, pod)
	if err == nil && len(strictErrs) > 0 {
		err = errors.Join(strictErrs...)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", field, err)
	}
	return pod, nil
}
