//go:build e2e_node

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
