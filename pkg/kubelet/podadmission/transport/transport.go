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

// Package transport is the contract between the pod admission plugin
// manager (package podadmission) and the transports that carry its calls to
// plugins: package exectransport runs an Exec plugin's executable per call,
// package grpctransport calls a GRPC plugin daemon on a unix socket. It
// imports neither side, so both import it.
//
// The manager's chain wraps every call and is the only owner of what is the
// same for every transport: the request's envelope (apiVersion, kind, uid),
// matching, the per-call timeout and the wait for a call slot, the failure
// policy, the plugin's name in messages, the per-call log line and the
// metrics. A transport only moves a request to its plugin and the answer
// back:
//
//   - Admit returns the plugin's response, or an error that says what went
//     wrong in terms of the plugin ("exited with code 3", "socket ... does
//     not exist") without naming the plugin: the chain does, once.
//   - When ctx ends the call, the error wraps ctx's error (errors.Is
//     context.DeadlineExceeded or context.Canceled), and so does a plugin's
//     own report that it ran out of time: the chain renders both as the
//     timeout or cancellation they are, with the configured timeout.
//   - What is for the kubelet's log only (the end of an Exec plugin's
//     stderr, which may hold secrets) rides along with the error as
//     Stderr(), never in its message: messages reach pod status.
//   - A transport starts no goroutine and opens no connection before Start
//     (when it is a Starter), and none is left after Close.
//
// The protocol's limits (request and response sizes, reason and message
// lengths) are defined once, in pkg/apis/podadmission/v1alpha1.
package transport

import (
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/types"

	podadmissionv1alpha1 "github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1"
)

// Plugin is one configured plugin as the manager calls it.
type Plugin interface {
	// Admit sends req and returns the plugin's response. It returns an
	// error, never a response, when the plugin could not answer: the call
	// was stopped, the process failed, the socket is gone, or the response
	// is not a valid PodAdmissionResponse for req.
	Admit(ctx context.Context, req *podadmissionv1alpha1.PodAdmissionRequest) (*podadmissionv1alpha1.PodAdmissionResponse, error)

	// Close stops what the plugin runs in the background and releases its
	// connection. Calls after Close fail.
	Close() error
}

// Starter is a Plugin with background work (a GRPC plugin's connection and
// re-evaluation stream). The manager calls Start once, when it starts or
// when a reload adds the plugin; before that, calls fail. The background
// work logs through ctx's logger; it ends at Close, and may end earlier
// when ctx is done.
type Starter interface {
	Start(ctx context.Context)
}

// Reevaluator is a Plugin that can ask the kubelet to evaluate pods again
// before their back-off expires (GRPC plugins, through WatchReevaluations).
type Reevaluator interface {
	// Reevaluations delivers the plugin's requests to evaluate pods again
	// now. The channel is closed when the plugin is closed.
	Reevaluations() <-chan Reevaluation
}

// Reevaluation asks for blocked pods to be evaluated again now.
type Reevaluation struct {
	// PodUIDs are the pods to evaluate again.
	PodUIDs []types.UID
	// All asks for every pod this plugin blocks to be evaluated again, for
	// example when a plugin daemon (re)connects after the kubelet started.
	All bool
}

// Stderr returns the end of the stderr of the plugin process whose call
// failed with err, quoted, or "" when there is none (err is not an Exec
// plugin's failure, or the plugin wrote nothing). It is for the kubelet's
// log and podadmctl's report, never for a pod's status.
func Stderr(err error) string {
	var carrier interface{ Stderr() string }
	if errors.As(err, &carrier) {
		return carrier.Stderr()
	}
	return ""
}
