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

// Package containerdconfig writes the containerd and CNI configuration of
// a node e2e run: containerd with a root, state, socket and CNI network of
// the caller's, which the project's own harness keeps off every default
// host path, so that it runs next to anything else on the machine and goes
// without trace. (Upstream's suite puts only the socket at containerd's
// default, where the kubelet's cAdvisor looks for it.)
//
// One source for both node e2e harnesses: the project's own
// (test/e2e_node/framework) renders it in process, upstream's suite
// (test/upstream-e2e/run.sh) through the containerd-config command
// (test/upstream-e2e/cmd/containerd-config).
package containerdconfig
