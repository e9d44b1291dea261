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
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// nodeReadySince returns a check that passes when the node is Ready on a
// heartbeat posted at or after since, i.e. by the kubelet started then and
// not by one before a restart.
func (c *Cluster) nodeReadySince(since time.Time) func(context.Context) error {
	// Heartbeats have a resolution of one second.
	since = since.Truncate(time.Second)
	return func(ctx context.Context) error {
		node, err := c.Client.CoreV1().Nodes().Get(ctx, c.Options.NodeName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, cond := range node.Status.Conditions {
			if cond.Type != corev1.NodeReady {
				continue
			}
			switch {
			case cond.Status != corev1.ConditionTrue:
				return fmt.Errorf("node %s is not Ready: %s: %s", node.Name, cond.Reason, cond.Message)
			case cond.LastHeartbeatTime.Time.Before(since):
				return fmt.Errorf("node %s: no heartbeat from the new kubelet yet (last %s)", node.Name, cond.LastHeartbeatTime.Format(time.RFC3339))
			}
			return nil
		}
		return fmt.Errorf("node %s has no Ready condition yet", node.Name)
	}
}
