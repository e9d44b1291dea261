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
	"context"
	"fmt"
	"maps"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	kubecontainer "k8s.io/kubernetes/pkg/kubelet/container"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"
)

// Reasons of held containers that carry no plugin's decision.
const (
	// ReasonUpdatePending: the update was not decided yet (its evaluation
	// was interrupted, or the Manager is stopped).
	ReasonUpdatePending = "PodAdmissionUpdatePending"
)

// HeldContainer is a container the runnable pod of AdmitContainers leaves
// out: the kubelet shows it waiting with this reason and message.
type HeldContainer struct {
	Name    string
	Reason  string
	Message string
}

// AdmitContainers returns the pod as the kubelet may run it, and the
// containers it leaves out. The kubelet calls it for an admitted pod in the
// pod's worker, before it hands the pod to the runtime.
//
// Every container of pod whose spec the plugins have not admitted (an
// ephemeral container added, a container's or init container's image
// replaced) goes to the plugins first, as one Update request for the pod,
// with the runnable pod as oldPod. Until they admit it, the runnable pod
// has the changed containers at their admitted image, so the runtime
// neither stops what runs nor starts the new image, and the new ephemeral
// containers left out (returned as held, with the plugin's reason). An
// admitted update is sticky, also across kubelet restarts (the checkpoint
// in Options.StateDir). A held update is evaluated again like a held pod:
// after its back-off, at once after a push or a reload. A rejection holds
// the update whatever the plugin's rejectionMode and maxBlockedDuration
// say: failing the pod would stop what runs. Without a change, it returns
// pod itself without calling plugins.
func (m *Manager) AdmitContainers(ctx context.Context, pod *v1.Pod, podStatus *kubecontainer.PodStatus) (*v1.Pod, []HeldContainer) {
	now := m.clock.Now()
	m.mu.Lock()
	st, ok := m.pods[pod.UID]
	if !ok || !st.admitted {
		// The kubelet admitted the pod without this Manager: it ran before
		// the kubelet restarted, or before the plugins were configured.
		// What the runtime runs of it counts as admitted.
		if ok {
			st.setBlocked(false)
		}
		st = &podState{admitted: true}
		m.pods[pod.UID] = st
	}
	st.pod, st.lastSeen = klog.KObj(pod), now
	record, changes, learned := reconcile(st.containers, pod, podStatus)
	if learned {
		st.containers = record
		m.admittedChanged()
	}
	if len(changes) == 0 {
		m.endUpdate(ctx, pod, st)
		m.mu.Unlock()
		if learned {
			m.saveAdmitted(ctx)
		}
		return pod, nil
	}
	runnable := runnablePod(pod, changes)
	if st.update != nil && st.update.sameChanges(changes) && !st.dueForEvaluation(now) {
		defer m.mu.Unlock()
		return runnable, leftOut(changes, st.result.Reason, st.result.Message)
	}
	if st.update == nil || !st.update.sameChanges(changes) {
		// Another change is another update: evaluated now, from attempt 1.
		m.endUpdate(ctx, pod, st)
		st.update = &heldUpdate{changes: changes}
		heldContainers.Add(float64(len(changes)))
	}
	st.reevaluate = false
	st.push.evaluationStarts()
	attempts := maps.Clone(st.attempts)
	m.mu.Unlock()
	defer m.evaluationEnded(pod.UID, st)
	if learned {
		m.saveAdmitted(ctx)
	}

	result, ok := m.evaluate(ctx, EvaluationRequest{
		Pod:     pod,
		OldPod:  runnable,
		Node:    m.nodeInfo(ctx),
		Attempt: func(plugin string) int32 { return attempts[plugin] + 1 },
	})
	switch {
	case !ok:
		return runnable, leftOut(changes, ReasonUpdatePending, "The pod admission manager is stopped; the container is not started until pod admission plugins admit it")
	case ctx.Err() != nil:
		m.mu.Lock()
		st.reevaluate = true
		m.waker.wakeAfter(pod.UID, st.pod, wakeInterrupted, 0)
		m.mu.Unlock()
		return runnable, leftOut(changes, ReasonUpdatePending, fmt.Sprintf("Pod admission was interrupted (%v); the container is not started until pod admission plugins admit it", ctx.Err()))
	}
	m.recordIgnoredFailures(pod, &result)

	m.mu.Lock()
	if st.update == nil || !st.update.sameChanges(changes) {
		// Forgotten, or another change came in meanwhile: it decides.
		m.mu.Unlock()
		return runnable, leftOut(changes, ReasonUpdatePending, "The pod changed while pod admission plugins evaluated it; the container is not started until they admit it")
	}
	if st.attempts == nil {
		st.attempts = map[string]int32{}
	}
	for _, d := range result.Decisions {
		if d.Attempt > 0 {
			st.attempts[d.Plugin.Name] = d.Attempt
		}
	}
	if result.Admitted() {
		m.admitUpdate(ctx, pod, st)
		m.mu.Unlock()
		m.saveAdmitted(ctx)
		return pod, nil
	}
	defer m.mu.Unlock()
	m.holdUpdate(ctx, pod, st, result.Rejection)
	return runnable, leftOut(changes, st.result.Reason, st.result.Message)
}

// admitUpdate records that the changes of st's update were admitted; m.mu
// is held.
func (m *Manager) admitUpdate(ctx context.Context, pod *v1.Pod, st *podState) {
	record := maps.Clone(st.containers)
	if record == nil {
		record = admittedImages{}
	}
	for _, c := range st.update.changes {
		record[c.name] = c.image
	}
	if st.update.rejected {
		klog.FromContext(ctx).Info("Pod admission plugins admitted a held update of a pod", "pod", klog.KObj(pod), "podUID", pod.UID,
			"containers", describeChanges(st.update.changes), "heldFor", m.clock.Since(st.heldSince), "heldBy", st.blockedBy)
	}
	m.endUpdate(ctx, pod, st)
	st.containers = record
	m.admittedChanged()
}

// holdUpdate records a rejection of st's update by decision d; m.mu is
// held. The pod's event says which containers are not started, when the
// decision changes.
func (m *Manager) holdUpdate(ctx context.Context, pod *v1.Pod, st *podState, d *PluginDecision) {
	now := m.clock.Now()
	reason, message := d.PodReason(), d.PodMessage()
	changed := !st.update.rejected || st.result.Reason != reason || st.result.Message != message
	if !st.update.rejected {
		st.heldSince = now
		st.update.rejected = true
	}
	st.result.Reason, st.result.Message = reason, message
	st.blockedBy = d.Plugin.Name
	st.nextEvaluation = now.Add(retryDelay(now.Sub(st.heldSince), d.RetryAfter))
	m.waker.wakeAfter(pod.UID, st.pod, wakeBackoff, st.nextEvaluation.Sub(now))
	logger := klog.FromContext(ctx)
	if changed {
		logger.Info("Pod admission holds an update of a running pod: its new containers are not started", "pod", klog.KObj(pod), "podUID", pod.UID,
			"plugin", d.Plugin.Name, "containers", describeChanges(st.update.changes), "reason", reason, "message", message)
		if m.opts.Recorder != nil {
			m.opts.Recorder.Event(pod, v1.EventTypeWarning, reason, sanitizeMessage(fmt.Sprintf("Not starting %s: %s", describeChanges(st.update.changes), message)))
		}
	} else {
		logger.V(4).Info("Pod admission still holds an update of a pod", "pod", klog.KObj(pod), "podUID", pod.UID,
			"plugin", d.Plugin.Name, "nextEvaluation", st.nextEvaluation.Sub(now))
	}
}

// endUpdate forgets st's update, if any, and its hold; m.mu is held.
func (m *Manager) endUpdate(ctx context.Context, pod *v1.Pod, st *podState) {
	if st.update == nil {
		return
	}
	if st.update.rejected {
		klog.FromContext(ctx).V(2).Info("Pod admission no longer holds an update of a pod", "pod", klog.KObj(pod), "podUID", pod.UID)
	}
	heldContainers.Add(-float64(len(st.update.changes)))
	st.update = nil
	st.result, st.heldSince, st.blockedBy = lifecycle.PodAdmitResult{}, time.Time{}, ""
	st.nextEvaluation, st.reevaluate, st.attempts = time.Time{}, false, nil
}

// leftOut are the changed ephemeral containers, which the runnable pod
// leaves out, with the reason and message of their status.
func leftOut(changes []changedContainer, reason, message string) []HeldContainer {
	var held []HeldContainer
	for _, c := range changes {
		if c.ephemeral {
			held = append(held, HeldContainer{Name: c.name, Reason: reason, Message: message})
		}
	}
	return held
}

// describeChanges names the changed containers for a person: `ephemeral
// container "debug"`, `container "web" with image "b" (it keeps "a")`.
func describeChanges(changes []changedContainer) string {
	parts := make([]string, 0, len(changes))
	for _, c := range changes {
		if c.ephemeral {
			parts = append(parts, fmt.Sprintf("ephemeral container %q", c.name))
		} else {
			parts = append(parts, fmt.Sprintf("container %q with image %q (it keeps %q)", c.name, c.image, c.admittedImage))
		}
	}
	return strings.Join(parts, ", ")
}
