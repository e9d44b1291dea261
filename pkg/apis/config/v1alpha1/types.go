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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// PodAdmissionConfiguration lists the pod admission plugins the kubelet runs
// before it sets up a pod. The kubelet reads it from the file or directory
// named by --pod-admission-plugin-config; in a directory, files are read in
// lexical order and their plugins run in that order, then in list order.
type PodAdmissionConfiguration struct {
	metav1.TypeMeta `json:",inline"`

	// plugins run in order for every pod that has not started yet. The first
	// plugin that rejects a pod decides; a pod starts only when every plugin
	// that matches it admits it. Required: a file without plugins says so
	// with "plugins: []". A missing or empty "plugins:" key is what a
	// half-written file looks like, so it is refused.
	Plugins []PluginConfig `json:"plugins"`
}

// PluginType says how the kubelet talks to a plugin.
type PluginType string

const (
	// ExecPluginType runs the executable named like the plugin from
	// --pod-admission-plugin-bin-dir once per call, with a
	// PodAdmissionRequest on stdin and a PodAdmissionResponse on stdout.
	ExecPluginType PluginType = "Exec"
	// GRPCPluginType calls a long-running plugin daemon over a unix socket.
	GRPCPluginType PluginType = "GRPC"
)

// FailurePolicy says what a plugin failure (timeout, crash, non-zero exit,
// unreadable response, unreachable socket) means for the pod.
type FailurePolicy string

const (
	// FailurePolicyFail counts a plugin failure as a rejection (fail closed).
	FailurePolicyFail FailurePolicy = "Fail"
	// FailurePolicyIgnore counts a plugin failure as an admission.
	FailurePolicyIgnore FailurePolicy = "Ignore"
)

// RejectionMode says what a rejection by a plugin does to the pod.
type RejectionMode string

const (
	// RejectionModeSoft keeps a rejected pod Pending, with nothing set up for
	// it, and evaluates it again until it is admitted.
	RejectionModeSoft RejectionMode = "Soft"
	// RejectionModeHard rejects the pod for good: it fails like the pods the
	// kubelet's own admit handlers reject.
	RejectionModeHard RejectionMode = "Hard"
)

// PodSource selects pods by where the kubelet got them from.
type PodSource string

const (
	// AllPodSources matches API pods and static pods.
	AllPodSources PodSource = "All"
	// APIPodSource matches only pods bound to the node through the API server.
	APIPodSource PodSource = "API"
	// StaticPodSource matches only static pods (file or HTTP manifests).
	StaticPodSource PodSource = "Static"
)

// PluginConfig configures one plugin.
type PluginConfig struct {
	// name identifies the plugin in logs, metrics, events and pod status
	// messages; it is unique across all configuration files. For an Exec
	// plugin it is also the file name of its executable in
	// --pod-admission-plugin-bin-dir. It must be a DNS-1123 label.
	Name string `json:"name"`

	// type is Exec or GRPC.
	Type PluginType `json:"type"`

	// endpoint is the unix socket a GRPC plugin serves on, as an absolute
	// path or a unix:// URL, at most 107 bytes. Required for GRPC, forbidden
	// for Exec. Every directory on the way to the socket must be owned by
	// root and not writable by group or others (the socket's own directory
	// may instead belong to serverUID), so that no other user can put a
	// socket of their own in its place.
	// +optional
	Endpoint string `json:"endpoint,omitempty"`

	// serverUID is the user the GRPC plugin daemon runs as. The kubelet
	// checks the peer credentials of every connection to the socket
	// (SO_PEERCRED) and refuses to talk to a server running as any other
	// user: all its calls fail. Defaults to 0 (root). Forbidden for Exec.
	// +optional
	ServerUID *int64 `json:"serverUID,omitempty"`

	// args are passed to an Exec plugin's executable. Forbidden for GRPC.
	// +optional
	Args []string `json:"args,omitempty"`

	// env is added to the minimal environment an Exec plugin runs with.
	// Forbidden for GRPC.
	// +optional
	Env []ExecEnvVar `json:"env,omitempty"`

	// timeout bounds one call to the plugin, including waiting for a free
	// call slot. Defaults to 5s; at most 1m.
	// +optional
	Timeout *metav1.Duration `json:"timeout,omitempty"`

	// maxConcurrentCalls caps the calls in flight to this plugin, counted by
	// plugin name across configuration reloads. Defaults to 4 for Exec and
	// 16 for GRPC; at most 256.
	// +optional
	MaxConcurrentCalls *int32 `json:"maxConcurrentCalls,omitempty"`

	// failurePolicy is Fail (default) or Ignore.
	// +optional
	FailurePolicy FailurePolicy `json:"failurePolicy,omitempty"`

	// rejectionMode is Soft (default) or Hard.
	// +optional
	RejectionMode RejectionMode `json:"rejectionMode,omitempty"`

	// maxBlockedDuration turns a soft rejection by this plugin into a
	// terminal one once the pod has been blocked that long, so a pod that
	// can never start does not hold its capacity forever. The time counts
	// from the first rejection of the pod by any plugin; the pod fails on
	// the first evaluation after that, which is scheduled no later than the
	// deadline. Unset means never. Only for rejectionMode Soft.
	// +optional
	MaxBlockedDuration *metav1.Duration `json:"maxBlockedDuration,omitempty"`

	// match selects the pods the plugin sees; the others are admitted by it
	// without a call. Unset (defaulted to an empty match) matches every pod.
	// +optional
	Match *PodMatch `json:"match,omitempty"`
}

// ExecEnvVar is one environment variable for an Exec plugin.
type ExecEnvVar struct {
	// name is the variable's name, unique within env.
	Name string `json:"name"`
	// value is the variable's value.
	Value string `json:"value"`
}

// PodMatch selects pods; all of its set fields must match.
type PodMatch struct {
	// namespaces the pod must be in. Empty matches all namespaces.
	// +optional
	Namespaces []string `json:"namespaces,omitempty"`

	// excludeNamespaces the pod must not be in. A namespace cannot be in
	// both lists.
	// +optional
	ExcludeNamespaces []string `json:"excludeNamespaces,omitempty"`

	// podSelector selects pods by their labels. Unset matches all pods.
	// +optional
	PodSelector *metav1.LabelSelector `json:"podSelector,omitempty"`

	// podSource is All (default), API or Static.
	// +optional
	PodSource PodSource `json:"podSource,omitempty"`
}
