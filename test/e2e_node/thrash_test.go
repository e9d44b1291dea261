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
	"context"
	"flag"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podadmission/podadmission/test/e2e_node/crirecord"
	"github.com/podadmission/podadmission/test/e2e_node/framework"
)

// thrashWindow is how long the thrash tests watch a controller; the issue
// fixes it at 120 s, shorter values are for iterating on the tests.
var thrashWindow = flag.Duration("e2e.thrash-window", 120*time.Second, "how long the thrash tests count the pods a controller creates")

// controllerKind makes the controller under test.
type controllerKind struct {
	name   string
	create func(ctx context.Context, c *framework.Cluster, ns string, labels map[string]string) error
}

var (
	replicaSet = controllerKind{"ReplicaSet", func(ctx context.Context, c *framework.Cluster, ns string, labels map[string]string) error {
		_, err := c.Client.AppsV1().ReplicaSets(ns).Create(ctx, c.NewReplicaSet(ns, "thrash", 1, labels), metav1.CreateOptions{})
		return err
	}}
	daemonSet = controllerKind{"DaemonSet", func(ctx context.Context, c *framework.Cluster, ns string, labels map[string]string) error {
		_, err := c.Client.AppsV1().DaemonSets(ns).Create(ctx, c.NewDaemonSet(ns, "thrash", labels), metav1.CreateOptions{})
		return err
	}}
)

// runController creates the controller with pods that plugin evaluates,
// counts the pods it creates over the thrash window and returns them.
func runController(t *testing.T, ctx context.Context, kind controllerKind, plugin string) []*corev1.Pod {
	t.Helper()
	c := suite.Cluster
	ns := newNamespace(t, ctx)
	counter, err := framework.CountPods(ctx, c.Client, ns)
	require.NoError(t, err)
	defer counter.Stop()

	start := time.Now()
	require.NoError(t, kind.create(ctx, c, ns, framework.PluginLabels(plugin)))
	select {
	case <-time.After(*thrashWindow):
	case <-ctx.Done():
		t.Fatalf("context ended during the window: %v", ctx.Err())
	}
	counter.Stop()
	require.NoError(t, counter.Err())
	t.Logf("%s with plugin %s: %d pods created in %s", kind.name, plugin, counter.Created(), time.Since(start).Round(time.Second))
	figure(t, "pods created in "+thrashWindow.String(), float64(counter.Created()), "pods")
	return counter.Pods()
}

// TestReplicaSetSoftRejection (issue 5, test 1): a plugin holds the only
// pod of a 1-replica ReplicaSet. Over the window exactly one pod is ever
// created, and it is held as the contract says, with no sandbox.
func TestReplicaSetSoftRejection(t *testing.T) {
	usePluginKubelet(t, pluginKubelet)
	t.Parallel()
	ctx := testContext(t, *thrashWindow+3*time.Minute)

	pods := runController(t, ctx, replicaSet, pluginDenySoft)
	require.Len(t, pods, 1, "pods the ReplicaSet created in %s", *thrashWindow)
	assertHeldNow(t, ctx, pods[0], pluginDenySoft, reasonDenySoft)
}

// TestReplicaSetHardRejection (issue 5, test 2): the baseline soft mode
// exists to remove. The same ReplicaSet with rejectionMode Hard: every pod
// fails, the controller replaces it, and more than one pod is created.
func TestReplicaSetHardRejection(t *testing.T) {
	usePluginKubelet(t, pluginKubelet)
	t.Parallel()
	ctx := testContext(t, *thrashWindow+3*time.Minute)

	pods := runController(t, ctx, replicaSet, pluginDenyHard)
	assert.Greater(t, len(pods), 1, "a hard rejection should make the ReplicaSet replace its pod")
	assertFailedNoSandbox(t, pods, reasonDenyHard)
}

// TestDaemonSet (issue 5, test 3): soft, the DaemonSet's pod is held and
// exactly one pod is created; hard, the count of pods the DaemonSet
// controller creates in the window is reported.
func TestDaemonSet(t *testing.T) {
	usePluginKubelet(t, pluginKubelet)
	t.Parallel()
	t.Run("Soft", func(t *testing.T) {
		t.Parallel()
		ctx := testContext(t, *thrashWindow+3*time.Minute)
		pods := runController(t, ctx, daemonSet, pluginDenySoft)
		require.Len(t, pods, 1, "pods the DaemonSet created in %s", *thrashWindow)
		assertHeldNow(t, ctx, pods[0], pluginDenySoft, reasonDenySoft)
	})
	t.Run("Hard", func(t *testing.T) {
		t.Parallel()
		ctx := testContext(t, *thrashWindow+3*time.Minute)
		pods := runController(t, ctx, daemonSet, pluginDenyHard)
		assert.GreaterOrEqual(t, len(pods), 1, "the DaemonSet should have created a pod")
		assertFailedNoSandbox(t, pods, reasonDenyHard)
	})
}

// assertHeldNow re-reads the pod and checks it is held by plugin.
func assertHeldNow(t *testing.T, ctx context.Context, pod *corev1.Pod, plugin, reason string) {
	t.Helper()
	current, err := suite.Cluster.Client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
	require.NoError(t, err, "the held pod should still exist")
	require.Equal(t, pod.UID, current.UID)
	assertSoftBlocked(t, ctx, current, plugin, reason)
}

// assertFailedNoSandbox checks that every pod failed with reason (the last
// may still be on its way) and none got a sandbox.
func assertFailedNoSandbox(t *testing.T, pods []*corev1.Pod, reason string) {
	t.Helper()
	calls := criCalls(t)
	failed := 0
	for _, p := range pods {
		if failedWith(reason)(p) {
			failed++
		}
		assert.Empty(t, crirecord.Filter(calls, "RunPodSandbox", string(p.UID)), "sandboxes for hard-rejected pod %s", p.Name)
	}
	assert.GreaterOrEqual(t, failed, len(pods)-1, "pods Failed with reason %s", reason)
}
