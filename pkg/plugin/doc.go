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

// Package plugin is the SDK for pod admission plugins: a plugin author writes
// one Handler and runs it either as an Exec plugin (one process per call) or,
// with package grpcplugin, as a GRPC plugin daemon on a unix socket.
//
// An Exec plugin, installed as <--pod-admission-plugin-bin-dir>/<name>:
//
//	func main() {
//		plugin.RunExec(func(ctx context.Context, req *plugin.Request) (*plugin.Response, error) {
//			if req.Pod.Spec.HostNetwork {
//				return plugin.Deny("HostNetwork", "pods on this node may not use the host network"), nil
//			}
//			return plugin.Allow(), nil
//		})
//	}
//
// The same handler as a GRPC plugin daemon:
//
//	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
//	defer stop()
//	err := grpcplugin.Serve(ctx, "/run/podadmission/hostnet.sock", handler)
//
// A handler returns a Response to decide, or an error when it cannot decide
// (the kubelet then applies the plugin's failurePolicy). The SDK adds the
// response's apiVersion, kind and uid, and checks it before sending, so a
// mistake such as a rejection without a reason is reported by the plugin
// itself.
//
// The pod is the SDK's own Pod type (package corev1): k8s.io/api/core/v1's
// names, fields and JSON, decoded as strictly, without k8s.io/api or
// k8s.io/apimachinery. A plugin that hands the pod to Kubernetes libraries
// gets the k8s.io/api/core/v1 Pod of a request from package corepod.
//
// An Exec plugin starts once per pod it judges, and pays for every package it
// links at every start: this package links neither the GRPC server nor
// k8s.io/api, and decodes without reflection (docs/plugins.md has the
// figures).
package plugin
