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

package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1/protocol"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// PodAdmissionRequest asks a plugin whether a pod may start on this node.
// An Exec plugin reads it as JSON on stdin; a GRPC plugin receives the same
// fields in an AdmitRequest (package pkg/apis/podadmission/grpc/v1alpha1).
//
// The kubelet sends a request for a pod that has not started yet (operation
// Create): before its sandbox is created, its volumes are mounted or its
// images are pulled. Once every plugin has admitted a pod it is never sent
// again as a whole, so a plugin can never stop a running pod. But when a
// container of an admitted pod changes so that the kubelet would start
// something the plugins have not admitted (an ephemeral container added, a
// container's image replaced), the kubelet sends the pod again, before it
// starts that container, as an Update with the pod as the plugins admitted
// it in oldPod. A rejected update holds the new containers only: the pod's
// running containers keep running as they were admitted.
type PodAdmissionRequest struct {
	// apiVersion is podadmission.kubelet.k8s.io/v1alpha1 and kind is
	// PodAdmissionRequest. A plugin must answer with the same apiVersion.
	metav1.TypeMeta `json:",inline"`

	// uid identifies this call; it is unique per call, so a plugin can
	// correlate its logs with the kubelet's. The response must echo it.
	UID types.UID `json:"uid"`

	// pod is the pod as the kubelet holds it: its spec and metadata. Plugins
	// must not rely on its status, which the kubelet has not set up yet. For
	// a static pod, metadata.uid is the kubelet's own uid for it, not the
	// mirror pod's.
	Pod *corev1.Pod `json:"pod"`

	// node describes the node the pod is to run on.
	Node NodeInfo `json:"node"`

	// static is true when the pod comes from a static manifest (file or
	// HTTP) rather than from the API server.
	Static bool `json:"static"`

	// attempt counts the evaluations of this pod by this plugin, starting at
	// 1, so a plugin can tell a first sight from a retry. An update counts
	// its own attempts, from 1.
	Attempt int32 `json:"attempt"`

	// operation is Create for a pod's first admission and Update for a
	// change of an admitted pod. The kubelet leaves it out for Create, so
	// that a plugin built before the field existed keeps deciding on every
	// pod's first admission (such a plugin fails on an Update, whose
	// oldPod it does not know: the update is held, fail closed); the SDK's
	// decoding sets Create then.
	// +optional
	Operation Operation `json:"operation,omitempty"`

	// oldPod is, for an Update, the pod as the plugins admitted it: pod
	// with each container at the image the plugins admitted and without
	// the ephemeral containers they have not admitted yet. Every container
	// of pod that differs from oldPod is one the kubelet would start only
	// if this update is admitted. A plugin that ignores oldPod judges pod
	// whole, which is what it does at creation. Unset for Create.
	// +optional
	OldPod *corev1.Pod `json:"oldPod,omitempty"`
}

// Operation says what a request is for.
type Operation = protocol.Operation

// The operations, defined with the protocol's rules (package protocol),
// which the SDK shares.
const (
	// OperationCreate is a pod's first admission: nothing of it runs yet.
	OperationCreate = protocol.OperationCreate
	// OperationUpdate is a change of an admitted pod that would make the
	// kubelet start a container the plugins have not admitted.
	OperationUpdate = protocol.OperationUpdate
)

// NodeInfo describes the node in a PodAdmissionRequest.
type NodeInfo struct {
	// name is the node's name.
	Name string `json:"name"`

	// labels are the node's labels as the kubelet last saw them.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// nodeInfo is the node's system information (kernel, OS image,
	// container runtime and kubelet versions).
	// +optional
	NodeInfo corev1.NodeSystemInfo `json:"nodeInfo,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// PodAdmissionResponse is a plugin's decision on a PodAdmissionRequest.
//
// The kubelet decodes it strictly: a field it does not know, a response
// that breaks one of the rules below, or anything but one JSON object is a
// plugin failure, handled by the plugin's failurePolicy like a crash.
type PodAdmissionResponse struct {
	// apiVersion must be the request's apiVersion and kind must be
	// PodAdmissionResponse.
	metav1.TypeMeta `json:",inline"`

	// uid echoes the request's uid.
	UID types.UID `json:"uid"`

	// allowed admits the pod as far as this plugin is concerned.
	Allowed bool `json:"allowed"`

	// reason is a CamelCase word that says why the pod was rejected, such as
	// "ImageNotSigned"; it becomes the pod's status.reason. Required when
	// allowed is false: an upper-case ASCII letter followed by ASCII letters
	// and digits, at most 128 characters.
	// +optional
	Reason string `json:"reason,omitempty"`

	// message says, for a human, why the pod was rejected and what would
	// admit it; it becomes part of the pod's status.message and of the
	// event on the pod. At most 1024 bytes, the limit of an event's message.
	// +optional
	Message string `json:"message,omitempty"`

	// retryAfterSeconds asks the kubelet to evaluate a rejected pod again no
	// earlier than this many seconds from now, instead of its own back-off.
	// It must not be negative; 0 means the kubelet's own back-off. The
	// kubelet may cap it. A GRPC plugin can still ask for an earlier
	// evaluation with WatchReevaluations. Ignored when allowed is true.
	// +optional
	RetryAfterSeconds *int32 `json:"retryAfterSeconds,omitempty"`
}
