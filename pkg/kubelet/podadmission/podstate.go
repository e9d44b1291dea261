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

package podadmission

import (
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"

	podadmissionv1alpha1 "github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1"
)

const (
	// initialBackoff is the wait before the first re-evaluation of a held
	// pod.
	initialBackoff = time.Second
	// maxBackoff caps the back-off: a held pod is evaluated at least every
	// two minutes, without flooding plugins with calls.
	maxBackoff = 2 * time.Minute
	// maxRetryAfter caps a plugin's retryAfterSeconds hint, so that a wrong
	// hint cannot park a pod for days. A GRPC plugin can still ask for an
	// earlier evaluation at any time.
	maxRetryAfter = 10 * time.Minute
)

// podState is what the Manager remembers about one pod it has seen in
// SoftAdmit or AdmitContainers, until the pod is gone from the kubelet.
// What must survive a kubelet restart about a pod's first admission (when
// the hold began, that the pod was admitted) is in the pod's PodAdmitted
// condition, which the kubelet writes; a new Manager starts from it. What
// the plugins admitted of an admitted pod's containers is in the Manager's
// checkpoint (Options.StateDir).
//
// Once the pod is admitted, the hold fields (result, heldSince, blockedBy,
// nextEvaluation, reevaluate, attempts) are those of its held update, if
// it has one.
type podState struct {
	// pod names the pod in log lines.
	pod klog.ObjectRef
	// admitted is sticky: the pod is never evaluated again as a whole.
	admitted bool
	// containers is what the plugins admitted of an admitted pod's
	// containers; an admitted update adds to it.
	containers admittedImages
	// update is a change of an admitted pod's containers that the plugins
	// have not admitted: the kubelet runs the pod without it. nil when the
	// pod runs as it is.
	update *heldUpdate
	// terminal: the pod was rejected for good and the kubelet fails it.
	terminal bool
	// result is the decision for a blocked or terminal pod, returned
	// without calling plugins until nextEvaluation.
	result lifecycle.PodAdmitResult
	// blocked: this Manager holds the pod Pending after a soft rejection
	// (and counts it in the blocked pods gauge). Set with setBlocked.
	blocked bool
	// heldSince is when the hold began: the pod's first soft rejection, or
	// the lastTransitionTime of the PodAdmitted=False condition the pod had
	// when this Manager first saw it (the hold began before a kubelet
	// restart). The back-off and maxBlockedDuration count from it. Zero
	// while the pod was never held.
	heldSince time.Time
	// blockedBy names the plugin whose rejection holds the pod.
	blockedBy string
	// nextEvaluation is when the back-off of a blocked pod expires.
	nextEvaluation time.Time
	// reevaluate asks for an evaluation before nextEvaluation: a plugin
	// pushed a re-evaluation, the configuration changed, or an evaluation
	// was interrupted.
	reevaluate bool
	// push is what pushes asked for (push_limit.go).
	push pushState
	// attempts counts the calls to each plugin for this pod by this
	// Manager.
	attempts map[string]int32
	// lastSeen is the last SoftAdmit of the pod, so that garbage collection
	// never drops the state of a pod admitted after ActivePods was listed.
	lastSeen time.Time
}

// newPodState is the state of a pod this Manager sees for the first time.
// A pod the kubelet held before it restarted carries a PodAdmitted=False
// condition; its hold goes on from the condition's lastTransitionTime.
func newPodState(pod *v1.Pod) *podState {
	st := &podState{pod: klog.KObj(pod), attempts: map[string]int32{}}
	if c := podadmissionv1alpha1.PodAdmittedCondition(&pod.Status); c != nil && c.Status == v1.ConditionFalse {
		st.heldSince = c.LastTransitionTime.Time
	}
	return st
}

// heldUpdate is a change of an admitted pod's containers the plugins have
// not admitted yet.
type heldUpdate struct {
	// changes are the containers the change would start.
	changes []changedContainer
	// rejected: the plugins rejected it, and the pod's result is their
	// decision; false while no evaluation decided (it was interrupted, or
	// the Manager is stopped).
	rejected bool
}

// sameChanges says whether changes are the ones u holds.
func (u *heldUpdate) sameChanges(changes []changedContainer) bool {
	return slices.EqualFunc(u.changes, changes, func(a, b changedContainer) bool { return a.equal(&b) })
}

// setBlocked marks the pod as held Pending by a soft rejection, or not,
// keeping the blocked pods gauge equal to the number of pods so marked:
// every change of blocked goes through it.
func (s *podState) setBlocked(blocked bool) {
	if s.blocked == blocked {
		return
	}
	s.blocked = blocked
	if blocked {
		blockedPods.Inc()
	} else {
		blockedPods.Dec()
	}
}

// awaitsDecision says whether the pod, or an update of it, waits for the
// plugins: a push or a reload may have it evaluated again.
func (s *podState) awaitsDecision() bool {
	return !s.terminal && (!s.admitted || s.update != nil)
}

// heldBy names the plugin whose decision holds the pod or its update: the
// only plugin whose push re-evaluates it. Empty when nothing holds it (not
// decided yet, admitted, or failed).
func (s *podState) heldBy() string {
	if !s.awaitsDecision() {
		return ""
	}
	return s.blockedBy
}

// dueForEvaluation says whether a blocked pod's back-off has expired, a
// re-evaluation was asked for, or a push deferred by the rate limit is due.
func (s *podState) dueForEvaluation(now time.Time) bool {
	return s.reevaluate || !now.Before(s.nextEvaluation) || s.push.due(now)
}

// backoff is the wait before evaluating a pod held for heldFor again:
// heldFor plus initialBackoff, at most maxBackoff. Evaluations thus come at
// 0 s, 1 s, 3 s, 7 s, 15 s ... into the hold, each wait twice the one
// before (1 s, 2 s, 4 s, ...) up to the cap, and the schedule depends on
// nothing but when the hold began, which a kubelet restart does not change.
func backoff(heldFor time.Duration) time.Duration {
	return min(max(heldFor, 0)+initialBackoff, maxBackoff)
}

// retryDelay is the wait before the next evaluation of a pod held for
// heldFor: the plugin's retryAfterSeconds hint if it gave a positive one
// (capped), else the back-off; a hint of 0 asks for the back-off.
func retryDelay(heldFor time.Duration, retryAfter *time.Duration) time.Duration {
	if retryAfter != nil && *retryAfter > 0 {
		return min(*retryAfter, maxRetryAfter)
	}
	return backoff(heldFor)
}
