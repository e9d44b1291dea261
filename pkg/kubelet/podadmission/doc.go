// Package podadmission is the kubelet's pod admission plugin manager: it
// loads the plugins a node operator configured, runs every pod that has not
// started yet through them, and holds rejected pods until they are admitted.
//
// The kubelet calls a Manager from its per-pod soft admission stage
// (SoftAdmit) and polls it from its sync loop (ShouldSync); everything else
// (configuration, transports, back-off, metrics) lives here.
//
// Semantics, per pod:
//
//   - Plugins run in configuration order (files in lexical order, then list
//     order); a plugin whose match section excludes the pod is skipped. The
//     first rejection decides; the pod starts when every matching plugin
//     admits it. Admission is sticky: an admitted pod is never evaluated
//     again.
//   - A plugin that cannot answer (timeout, crash, bad response, socket
//     gone) rejects the pod under failurePolicy Fail and is skipped, with a
//     Warning event on the pod, under Ignore.
//   - A Soft rejection holds the pod Pending. It is evaluated again after a
//     back-off of 1s doubling to 2m per rejection in a row, or after the
//     plugin's retryAfterSeconds (at most 10m) instead, and at once after a
//     GRPC plugin pushes a re-evaluation or the configuration changes. Until
//     then SoftAdmit returns the last decision without calling plugins.
//   - A Hard rejection, or a Soft one once the pod has been held longer than
//     the rejecting plugin's maxBlockedDuration (counted from the pod's first
//     rejection), is terminal: the kubelet fails the pod.
//   - Each call is bounded by the plugin's timeout, which includes the wait
//     for one of its maxConcurrentCalls call slots.
//
// Chain.Evaluate is the same evaluation without per-pod state, for tools
// such as podadmctl.
package podadmission
