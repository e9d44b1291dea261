//go:build e2e_node

package framework

import (
	corev1 "k8s.io/api/core/v1"
)

// PodAdmittedCondition is the kubelet-owned pod condition of the patch
// series: False while a plugin holds the pod (with the pod's status
// reason and message, and the start of the hold as its
// lastTransitionTime), True once the plugins and the kubelet's own
// admission admitted it.
const PodAdmittedCondition corev1.PodConditionType = "PodAdmitted"

// FindPodCondition returns the pod's condition of type t, or nil.
func FindPodCondition(pod *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	if pod == nil {
		return nil
	}
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == t {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

// PodAdmittedIs is true once the pod's PodAdmitted condition has status.
func PodAdmittedIs(status corev1.ConditionStatus) PodCondition {
	return func(p *corev1.Pod) bool {
		c := FindPodCondition(p, PodAdmittedCondition)
		return c != nil && c.Status == status
	}
}
