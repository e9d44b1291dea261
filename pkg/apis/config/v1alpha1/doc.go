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
