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
	"fmt"

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
	// EventConfigChangedInPlace (node, Warning): a configuration file was
	// changed in place in a way that removes or changes plugins, which a
	// half-written file does too, so the change was refused; the last good
	// configuration stays in use. The message says how to make the change.
	EventConfigChangedInPlace = "PodAdmissionConfigChangedInPlace"
)

// recordIgnoredFailures tells the pod's owner that a plugin was skipped.
func (m *Manager) recordIgnoredFailures(pod *v1.Pod, result *ChainResult) {
	if m.opts.Recorder == nil {
		return
	}
	for _, d := range result.Decisions {
		if d.Outcome == OutcomeFailureIgnored {
			m.opts.Recorder.Event(pod, v1.EventTypeWarning, EventPluginFailureIgnored, sanitizeMessage(
				fmt.Sprintf("Pod admission plugin %q failed and its failurePolicy is Ignore, so it did not decide: %v", d.Plugin.Name, d.Err)))
		}
	}
}

// recordNodeEvent records an event on this node.
func (m *Manager) recordNodeEvent(eventType, reason, messageFmt string, args ...any) {
	if m.opts.Recorder == nil {
		return
	}
	m.opts.Recorder.Event(m.nodeRef, eventType, reason, sanitizeMessage(fmt.Sprintf(messageFmt, args...)))
}
