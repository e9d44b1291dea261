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
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	podadmissionv1alpha1 "github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1"
)

// RequestToProto converts a request for a GRPC plugin. The kubelet calls it.
func RequestToProto(req *podadmissionv1alpha1.PodAdmissionRequest) (*AdmitRequest, error) {
	pod, err := podToProto(req.Pod)
	if err != nil {
		return nil, fmt.Errorf("cannot encode the pod: %w", err)
	}
	oldPod, err := podToProto(req.OldPod)
	if err != nil {
		return nil, fmt.Errorf("cannot encode the old pod: %w", err)
	}
	nodeInfo, err := json.Marshal(&req.Node.NodeInfo)
	if err != nil {
		return nil, fmt.Errorf("cannot encode the node info: %w", err)
	}
	return &AdmitRequest{
		Uid: string(req.UID),
		Pod: pod,
		Node: &NodeInfo{
			Name:     req.Node.Name,
			Labels:   req.Node.Labels,
			NodeInfo: nodeInfo,
		},
		Static:    req.Static,
		Attempt:   req.Attempt,
		Operation: string(req.Operation),
		OldPod:    oldPod,
	}, nil
}

// podToProto is pod as JSON, nil for no pod.
func podToProto(pod *corev1.Pod) ([]byte, error) {
	if pod == nil {
		return nil, nil
	}
	return json.Marshal(pod)
}

// ResponseFromProto converts a GRPC plugin's answer to req and checks it with
// ValidateResponse, as DecodeResponse checks the JSON form. The kubelet
// calls it.
func ResponseFromProto(in *AdmitResponse, req *podadmissionv1alpha1.PodAdmissionRequest) (*podadmissionv1alpha1.PodAdmissionResponse, error) {
	resp := &podadmissionv1alpha1.PodAdmissionResponse{
		UID:     types.UID(in.GetUid()),
		Allowed: in.GetAllowed(),
		Reason:  in.GetReason(),
		Message: in.GetMessage(),
	}
	resp.APIVersion = podadmissionv1alpha1.SchemeGroupVersion.String()
	resp.Kind = podadmissionv1alpha1.PodAdmissionResponseKind
	if in.RetryAfterSeconds != nil {
		resp.RetryAfterSeconds = ptr.To(in.GetRetryAfterSeconds())
	}
	if errs := podadmissionv1alpha1.ValidateResponse(resp, req); len(errs) > 0 {
		return nil, fmt.Errorf("invalid response: %w", errs.ToAggregate())
	}
	return resp, nil
}
