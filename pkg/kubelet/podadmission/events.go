package podadmission

import (
	v1 "k8s.io/api/core/v1"
)

// Event reasons. The kubelet records the events of blocked and failed pods
// itself, from the reason and message SoftAdmit returns.
const (
	// EventPluginFailureIgnored (pod, Warning): a plugin with failurePolicy
	// Ignore failed, so the pod was admitted without its decision.
	EventPluginFailureIgnored = "PodAdmissionPluginFailureIgnored"
	// EventConfigReloaded (node, Normal): a changed configuration is in use.
	EventConfigReloaded = "PodAdmissionConfigReloaded"
	// EventConfigInvalid (node, Warning): a changed configuration was
	// refused; the last good one stays in use.
	EventConfigInvalid = "PodAdmissionConfigInvalid"
)

// recordIgnoredFailures tells the pod's owner that a plugin was skipped.
func (m *Manager) recordIgnoredFailures(pod *v1.Pod, result *ChainResult) {
	if m.opts.Recorder == nil {
		return
	}
	for _, d := range result.Decisions {
		if d.Outcome == OutcomeFailureIgnored {
			m.opts.Recorder.Eventf(pod, v1.EventTypeWarning, EventPluginFailureIgnored,
				"Pod admission plugin %q failed and its failurePolicy is Ignore, so it did not decide: %v", d.Plugin.Name, d.Err)
		}
	}
}

// recordNodeEvent records an event on this node.
func (m *Manager) recordNodeEvent(eventType, reason, messageFmt string, args ...any) {
	if m.opts.Recorder == nil {
		return
	}
	m.opts.Recorder.Eventf(m.nodeRef, eventType, reason, messageFmt, args...)
}
