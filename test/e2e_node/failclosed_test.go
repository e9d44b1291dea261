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
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podadmission/podadmission/test/e2e_node/framework"
)

// reasonPluginFailed is the pod status reason of a plugin failure under
// failurePolicy Fail (pkg/kubelet/podadmission.ReasonPluginFailed).
const reasonPluginFailed = "PodAdmissionPluginFailed"

// TestFailClosedAndRecovery (issue 5, test 7): a plugin that is missing,
// hangs past its timeout or prints garbage holds the pod with a reason
// naming the plugin and the fault; the kubelet stays healthy; the pod
// starts once the fault is fixed.
func TestFailClosedAndRecovery(t *testing.T) {
	usePluginKubelet(t, pluginKubelet)
	t.Parallel()
	c := suite.Cluster

	faults := []struct {
		plugin string
		// fault is what the pod status message must say about the failure.
		fault string
		fix   func() error
		// undo puts the fault back for a later run of the suite's plugins.
		undo func() error
	}{
		{
			plugin: pluginFaultMissing,
			fault:  "does not exist",
			fix:    func() error { return c.InstallExecPlugin(pluginFaultMissing) },
			undo:   func() error { return c.RemovePluginBinary(pluginFaultMissing) },
		},
		{
			plugin: pluginFaultHang,
			fault:  "timeout of " + faultHangTimeout.String(),
			fix: func() error {
				return c.WritePluginConfig(faultConfigFile(pluginFaultHang), execPlugin(pluginFaultHang, "--mode=allow"))
			},
		},
		{
			plugin: pluginFaultGarbage,
			fault:  "invalid response",
			fix: func() error {
				return c.WritePluginConfig(faultConfigFile(pluginFaultGarbage), execPlugin(pluginFaultGarbage, "--mode=allow"))
			},
		},
	}
	for _, f := range faults {
		t.Run(f.plugin, func(t *testing.T) {
			t.Parallel()
			ctx := testContext(t, 5*time.Minute)
			ns := newNamespace(t, ctx)
			if f.undo != nil {
				t.Cleanup(func() { assert.NoError(t, f.undo()) })
			}

			pod, err := c.Client.CoreV1().Pods(ns).Create(ctx, c.NewPod(ns, "fault", framework.PluginLabels(f.plugin)), metav1.CreateOptions{})
			require.NoError(t, err)
			held := waitBlocked(t, ctx, ns, pod.Name, reasonPluginFailed)
			assertSoftBlocked(t, ctx, held, f.plugin, reasonPluginFailed)
			assert.Contains(t, held.Status.Message, f.fault, "the message should name the fault")
			t.Logf("held: %s", held.Status.Message)
			assertKubeletHealthy(t, ctx)

			fixed := time.Now()
			require.NoError(t, f.fix())
			_, at, err := framework.WaitForPod(ctx, c.Client, ns, pod.Name, 3*time.Minute, framework.PodRunning)
			require.NoError(t, err, "the pod should start once the fault is fixed")
			durationFigure(t, "fix to Running", at.Sub(fixed))
			assertKubeletHealthy(t, ctx)
		})
	}
}

// assertKubeletHealthy checks the kubelet's /healthz.
func assertKubeletHealthy(t *testing.T, ctx context.Context) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, suite.Cluster.Kubelet.HealthzURL, nil)
	require.NoError(t, err)
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Do(req)
	require.NoError(t, err, "kubelet /healthz")
	defer resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode, "kubelet /healthz")
}
