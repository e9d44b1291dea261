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

// Package grpctransport is the GRPC transport of the pod admission plugin
// manager: it calls a long-running plugin daemon that serves
// PodAdmissionPlugin (pkg/apis/podadmission/grpc/v1alpha1) on a unix socket.
// It implements the contract of package transport: the manager's chain owns
// the call's timeout (a deadline on ctx, which travels to the plugin), names
// the plugin and logs the decision.
//
// Start makes the connection, in the background, and remakes it with
// back-off for as long as the plugin is configured, so a plugin daemon may
// start after the kubelet, or restart. While it is not connected, calls fail
// at once with an error that names the socket (the manager then applies the
// plugin's failurePolicy). While it is connected, the plugin's WatchReevaluations
// stream is forwarded to Reevaluations, and every time the connection
// becomes ready a Reevaluation{All: true} is sent, so pods blocked while the
// plugin was unreachable are evaluated again at once.
package grpctransport
