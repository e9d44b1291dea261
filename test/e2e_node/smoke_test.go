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
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podadmission/podadmission/test/e2e_node/framework"
)

// The smoke tests are the short node e2e run of every maintained minor
// other than the default one (make test-e2e-node-smoke UPSTREAM=v1.36.3):
// that minor's kubelet, given with -e2e.kubelet, against the default
// minor's control plane. They check what a node operator relies on first:
// a plugin holds a controller's pod without thrashing, releasing the
// plugin starts it, and with the gate off the plugin is never called.

const (
	pluginSmoke     = "smoke-gate"
	reasonSmokeHeld = "E2ESmokeHeld"
	// smokeWindow is how long the held ReplicaSet pod is watched for a
	// replacement that must not come.
	smokeWindow = 15 * time.Second
)

var (
	smokeOnce sync.Once
	smokeErr  error
)

// useSmokeKubelet runs the kubelet with opts and installs the smoke plugin,
// a gate on a decision file that asks to be retried every second.
func useSmokeKubelet(t *testing.T, opts framework.KubeletOptions) {
	t.Helper()
	c := suite.Cluster
	usePluginKubelet(t, opts)
	installed := false
	smokeOnce.Do(func() {
		installed = true
		if smokeErr = framework.SetDecision(smokeDecisionFile(), "deny "+reasonSmokeHeld+" the e2e smoke gate is closed"); smokeErr != nil {
			return
		}
		plugin := execPlugin(pluginSmoke, "--decision-file="+smokeDecisionFile(), "--retry-after=1s")
		if smokeErr = c.InstallExecPlugin(pluginSmoke); smokeErr != nil {
			return
		}
		smokeErr = c.WritePluginConfig("80-smoke.yaml", plugin)
	})
	require.NoError(t, smokeErr, "installing the smoke plugin")
	if installed && opts.PodAdmission {
		// The kubelet already ran with plugins (in the whole suite): start it
		// again with the smoke plugin loaded rather than wait for its reload.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		require.NoError(t, c.RestartKubelet(ctx, opts), "restarting the kubelet with the smoke plugin")
	}
}

func smokeDecisionFile() string { return suite.Cluster.PluginFile(pluginSmoke + ".decision") }

// TestSmokeKubeletVersion: the node runs the kubelet binary the run was
// given, and reports its version to the API server.
func TestSmokeKubeletVersion(t *testing.T) {
	useSmokeKubelet(t, pluginKubelet)
	ctx := testContext(t, time.Minute)
	c := suite.Cluster
	out, err := exec.Command(c.Binaries.Kubelet, "--version").Output()
	require.NoError(t, err, "%s --version", c.Binaries.Kubelet)
	binary := strings.TrimPrefix(strings.TrimSpace(string(out)), "Kubernetes ")
	require.Contains(t, binary, "+podadmission.", "%s is not a podadmission kubelet", c.Binaries.Kubelet)
	node, err := c.Client.CoreV1().Nodes().Get(ctx, c.Options.NodeName, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, binary, node.Status.NodeInfo.KubeletVersion, "the node's kubeletVersion")
	server, err := c.Client.Discovery().ServerVersion()
	require.NoError(t, err)
	t.Logf("kubelet %s (%s) against kube-apiserver %s", binary, c.Binaries.Kubelet, server.GitVersion)
}

// TestSmokeHoldAndRelease: the plugin holds the only pod of a 1-replica
// ReplicaSet (Pending, reason and message, waiting containers, an event,
// nothing in the runtime) and the ReplicaSet creates no other pod; when
// the plugin admits, the same pod runs.
func TestSmokeHoldAndRelease(t *testing.T) {
	useSmokeKubelet(t, pluginKubelet)
	ctx := testContext(t, 4*time.Minute)
	ns := newNamespace(t, ctx)
	c := suite.Cluster
	require.NoError(t, framework.SetDecision(smokeDecisionFile(), "deny "+reasonSmokeHeld+" the e2e smoke gate is closed"))

	_, err := c.Client.AppsV1().ReplicaSets(ns).Create(ctx, c.NewReplicaSet(ns, "smoke", 1, framework.PluginLabels(pluginSmoke)), metav1.CreateOptions{})
	require.NoError(t, err)
	var pods *corev1.PodList
	require.Eventually(t, func() bool {
		pods, err = c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		return err == nil && len(pods.Items) == 1
	}, time.Minute, 200*time.Millisecond, "the ReplicaSet should create its pod")
	name := pods.Items[0].Name
	held := waitBlocked(t, ctx, ns, name, reasonSmokeHeld)
	assertSoftBlocked(t, ctx, held, pluginSmoke, reasonSmokeHeld)

	time.Sleep(smokeWindow)
	pods, err = c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, pods.Items, 1, "pods of the ReplicaSet after %s held", smokeWindow)
	assert.Equal(t, name, pods.Items[0].Name, "the held pod was replaced")
	assert.Equal(t, corev1.PodPending, pods.Items[0].Status.Phase, "the held pod's phase")

	require.NoError(t, framework.SetDecision(smokeDecisionFile(), "allow"))
	_, _, err = framework.WaitForPod(ctx, c.Client, ns, name, 2*time.Minute, framework.PodRunning)
	require.NoError(t, err, "the held pod should run once the plugin admits it")
	pods, err = c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	assert.Len(t, pods.Items, 1, "pods of the ReplicaSet once it runs")
}

// TestSmokeGateOff: with the plugin configuration in place and the gate
// off, a pod the plugin would hold runs and the plugin is never called.
func TestSmokeGateOff(t *testing.T) {
	useSmokeKubelet(t, gateOffKubelet)
	ctx := testContext(t, 3*time.Minute)
	ns := newNamespace(t, ctx)
	c := suite.Cluster
	require.NoError(t, framework.SetDecision(smokeDecisionFile(), "deny "+reasonSmokeHeld+" the e2e smoke gate is closed"))
	logFile := c.PluginFile(pluginSmoke + ".log")
	callsBefore := pluginCalls(t, logFile)

	pod, err := c.Client.CoreV1().Pods(ns).Create(ctx, c.NewPod(ns, "ungated", framework.PluginLabels(pluginSmoke)), metav1.CreateOptions{})
	require.NoError(t, err)
	_, _, err = framework.WaitForPod(ctx, c.Client, ns, pod.Name, 2*time.Minute, framework.PodRunning)
	require.NoError(t, err, "with the gate off the pod should run although its plugin denies it")
	assert.Equal(t, callsBefore, pluginCalls(t, logFile), "the plugin must never be called with the gate off")
}
