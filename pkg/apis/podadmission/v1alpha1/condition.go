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
	corev1 "k8s.io/api/core/v1"
)

// PodAdmitted is the pod condition the kubelet sets on every pod it runs
// through pod admission plugins, with the PodAdmissionPlugin feature gate
// on. The kubelet owns it: it is part of the status the kubelet writes, so
// it survives status merges and kubelet restarts.
//
//   - status False: a plugin holds the pod. reason and message are the
//     pod's status.reason and status.message (the plugin's reason, and a
//     message naming the plugin); lastTransitionTime is when the hold began.
//     The back-off and maxBlockedDuration count from it, so a kubelet
//     restart neither resets nor extends them.
//   - status True: the plugins and then the kubelet's own admission (node
//     resources, topology, devices, ...) admitted the pod. It is never sent
//     to a plugin again, not even after a kubelet restart.
//
// A pod the kubelet's own admission rejects after the plugins admitted it
// fails like any pod the kubelet rejects; the condition is not set then.
//
//	kubectl wait --for=condition=PodAdmitted=False pod/web   # held
//	kubectl wait --for=condition=PodAdmitted pod/web         # admitted
const PodAdmitted corev1.PodConditionType = "PodAdmitted"

// PodAdmittedCondition returns status's PodAdmitted condition, or nil.
func PodAdmittedCondition(status *corev1.PodStatus) *corev1.PodCondition {
	for i := range status.Conditions {
		if status.Conditions[i].Type == PodAdmitted {
			return &status.Conditions[i]
		}
	}
	return nil
}

// IsPodAdmitted says whether status records that the kubelet admitted the
// pod (PodAdmitted is True).
func IsPodAdmitted(status *corev1.PodStatus) bool {
	c := PodAdmittedCondition(status)
	return c != nil && c.Status == corev1.ConditionTrue
}
