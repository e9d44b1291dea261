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
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/podadmission/podadmission/test/e2e_node/crirecord"
	"github.com/podadmission/podadmission/test/e2e_node/framework"
)

// newNamespace creates a namespace for t and deletes it when t ends.
func newNamespace(t *testing.T, ctx context.Context) string {
	t.Helper()
	return suite.Namespace(t, ctx)
}

// criCalls reads the CRI journal.
func criCalls(t *testing.T) []crirecord.Call {
	t.Helper()
	calls, err := crirecord.ReadJournal(suite.Cluster.CRIJournal())
	require.NoError(t, err)
	return calls
}

// figure records a measured figure of t and logs it.
func figure(t *testing.T, name string, value float64, unit string) {
	t.Helper()
	suite.Figure(t, name, value, unit)
}

func durationFigure(t *testing.T, name string, d time.Duration) {
	t.Helper()
	suite.Duration(t, name, d)
}

// eventually polls cond every 50 ms until it returns true, and fails t
// with what() (evaluated then, so it can say what the state is) if it
// does not within timeout, or at once if cond returns an error (a state
// the wait cannot leave).
func eventually(t *testing.T, ctx context.Context, timeout time.Duration, cond func() (bool, error), what func() string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, timeout, true, func(context.Context) (bool, error) { return cond() })
	if err != nil {
		t.Fatalf("%s: %v", what(), err)
	}
}

// waitRunning waits until the pod runs and returns it and the time of the
// watch event; a pod that fails instead fails t at once.
func waitRunning(t *testing.T, ctx context.Context, namespace, name string, timeout time.Duration, why string) (*corev1.Pod, time.Time) {
	t.Helper()
	pod, at, err := framework.WaitForPod(ctx, suite.Cluster.Client, namespace, name, timeout, func(p *corev1.Pod) bool {
		return framework.PodRunning(p) || p.Status.Phase == corev1.PodFailed
	})
	require.NoError(t, err, why)
	require.True(t, framework.PodRunning(pod), "%s: %s", why, framework.DescribePod(pod))
	return pod, at
}

// testContext is a context that ends with t (or after timeout).
func testContext(t *testing.T, timeout time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	return ctx
}

// assertNoPodCgroup checks that the pod has no cgroup in any hierarchy:
// the kubelet (cgroupsPerQOS) makes one for a pod only once it is
// admitted, and so does the runtime for its sandbox.
func assertNoPodCgroup(t *testing.T, pod *corev1.Pod) {
	t.Helper()
	cgroups, err := framework.PodCgroups(pod.UID)
	require.NoError(t, err)
	assert.Empty(t, cgroups, "cgroups of pod %s (uid %s), which was never admitted", pod.Name, pod.UID)
}

// assertPodCgroup checks that the running pod has its cgroup under its QoS
// class's parent in every hierarchy, and nowhere else.
func assertPodCgroup(t *testing.T, pod *corev1.Pod) {
	t.Helper()
	assert.NoError(t, framework.CheckPodCgroups(pod), "cgroups of the admitted pod %s", pod.Name)
}
