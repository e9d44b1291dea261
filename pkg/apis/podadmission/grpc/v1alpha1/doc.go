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

// Package v1alpha1 is the GRPC form of the pod admission plugin protocol
// podadmission.kubelet.k8s.io/v1alpha1: the PodAdmissionPlugin service a GRPC
// plugin daemon serves on a unix socket (api.proto, generated api.pb.go and
// api_grpc.pb.go) and the kubelet's conversions between its messages and the
// protocol's Go types, which apply the same rules as the JSON codec. The SDK's
// GRPC server (package grpcplugin) decodes an AdmitRequest into the SDK's own
// types.
package v1alpha1
