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

// Package podadmission is the kubelet's pod admission plugin manager: it
// loads the plugins a node operator configured, runs every pod the kubelet
// has not admitted yet through them, and holds rejected pods until they are
// admitted.
//
// The kubelet calls a Manager from its per-pod soft admission stage
// (SoftAdmit), in the pod's own worker and before the kubelet's built-in
// admit handlers; the Manager wakes held pods through Options.WakePod when
// they are due again. Everything else (configuration, transports, back-off,
// metrics) lives here.
//
// Semantics, per pod:
//
//   - Plugins run in configuration order (files in lexical order, then list
//     order); a plugin whose match section excludes the pod is skipped. The
//     first rejection decides; the pod passes when every matching plugin
//     admits it. Admission is sticky: an admitted pod is never evaluated
//     again as a whole.
//   - AdmitContainers runs at every sync of an admitted pod, before the
//     runtime: a container whose spec the plugins have not admitted (an
//     ephemeral container added, an image replaced) goes to them as one
//     Update for the pod. Until they admit it the runtime gets the pod as
//     admitted, so nothing new starts and nothing running stops; an
//     admitted update is sticky (a checkpoint in Options.StateDir).
//   - A plugin that cannot answer (timeout, crash, bad response, socket
//     gone) rejects the pod under failurePolicy Fail and is skipped, with a
//     Warning event on the pod, under Ignore.
//   - A Soft rejection holds the pod Pending. It is evaluated again after a
//     back-off that counts from the start of the hold (waits of 1s, 2s, 4s,
//     ... up to 2m), or after the plugin's retryAfterSeconds (at most 10m;
//     0 means the back-off) instead, and at once after a GRPC plugin pushes
//     a re-evaluation or the configuration changes: each of these wakes the
//     pod's worker directly. Until then SoftAdmit returns the last decision
//     without calling plugins.
//   - A Hard rejection, or a Soft one once the pod has been held longer than
//     the rejecting plugin's maxBlockedDuration, is terminal: the kubelet
//     fails the pod.
//   - The start of a hold is the pod's PodAdmitted=False condition, which
//     the kubelet writes: a Manager that starts after a kubelet restart goes
//     on from it, so the restart neither resets nor extends the back-off or
//     maxBlockedDuration. Pods whose PodAdmitted condition is True are never
//     sent here again.
//   - Each call is bounded by the plugin's timeout, which includes the wait
//     for one of its maxConcurrentCalls call slots.
//
// Chain.Evaluate is the same evaluation without per-pod state, for tools
// such as podadmctl.
//
// The Manager picks each plugin's transport by its type: exectransport for
// Exec plugins, grpctransport for GRPC plugins, both implementing the
// contract of package transport. The chain's call wrapper (chain_call.go)
// is the only owner of what is the same for every transport: the request's
// envelope, the timeout and call slots, the plugin's name in messages, the
// per-call log line and the metrics. NewManager starts no goroutine and
// makes no connection; Start does, and Stop returns once every goroutine
// has ended and every plugin is closed. docs/design.md draws the whole path.
package podadmission
