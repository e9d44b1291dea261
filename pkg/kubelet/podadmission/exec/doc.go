// Package exec is the Exec transport of the pod admission plugin manager: it
// runs a plugin's executable once per call, with a PodAdmissionRequest as
// JSON on stdin, and reads its PodAdmissionResponse from stdout.
//
// The executable is <bin dir>/<plugin name>. It is trust checked at every
// call (package trust: the bin dir, the executable and, after symlinks,
// every directory on the way to it, owned by root and writable by nobody
// else), so a binary swapped since the configuration was loaded is caught,
// and a plugin whose binary is not installed yet blocks pods (its calls
// fail) and admits them as soon as the binary is there, without a kubelet
// restart.
//
// A call runs without a shell, with a minimal environment, in a cgroup of
// its own (or, where cgroups cannot be created, a PID namespace of its own;
// see contain.go). When the call ends every process it started is killed,
// whatever it did to leave its process group or its parent, and a plugin
// that exits leaving processes running fails the call. Stdout is capped;
// the end of stderr goes to the kubelet's log, never into the error, which
// reaches the pod's status.
package exec
