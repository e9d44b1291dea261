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
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podadmission/podadmission/test/e2e_node/crirecord"
	"github.com/podadmission/podadmission/test/e2e_node/framework"
)

const (
	restartPods = 5
	// restartObservation is how long the running pods are watched after
	// the restart: several kubelet sync periods of the pod workers.
	restartObservation = 30 * time.Second
)

// TestRestartSafety (issue 5, test 8): pods run, the plugin breaks, the
// kubelet restarts. Admission is sticky and pods that ran before a restart
// are never put through it again, so every running pod keeps running and
// the runtime sees no sandbox or container stopped, while a new pod is
// held by the broken plugin.
func TestRestartSafety(t *testing.T) {
	usePluginKubelet(t, pluginKubelet)
	ctx := testContext(t, 5*time.Minute)
	ns := newNamespace(t, ctx)
	c := suite.Cluster

	var running []*corev1.Pod
	for i := range restartPods {
		pod, err := c.Client.CoreV1().Pods(ns).Create(ctx, c.NewPod(ns, fmt.Sprintf("running-%d", i), framework.PluginLabels(pluginRestart)), metav1.CreateOptions{})
		require.NoError(t, err)
		pod, _, err = framework.WaitForPod(ctx, c.Client, ns, pod.Name, 2*time.Minute, framework.PodRunning)
		require.NoError(t, err)
		running = append(running, pod)
	}

	// Break the plugin (its executable is gone: fail closed) and restart.
	require.NoError(t, c.RemovePluginBinary(pluginRestart))
	t.Cleanup(func() { assert.NoError(t, c.InstallExecPlugin(pluginRestart)) })
	journalBefore := len(criCalls(t))
	restart := time.Now()
	require.NoError(t, c.RestartKubelet(ctx, pluginKubelet))
	durationFigure(t, "kubelet restart to node Ready", time.Since(restart))

	// The broken plugin does hold a new pod: it is really broken.
	fresh, err := c.Client.CoreV1().Pods(ns).Create(ctx, c.NewPod(ns, "after-restart", framework.PluginLabels(pluginRestart)), metav1.CreateOptions{})
	require.NoError(t, err)
	held := waitBlocked(t, ctx, ns, fresh.Name, reasonPluginFailed)
	assert.Contains(t, held.Status.Message, `"`+pluginRestart+`"`)

	time.Sleep(time.Until(restart.Add(restartObservation)))
	for _, before := range running {
		now, err := c.Client.CoreV1().Pods(ns).Get(ctx, before.Name, metav1.GetOptions{})
		require.NoError(t, err)
		assert.True(t, framework.PodRunning(now), "%s should still run: %s", now.Name, framework.DescribePod(now))
		require.Len(t, now.Status.ContainerStatuses, 1)
		assert.Equal(t, before.Status.ContainerStatuses[0].ContainerID, now.Status.ContainerStatuses[0].ContainerID, "%s kept its container", now.Name)
		assert.Zero(t, now.Status.ContainerStatuses[0].RestartCount, "%s restarts", now.Name)
	}
	sinceRestart := criCalls(t)[journalBefore:]
	for _, pod := range running {
		for _, method := range []string{"StopPodSandbox", "RemovePodSandbox", "StopContainer", "RemoveContainer", "RunPodSandbox", "CreateContainer"} {
			assert.Empty(t, crirecord.Filter(sinceRestart, method, string(pod.UID)), "%s for running pod %s after the restart", method, pod.Name)
		}
	}
	require.NoError(t, c.InstallExecPlugin(pluginRestart))
	_, _, err = framework.WaitForPod(ctx, c.Client, ns, fresh.Name, 150*time.Second, framework.PodRunning)
	require.NoError(t, err, "the held pod should start once the plugin is back")
}
