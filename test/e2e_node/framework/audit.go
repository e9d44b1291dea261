//go:build e2e_node

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

package framework

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	"sigs.k8s.io/yaml"
)

// The API server audits what the node reads for pods: secrets, configMaps
// and service account tokens, requested with the kubelet's credentials.
// That is how a test sees that the kubelet fetched nothing for a pod a
// plugin holds; nothing else is audited, so the log stays small.

// auditPolicy is the API server's --audit-policy-file for node nodeName.
func auditPolicy(nodeName string) auditv1.Policy {
	return auditv1.Policy{
		TypeMeta:   metav1.TypeMeta{APIVersion: auditv1.SchemeGroupVersion.String(), Kind: "Policy"},
		OmitStages: []auditv1.Stage{auditv1.StageRequestReceived},
		Rules: []auditv1.PolicyRule{
			{
				// Request: a token request's body names the pod it is for.
				Level: auditv1.LevelRequest,
				Users: []string{"system:node:" + nodeName},
				Resources: []auditv1.GroupResources{{
					Group:     "",
					Resources: []string{"secrets", "configmaps", "serviceaccounts/token"},
				}},
			},
			{Level: auditv1.LevelNone},
		},
	}
}

// writeAuditPolicy writes the policy for nodeName to path.
func writeAuditPolicy(path, nodeName string) error {
	data, err := yaml.Marshal(auditPolicy(nodeName))
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// NodeObjectRequests returns the audited requests of the node for
// secrets, configMaps and service account tokens in namespace, oldest
// first.
func (c *Cluster) NodeObjectRequests(namespace string) ([]auditv1.Event, error) {
	path := c.ControlPlane.AuditLog
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var events []auditv1.Event
	scanner := bufio.NewScanner(f)
	scanner.Buffer(make([]byte, 64<<10), 4<<20)
	for scanner.Scan() {
		var e auditv1.Event
		if err := json.Unmarshal(scanner.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if e.ObjectRef != nil && e.ObjectRef.Namespace == namespace {
			events = append(events, e)
		}
	}
	return events, scanner.Err()
}

// DescribeRequest is a one-line summary of an audited request.
func DescribeRequest(e auditv1.Event) string {
	return fmt.Sprintf("%s %s %s", e.StageTimestamp.Format("15:04:05.000000"), e.Verb, e.RequestURI)
}
