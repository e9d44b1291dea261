//go:build e2e_node

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

package framework

import (
	corev1 "k8s.io/api/core/v1"

	podadmissionv1alpha1 "github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1"
)

// PodAdmittedIs is true once the pod's PodAdmitted condition
// (podadmissionv1alpha1.PodAdmitted, which the kubelet owns) has status.
func PodAdmittedIs(status corev1.ConditionStatus) PodCondition {
	return func(p *corev1.Pod) bool {
		c := podadmissionv1alpha1.PodAdmittedCondition(&p.Status)
		return c != nil && c.Status == status
	}
}
