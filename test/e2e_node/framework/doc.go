//go:build e2e_node

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

// Package framework brings up and tears down the one-node cluster the node
// e2e tests run against: an embedded etcd, kube-apiserver,
// kube-controller-manager and kube-scheduler built from the patched tree, a
// container runtime (containerd, or the fake CRI for speed) behind a
// recording CRI proxy, and the drop-in kubelet from _output/bin as its own
// process. Everything listens on loopback; every process, mount, cgroup,
// network link and host path it creates is removed again on success,
// failure and interrupt, and a run that died uncleanly is cleaned up by the
// next one. Logs and artifacts of a run stay in <artifacts>/<run>/.
package framework
