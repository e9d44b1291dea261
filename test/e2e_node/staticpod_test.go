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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podadmission/podadmission/test/e2e_node/framework"
)

const reasonStaticHeld = "E2EStaticHeld"

// TestStaticPod (issue 5, test 4): a plugin holds a static pod; its mirror
// pod shows the held status; the plugin then allows it and the static pod
// runs without a kubelet restart.
func TestStaticPod(t *testing.T) {
	usePluginKubelet(t, pluginKubelet)
	t.Parallel()
	ctx := testContext(t, 5*time.Minute)
	ns := newNamespace(t, ctx)
	c := suite.Cluster
	decision := c.PluginFile(pluginStatic + ".decision")
	require.NoError(t, framework.SetDecision(decision, "deny "+reasonStaticHeld+" the e2e static gate is closed"))
	kubeletPid, kubeletStarts := c.Kubelet.Process().Pid(), c.Kubelet.Starts()

	static := c.NewPod(ns, "held", framework.PluginLabels(pluginStatic))
	require.NoError(t, c.WriteStaticPod(static))
	t.Cleanup(func() {
		require.NoError(t, c.RemoveStaticPod(static))
		require.Eventually(t, func() bool {
			_, err := c.Client.CoreV1().Pods(ns).Get(ctx, c.MirrorPodName(static.Name), metav1.GetOptions{})
			return apierrors.IsNotFound(err)
		}, 2*time.Minute, 200*time.Millisecond, "the mirror pod should go with the manifest")
	})

	mirror := waitBlocked(t, ctx, ns, c.MirrorPodName(static.Name), reasonStaticHeld)
	assertSoftBlocked(t, ctx, mirror, pluginStatic, reasonStaticHeld)
	calls, err := framework.ReadPluginLog(c.PluginFile(pluginStatic + ".log"))
	require.NoError(t, err)
	forPod := framework.CallsFor(calls, string(kubeletUID(mirror)))
	require.NotEmpty(t, forPod, "the plugin should have been asked about the static pod")
	for _, call := range forPod {
		assert.True(t, call.Static, "the request for a static pod says static=true")
	}

	allowed := time.Now()
	require.NoError(t, framework.SetDecision(decision, "allow"))
	_, at, err := framework.WaitForPod(ctx, c.Client, ns, c.MirrorPodName(static.Name), 2*time.Minute, framework.PodRunning)
	require.NoError(t, err, "the static pod should run once the plugin allows it")
	durationFigure(t, "allow to mirror pod Running", at.Sub(allowed))

	assert.Equal(t, kubeletPid, c.Kubelet.Process().Pid(), "the kubelet must not have been restarted")
	assert.Equal(t, kubeletStarts, c.Kubelet.Starts(), "the kubelet must not have been restarted")
}
