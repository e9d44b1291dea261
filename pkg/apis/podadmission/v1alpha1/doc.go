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

// Package v1alpha1 is version v1alpha1 of the pod admission plugin protocol,
// podadmission.kubelet.k8s.io/v1alpha1: what the kubelet sends a pod
// admission plugin (PodAdmissionRequest) and what the plugin answers
// (PodAdmissionResponse).
//
// An Exec plugin reads one request as JSON on stdin and writes one response
// as JSON on stdout; a GRPC plugin receives the same fields in the messages
// of package github.com/podadmission/podadmission/pkg/apis/podadmission/grpc/v1alpha1.
// This package is the kubelet's side: its types hold k8s.io/api's Pod, and
// its codec encodes requests and decodes responses. Plugins built with the
// SDK (package plugin) decode the same JSON into the SDK's own types,
// without k8s.io/api. The rules both sides apply are defined once, in
// package protocol.
//
// +k8s:deepcopy-gen=package
// +groupName=podadmission.kubelet.k8s.io
package v1alpha1
