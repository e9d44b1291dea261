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
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

const (
	// DefaultTimeout bounds one plugin call when timeout is unset.
	DefaultTimeout = 5 * time.Second
	// MaxTimeout is the longest timeout a plugin may have: the kubelet's
	// per-pod worker waits for the whole chain before it sets the pod up.
	MaxTimeout = time.Minute
	// DefaultExecMaxConcurrentCalls caps concurrent calls to an Exec plugin
	// when maxConcurrentCalls is unset: every call is a process.
	DefaultExecMaxConcurrentCalls int32 = 4
	// DefaultGRPCMaxConcurrentCalls caps concurrent calls to a GRPC plugin
	// when maxConcurrentCalls is unset: calls share one connection.
	DefaultGRPCMaxConcurrentCalls int32 = 16
	// MaxConcurrentCallsLimit is the largest maxConcurrentCalls: more calls
	// in flight than that to one plugin is a runaway, not a need (a call
	// holds a pod worker, and for Exec a process).
	MaxConcurrentCallsLimit int32 = 256
	// MaxServerUID is the largest user id a serverUID may name: uid_t is 32
	// bits and 4294967295 is (uid_t)-1, which is no user.
	MaxServerUID int64 = 1<<32 - 2
)

// SetDefaults_PluginConfig fills in the optional fields of a plugin. The
// concurrency default depends on the type, so it is set only for known types;
// validation reports an unknown type.
func SetDefaults_PluginConfig(obj *PluginConfig) {
	if obj.Timeout == nil {
		obj.Timeout = &metav1.Duration{Duration: DefaultTimeout}
	}
	if obj.MaxConcurrentCalls == nil {
		switch obj.Type {
		case ExecPluginType:
			obj.MaxConcurrentCalls = ptr.To(DefaultExecMaxConcurrentCalls)
		case GRPCPluginType:
			obj.MaxConcurrentCalls = ptr.To(DefaultGRPCMaxConcurrentCalls)
		}
	}
	if obj.FailurePolicy == "" {
		obj.FailurePolicy = FailurePolicyFail
	}
	if obj.RejectionMode == "" {
		obj.RejectionMode = RejectionModeSoft
	}
	// An explicit, empty match makes the effective selection visible to
	// tools that print the defaulted configuration (podadmctl).
	if obj.Match == nil {
		obj.Match = &PodMatch{}
	}
}

// SetDefaults_PodMatch selects pods from every source unless told otherwise.
func SetDefaults_PodMatch(obj *PodMatch) {
	if obj.PodSource == "" {
		obj.PodSource = AllPodSources
	}
}
