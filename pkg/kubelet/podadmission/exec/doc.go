// Package exec is the Exec transport of the pod admission plugin manager: it
// runs a plugin's executable once per call, with a PodAdmissionRequest as
// JSON on stdin, and reads its PodAdmissionResponse from stdout.
//
// The executable is <bin dir>/<plugin name>. It is looked up and trust
// checked at every call, not when the configuration is loaded, so a plugin
// whose binary is not installed yet blocks pods (its calls fail) and admits
// them as soon as the binary is there, without a kubelet restart.
//
// A call runs without a shell, in its own process group, with a minimal
// environment; stdout is capped and stderr kept (its tail) for the error. The
// whole process group is killed when the call ends, so nothing a plugin forks
// outlives the call, unless it leaves the group on purpose (setsid).
package exec
