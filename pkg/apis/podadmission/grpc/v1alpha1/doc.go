// Package v1alpha1 is the GRPC form of the pod admission plugin protocol
// podadmission.kubelet.k8s.io/v1alpha1: the PodAdmissionPlugin service a GRPC
// plugin daemon serves on a unix socket (api.proto, generated api.pb.go and
// api_grpc.pb.go) and the conversions between its messages and the protocol's
// Go types, which apply the same rules as the JSON codec.
package v1alpha1
