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

package grpcplugin

import (
	"fmt"

	pb "github.com/podadmission/podadmission/pkg/apis/podadmission/grpc/v1alpha1"
	"github.com/podadmission/podadmission/pkg/plugin"
	"github.com/podadmission/podadmission/pkg/plugin/corev1"
)

// requestFromProto returns the request a GRPC plugin received: its pods
// and node information decoded from their JSON as strictly as
// plugin.DecodeRequest decodes the JSON form, and checked as it checks
// that.
func requestFromProto(in *pb.AdmitRequest) (*plugin.Request, error) {
	req := &plugin.Request{
		UID:        corev1.UID(in.GetUid()),
		Static:     in.GetStatic(),
		Attempt:    in.GetAttempt(),
		Operation:  plugin.Operation(in.GetOperation()),
		PodJSON:    in.GetPod(),
		OldPodJSON: in.GetOldPod(),
	}
	var err error
	if req.Pod, err = podFromProto(req.PodJSON); err != nil {
		return nil, fmt.Errorf("invalid request: pod: %w", err)
	}
	if req.OldPod, err = podFromProto(req.OldPodJSON); err != nil {
		return nil, fmt.Errorf("invalid request: oldPod: %w", err)
	}
	if node := in.GetNode(); node != nil {
		req.Node.Name = node.GetName()
		req.Node.Labels = node.GetLabels()
		if len(node.GetNodeInfo()) > 0 {
			if err := req.Node.NodeInfo.UnmarshalJSON(node.GetNodeInfo()); err != nil {
				return nil, fmt.Errorf("invalid request: node.nodeInfo: %w", err)
			}
		}
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if req.Operation == "" {
		// The kubelet leaves Create out, as in the JSON form.
		req.Operation = plugin.OperationCreate
	}
	return req, nil
}

// podFromProto decodes a pod; nil for none.
func podFromProto(data []byte) (*corev1.Pod, error) {
	if len(data) == 0 {
		return nil, nil
	}
	pod := &corev1.Pod{}
	if err := pod.UnmarshalJSON(data); err != nil {
		return nil, err
	}
	return pod, nil
}
