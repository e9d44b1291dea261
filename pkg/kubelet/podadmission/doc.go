// Package podadmission is the kubelet's pod admission plugin manager: it
// loads the plugins a node operator configured, runs every pod that has not
// started yet through them, and holds rejected pods until they are admitted.
//
// The kubelet calls a Manager from its per-pod soft admission stage
// (SoftAdmit) and polls it from its sync loop (ShouldSync); everything else
// (configuration, transports, back-off, metrics) lives here.
package podadmission
