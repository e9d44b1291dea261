// Package v1alpha1 is version v1alpha1 of the pod admission plugin protocol,
// podadmission.kubelet.k8s.io/v1alpha1: what the kubelet sends a pod
// admission plugin (PodAdmissionRequest) and what the plugin answers
// (PodAdmissionResponse).
//
// An Exec plugin reads one request as JSON on stdin and writes one response
// as JSON on stdout; a GRPC plugin receives the same fields in the messages
// of package github.com/podadmission/podadmission/pkg/apis/podadmission/grpc/v1alpha1. The codec in this package is the only
// place either side turns the JSON form into Go values, so the kubelet and
// the SDK enforce the same rules.
//
// +k8s:deepcopy-gen=package
// +groupName=podadmission.kubelet.k8s.io
package v1alpha1
