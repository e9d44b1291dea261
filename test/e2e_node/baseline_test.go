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

package e2enode

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podadmission/podadmission/test/e2e_node/crirecord"
	"github.com/podadmission/podadmission/test/e2e_node/framework"
)

// TestBaselinePodRuns checks the cluster itself: a plain pod is scheduled,
// its sandbox and container are created through the recorded CRI, and it
// runs. Every other test builds on this.
func TestBaselinePodRuns(t *testing.T) {
	ctx := testContext(t, 3*time.Minute)
	ns := newNamespace(t, ctx)
	c := suite.Cluster

	start := time.Now()
	pod, err := c.Client.CoreV1().Pods(ns).Create(ctx, c.NewPod(ns, "baseline", nil), metav1.CreateOptions{})
	require.NoError(t, err)
	running, at, err := framework.WaitForPod(ctx, c.Client, ns, pod.Name, time.Minute, framework.PodRunning)
	require.NoError(t, err)
	durationFigure(t, "create to Running", at.Sub(start))
	assert.Equal(t, c.Options.NodeName, running.Spec.NodeName)

	calls := criCalls(t)
	assert.Len(t, crirecord.Filter(calls, "RunPodSandbox", string(pod.UID)), 1, "sandboxes created for the pod")
	assert.Len(t, crirecord.Filter(calls, "StartContainer", string(pod.UID)), 1, "containers started for the pod")
}

// TestBaselineControllers runs a ReplicaSet and a DaemonSet on the vanilla
// path: each creates exactly the pods it wants, and they run. This is the
// behaviour the plugin tests compare against.
func TestBaselineControllers(t *testing.T) {
	ctx := testContext(t, 3*time.Minute)
	ns := newNamespace(t, ctx)
	c := suite.Cluster
	counter, err := framework.CountPods(ctx, c.Client, ns)
	require.NoError(t, err)
	defer counter.Stop()

	start := time.Now()
	rsLabels := map[string]string{"app": "baseline-rs"}
	_, err = c.Client.AppsV1().ReplicaSets(ns).Create(ctx, c.NewReplicaSet(ns, "baseline", 2, rsLabels), metav1.CreateOptions{})
	require.NoError(t, err)
	dsLabels := map[string]string{"app": "baseline-ds"}
	_, err = c.Client.AppsV1().DaemonSets(ns).Create(ctx, c.NewDaemonSet(ns, "baseline", dsLabels), metav1.CreateOptions{})
	require.NoError(t, err)

	require.Eventually(t, func() bool {
		pods := counter.Pods()
		if len(pods) != 3 {
			return false
		}
		for _, p := range pods {
			if !framework.PodRunning(p) {
				return false
			}
		}
		return true
	}, 2*time.Minute, 100*time.Millisecond, "3 pods (2 from the ReplicaSet, 1 from the DaemonSet) should run")
	durationFigure(t, "ReplicaSet(2)+DaemonSet to all Running", time.Since(start))
	require.NoError(t, counter.Err())
	assert.Equal(t, 3, counter.Created(), "pods ever created")
}
