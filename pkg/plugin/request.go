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

package plugin

import (
	"github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1/protocol"
	"github.com/podadmission/podadmission/pkg/plugin/corev1"
)

// Request is what the kubelet asks: may this pod start on this node? It
// holds the fields of the protocol's PodAdmissionRequest
// (pkg/apis/podadmission/v1alpha1, documented field by field there), with
// the pods in the SDK's own types (package corev1).
//
// The kubelet sends a request for a pod that has not started yet
// (Operation Create), and, for a pod it runs, an Update before it starts a
// container the plugins have not admitted (an ephemeral container added, a
// container's image replaced), with the pod as the plugins admitted it in
// OldPod. A rejected Update holds the new containers only.
type Request struct {
	// UID identifies this call, for a plugin's logs; the SDK echoes it in
	// the response.
	UID corev1.UID
	// Pod is the pod as the kubelet holds it: its metadata and spec. Its
	// status is not set up yet. For a static pod, metadata.uid is the
	// kubelet's own uid for it, not the mirror pod's.
	Pod *corev1.Pod
	// OldPod is, for an Update, the pod as the plugins admitted it; nil for
	// a Create. Every container of Pod that differs from OldPod is one the
	// kubelet starts only if this update is admitted. A plugin that
	// ignores it judges Pod whole, as it does at creation.
	OldPod *corev1.Pod
	// Node describes the node the pod is to run on.
	Node NodeInfo
	// Static is true for a pod of a static manifest (file or HTTP) rather
	// than of the API server.
	Static bool
	// Attempt counts the evaluations of this pod (or of this update) by
	// this plugin, from 1, so that a plugin can tell a first sight from a
	// retry.
	Attempt int32
	// Operation is OperationCreate or OperationUpdate; the SDK sets Create
	// when the kubelet leaves it out (it does for a Create).
	Operation Operation

	// PodJSON and OldPodJSON are Pod and OldPod as the kubelet sent them:
	// JSON, for a plugin that decodes the pod with other types (package
	// corepod converts Pod and OldPod into k8s.io/api/core/v1's Pod
	// instead). The SDK sets them when it decodes a request; they must not
	// be modified.
	PodJSON    []byte
	OldPodJSON []byte
}

// NodeInfo describes the node in a Request.
type NodeInfo struct {
	// Name is the node's name.
	Name string
	// Labels are the node's labels as the kubelet last saw them.
	Labels map[string]string
	// NodeInfo is the node's system information: kernel, OS image,
	// container runtime and kubelet versions.
	NodeInfo corev1.NodeSystemInfo
}

// Operation says what a Request is for.
type Operation = protocol.Operation

const (
	// OperationCreate is a pod's first admission: nothing of it runs yet.
	OperationCreate = protocol.OperationCreate
	// OperationUpdate is a change of an admitted pod that would make the
	// kubelet start a container the plugins have not admitted.
	OperationUpdate = protocol.OperationUpdate
)
