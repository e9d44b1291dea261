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

// Package exectransport is the Exec transport of the pod admission plugin
// manager: it runs a plugin's executable once per call, with a
// PodAdmissionRequest as JSON on stdin, and reads its PodAdmissionResponse
// from stdout. It implements the contract of package transport: the
// manager's chain owns the call's timeout, names the plugin and logs the
// decision.
//
// The executable is <bin dir>/<plugin name>. It is opened and trust
// checked at every call (package trust: the bin dir, the executable and,
// after symlinks, every directory on the way to it, owned by root and
// writable by nobody else; for a script, its interpreters, for a binary,
// its dynamic loader; the code-loading variables of its env), and the open
// file that was checked is the one executed (execfd.go). So a binary
// swapped since the configuration was loaded, or between the check and the
// exec, is caught, and a plugin whose binary is not installed yet blocks
// pods (its calls fail) and admits them as soon as the binary is there,
// without a kubelet restart.
//
// A call runs without a shell, with a minimal environment, in a PID
// namespace and a cgroup of its own (contain.go). When the call ends every
// process it started is killed, whatever it did to leave its process
// group, its parent or its cgroup, and a plugin that exits leaving
// processes running in its cgroup fails the call. Stdout is capped; the
// end of stderr goes to the kubelet's log, never into the error, which
// reaches the pod's status.
package exectransport
