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

// Package transportbench measures the cost of one pod admission through
// each plugin transport, next to a reference that has nothing of the
// kubelet around it. build/bench-transports.sh (make bench-transports)
// runs it together with pkg/kubelet/podadmission's
// BenchmarkAdmitManagerNoTransport, the manager's own work, and prints the
// table of BENCHMARKS.md.
//
//	go test -run '^$' -bench . -benchtime 2s ./test/transportbench/
//
// BenchmarkAdmitExec times, side by side, call by call:
//   - BareExec: fork+exec of plugins/minimal, a stdlib-only static binary,
//     the request's JSON on its stdin and its answer decoded; the reference.
//   - ExecSDK: SoftAdmit of a new pod through a Manager whose one plugin is
//     plugins/sdkexec, written with the SDK (pkg/plugin), run by the Exec
//     transport.
//   - ExecStdlib: the same with plugins/minimal: what the manager and the
//     Exec transport (trust checks, a cgroup per call) add to a process.
//   - ExecCorePod: the same with plugins/corepod, sdkexec's policy on
//     k8s.io/api/core/v1's Pod from the SDK's package corepod: what an Exec
//     plugin that hands pods to Kubernetes libraries (pod-security-plugin)
//     pays for them.
//
// BenchmarkAdmitGRPC times, side by side:
//   - BareGRPC: a unary call of echo's service (plugins/echo, another
//     process) on a unix socket, sending the request's JSON and getting it
//     back; the reference.
//   - GRPCSDK: SoftAdmit of a new pod through a Manager whose one plugin is
//     the daemon plugins/sdkgrpc (another process), written with the SDK
//     (pkg/plugin/grpcplugin), called by the GRPC transport.
//   - GRPCPodSecurity: the same with cmd/pod-security-plugin-grpc at the
//     baseline level: pod-security-plugin's policy (ExecPodSecurity's)
//     without a process per call.
//
// Each benchmark reports, per path, <path>-p50-µs, -p99-µs, -max-µs,
// -mean-µs, and <path>-allocs, the allocations of one call in this process
// (the kubelet's side). The plugins are built as the release builds its
// plugins: static and stripped.
package transportbench
