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

// Package v1alpha1 is version v1alpha1 of the kubelet's pod admission plugin
// configuration, group podadmission.kubelet.config.k8s.io, kind
// PodAdmissionConfiguration. The kubelet reads it from the file or directory
// named by --pod-admission-plugin-config.
//
// A minimal file:
//
//	apiVersion: podadmission.kubelet.config.k8s.io/v1alpha1
//	kind: PodAdmissionConfiguration
//	plugins:
//	- name: pod-security
//	  type: Exec
//	  match:
//	    excludeNamespaces: [kube-system]
//
// The package has no internal version: the kubelet, podadmctl and the plugin
// manager use these types directly, defaulted by SetObjectDefaults_* and
// checked by package validation.
//
// +k8s:deepcopy-gen=package
// +k8s:defaulter-gen=TypeMeta
// +groupName=podadmission.kubelet.config.k8s.io
package v1alpha1
