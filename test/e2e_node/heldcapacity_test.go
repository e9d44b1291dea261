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
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podadmission/podadmission/test/e2e_node/crirecord"
	"github.com/podadmission/podadmission/test/e2e_node/framework"
)

// The tests of this file prove that a held pod is not admitted by the
// kubelet's own admission yet: it is allocated nothing and counted in no
// other pod's admission, and once released it goes through that admission
// like a new pod, whose rejection is upstream's word for word. The CPU
// tests do not run in parallel: they share the node's CPU.
//
// Their pods are bound to the node by spec.nodeName, as DaemonSet and
// static pods are: the scheduler counts a bound pod's requests whether the
// kubelet holds it or not, so only pods it does not place reach the
// kubelet with more than the node has; the kubelet's own admission is then
// the only check.

// widgetResource is the extended resource of the test's device plugin.
const widgetResource = "e2e.podadmission.io/widget"

// TestHeldPodHoldsNoDevice (issue 11): a device plugin has one device.
// Pod A asks for it and is held; pod B asks for it and runs; A is
// released and the kubelet's device admission rejects it, with the reason
// and message upstream gives the same pod created with no plugin (pod C,
// created while B has the device). The plugin was asked to allocate once:
// for B. While held, and once rejected, A has no pod cgroup in any
// hierarchy; B has its own under its QoS class's parent.
func TestHeldPodHoldsNoDevice(t *testing.T) {
	usePluginKubelet(t, pluginKubelet)
	ctx := testContext(t, 5*time.Minute)
	c := suite.Cluster
	ns := newNamespace(t, ctx)
	devices, err := c.StartDevicePlugin(ctx, widgetResource, 1)
	require.NoError(t, err)
	defer devices.Stop()
	gate := holdGate(c)
	require.NoError(t, gate.Close())

	widgetPod := func(name string, labels map[string]string) *corev1.Pod {
		pod := c.NewPod(ns, name, labels)
		pod.Spec.NodeName = c.Options.NodeName
		pod.Spec.Containers[0].Resources.Limits = corev1.ResourceList{widgetResource: resource.MustParse("1")}
		return pod
	}
	a := createPod(t, ctx, widgetPod("held", framework.PluginLabels(gate.Plugin)))
	waitBlocked(t, ctx, ns, a.Name, gate.Reason)
	b := createPod(t, ctx, widgetPod("fits", nil))
	runningB, _ := waitRunning(t, ctx, ns, b.Name, time.Minute, "pod B should get the device the held pod A does not have")
	assert.Len(t, devices.Allocations(), 1, "device allocations: pod B's only, none for the held pod A")
	assertNoPodCgroup(t, a)
	assertPodCgroup(t, runningB)

	reference := upstreamRejection(t, ctx, widgetPod("reference", nil))
	released := releaseAndWaitFailed(t, ctx, gate, a)
	assert.Equal(t, reference.Status.Reason, released.Status.Reason, "reason of the released pod = upstream's")
	assert.Equal(t, reference.Status.Message, released.Status.Message, "message of the released pod = upstream's")
	assert.Len(t, devices.Allocations(), 1, "device allocations after the release")
	assertNoRuntimeWork(t, released)
	assertNoPodCgroup(t, released)
	assertStillRunning(t, ctx, b)
}

// TestHeldPodHoldsNoCPU (issue 11): held pod A requests 70 % of the node's
// allocatable CPU; pod B, 50 %, fits only if A is not counted, and runs;
// A released is rejected OutOfcpu with upstream's message (that of pod C,
// A's spec with no plugin, created while B runs). While held, and once
// rejected, A has no pod cgroup in any hierarchy; B (Burstable) has its
// own under kubepods/burstable.
func TestHeldPodHoldsNoCPU(t *testing.T) {
	usePluginKubelet(t, pluginKubelet)
	ctx := testContext(t, 5*time.Minute)
	c := suite.Cluster
	ns := newNamespace(t, ctx)
	allocatable := allocatableCPU(t, ctx)
	gate := holdGate(c)
	require.NoError(t, gate.Close())

	a := createPod(t, ctx, cpuPod(ns, "held", allocatable*7/10, framework.PluginLabels(gate.Plugin)))
	waitBlocked(t, ctx, ns, a.Name, gate.Reason)
	b := createPod(t, ctx, cpuPod(ns, "fits", allocatable/2, nil))
	runningB, _ := waitRunning(t, ctx, ns, b.Name, time.Minute,
		fmt.Sprintf("pod B (%dm of %dm) should run: the held pod A (%dm) holds no CPU", allocatable/2, allocatable, allocatable*7/10))
	assertNoPodCgroup(t, a)
	assert.Equal(t, corev1.PodQOSBurstable, runningB.Status.QOSClass, "QoS class of pod B")
	assertPodCgroup(t, runningB)
	shares, err := framework.BurstableCPUShares()
	require.NoError(t, err)
	assert.Less(t, shares, framework.MilliCPUToShares(allocatable*7/10+allocatable/2),
		"kubepods/burstable's CPU weight counts pod B's request (%d shares), not the held pod A's", framework.MilliCPUToShares(allocatable/2))
	assert.GreaterOrEqual(t, shares, framework.MilliCPUToShares(allocatable/2), "kubepods/burstable's CPU weight counts pod B's request")

	reference := upstreamRejection(t, ctx, cpuPod(ns, "reference", allocatable*7/10, nil))
	assert.Equal(t, "OutOfcpu", reference.Status.Reason, "upstream's reason for pod C")
	released := releaseAndWaitFailed(t, ctx, gate, a)
	assert.Equal(t, reference.Status.Reason, released.Status.Reason, "reason of the released pod = upstream's")
	assert.Equal(t, reference.Status.Message, released.Status.Message, "message of the released pod = upstream's")
	assertNoRuntimeWork(t, released)
	assertNoPodCgroup(t, released)
	assertStillRunning(t, ctx, b)
}

// TestHeldPodsOverCapacity (issue 11): 110 pods, each requesting 1 % of
// the node's allocatable CPU, are held, then released by one push. The
// kubelet admits them one after the other against the node as it is:
// exactly the 10 that do not fit are rejected, OutOfcpu with upstream's
// message, each written Failed once and never admitted after; the sum of
// the requests of the admitted pods never exceeds allocatable on any
// status the API server showed.
func TestHeldPodsOverCapacity(t *testing.T) {
	usePluginKubelet(t, pluginKubelet)
	ctx := testContext(t, 8*time.Minute)
	c := suite.Cluster
	ns := newNamespace(t, ctx)
	allocatable := allocatableCPU(t, ctx)
	request := allocatable / 100
	room := allocatable / request
	pods := int(room) + 10
	t.Logf("allocatable CPU %dm, %dm per pod: room for %d of %d pods", allocatable, request, room, pods)
	gate := holdGate(c)
	require.NoError(t, gate.Close())
	counter, err := framework.CountPods(ctx, c.Client, ns)
	require.NoError(t, err)
	defer counter.Stop()

	uids := make([]types.UID, pods)
	var wg sync.WaitGroup
	errs := make([]error, pods)
	for i := range pods {
		wg.Go(func() {
			pod, err := c.Client.CoreV1().Pods(ns).Create(ctx, cpuPod(ns, fmt.Sprintf("pod-%03d", i), request, framework.PluginLabels(gate.Plugin)), metav1.CreateOptions{})
			if err == nil {
				uids[i] = pod.UID
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	heldByGate := func(p *corev1.Pod) bool { return blockedWith(gate.Reason)(p) }
	eventually(t, ctx, 2*time.Minute, func() (bool, error) {
		if n := countPods(counter, func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed }); n > 0 {
			return false, fmt.Errorf("%d pods failed before the push", n)
		}
		return countPods(counter, heldByGate) == pods, nil
	},
		func() string {
			return fmt.Sprintf("all %d pods should be held before the push; now: %s", pods, summarize(counter))
		})

	opened, err := gate.Open()
	require.NoError(t, err)
	settled := func(p *corev1.Pod) bool { return framework.PodRunning(p) || p.Status.Phase == corev1.PodFailed }
	eventually(t, ctx, 5*time.Minute, func() (bool, error) { return countPods(counter, settled) == pods, nil },
		func() string { return "every released pod should run or be rejected; now: " + summarize(counter) })
	durationFigure(t, fmt.Sprintf("push to all %d pods Running or Failed", pods), time.Since(opened))

	running := 0
	var rejected []*corev1.Pod
	for _, p := range counter.Pods() {
		if p.Status.Phase == corev1.PodFailed {
			rejected = append(rejected, p)
		} else {
			running++
		}
	}
	assert.Len(t, rejected, pods-int(room), "pods rejected: exactly those that do not fit")
	assert.Equal(t, int(room), running, "pods running: as many as fit")
	reference := upstreamRejection(t, ctx, cpuPod(ns, "reference", request, nil))
	for _, p := range rejected {
		assert.Equal(t, reference.Status.Reason, p.Status.Reason, "reason of rejected pod %s = upstream's", p.Name)
		assert.Equal(t, reference.Status.Message, p.Status.Message, "message of rejected pod %s = upstream's", p.Name)
	}
	assertNoOvercommit(t, counter, ns, allocatable)
	calls := criCalls(t)
	for _, p := range rejected {
		assert.Empty(t, crirecord.Filter(calls, "RunPodSandbox", string(p.UID)), "sandboxes of rejected pod %s", p.Name)
	}
}

// assertNoOvercommit replays every status the watch of counter showed: the
// CPU requests of the pods admitted at that point (Running, or
// PodAdmitted True, and not Failed) never exceed allocatable; no pod turns
// Failed twice; none is admitted after it was rejected.
func assertNoOvercommit(t *testing.T, counter *framework.PodCounter, namespace string, allocatable int64) {
	t.Helper()
	current := map[types.UID]*corev1.Pod{}
	failedAt := map[types.UID]int{}
	maxAdmitted := int64(0)
	for i, o := range counter.History() {
		p := o.Pod
		if p.Namespace != namespace || p.DeletionTimestamp != nil {
			continue
		}
		before := current[p.UID]
		current[p.UID] = p
		wasFailed := before != nil && before.Status.Phase == corev1.PodFailed
		switch {
		case p.Status.Phase == corev1.PodFailed && !wasFailed:
			failedAt[p.UID]++
			if failedAt[p.UID] > 1 {
				t.Errorf("pod %s turned Failed %d times (observation %d)", p.Name, failedAt[p.UID], i)
			}
		case p.Status.Phase != corev1.PodFailed && wasFailed:
			t.Errorf("pod %s was rejected, then shown %s (observation %d)", p.Name, framework.DescribePod(p), i)
		}
		sum := int64(0)
		for _, q := range current {
			if q.Status.Phase != corev1.PodFailed && (framework.PodRunning(q) || framework.PodAdmittedIs(corev1.ConditionTrue)(q)) {
				sum += q.Spec.Containers[0].Resources.Requests.Cpu().MilliValue()
			}
		}
		maxAdmitted = max(maxAdmitted, sum)
		if sum > allocatable {
			t.Errorf("observation %d at %s: admitted pods request %dm CPU, more than the node's %dm", i, o.Time.Format(time.StampMilli), sum, allocatable)
		}
	}
	t.Logf("most CPU requested by admitted pods at any observation: %dm of %dm", maxAdmitted, allocatable)
}

// cpuPod is a test pod requesting milliCPU, bound to the node.
func cpuPod(namespace, name string, milliCPU int64, labels map[string]string) *corev1.Pod {
	pod := suite.Cluster.NewPod(namespace, name, labels)
	pod.Spec.NodeName = suite.Cluster.Options.NodeName
	pod.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: *resource.NewMilliQuantity(milliCPU, resource.DecimalSI)}
	return pod
}

// allocatableCPU is the node's allocatable CPU in millicores.
func allocatableCPU(t *testing.T, ctx context.Context) int64 {
	t.Helper()
	node, err := suite.Cluster.Client.CoreV1().Nodes().Get(ctx, suite.Cluster.Options.NodeName, metav1.GetOptions{})
	require.NoError(t, err)
	return node.Status.Allocatable.Cpu().MilliValue()
}

func createPod(t *testing.T, ctx context.Context, pod *corev1.Pod) *corev1.Pod {
	t.Helper()
	created, err := suite.Cluster.Client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	require.NoError(t, err)
	return created
}

// upstreamRejection creates pod, which no plugin looks at and which does
// not fit the node, and returns it as the kubelet's own admission rejected
// it: the reason and message upstream gives.
func upstreamRejection(t *testing.T, ctx context.Context, pod *corev1.Pod) *corev1.Pod {
	t.Helper()
	start := time.Now()
	created := createPod(t, ctx, pod)
	rejected, at, err := framework.WaitForPod(ctx, suite.Cluster.Client, pod.Namespace, created.Name, time.Minute, func(p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodFailed
	})
	require.NoError(t, err, "pod %s, created with no plugin, should not fit the node", pod.Name)
	durationFigure(t, "reference: create to Failed, no plugin", at.Sub(start))
	t.Logf("upstream rejects %s: %s: %s", pod.Name, rejected.Status.Reason, rejected.Status.Message)
	return rejected
}

// releaseAndWaitFailed opens the gate and waits for the kubelet's own
// admission to reject the held pod.
func releaseAndWaitFailed(t *testing.T, ctx context.Context, gate framework.Gate, pod *corev1.Pod) *corev1.Pod {
	t.Helper()
	opened, err := gate.Open()
	require.NoError(t, err)
	failed, at, err := framework.WaitForPod(ctx, suite.Cluster.Client, pod.Namespace, pod.Name, gateOpenBound, func(p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodFailed || framework.PodRunning(p)
	})
	require.NoError(t, err, "the released pod %s should be rejected within %s", pod.Name, gateOpenBound)
	require.Equal(t, corev1.PodFailed, failed.Status.Phase, "the released pod %s should be rejected, not run: %s", pod.Name, framework.DescribePod(failed))
	durationFigure(t, "release (push) to Failed", at.Sub(opened))
	return failed
}

// assertStillRunning checks that the pod runs, with its first container.
func assertStillRunning(t *testing.T, ctx context.Context, pod *corev1.Pod) {
	t.Helper()
	now, err := suite.Cluster.Client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
	require.NoError(t, err)
	assert.True(t, framework.PodRunning(now), "pod %s should still run: %s", pod.Name, framework.DescribePod(now))
	if len(now.Status.ContainerStatuses) == 1 {
		assert.Zero(t, now.Status.ContainerStatuses[0].RestartCount, "restarts of pod %s", pod.Name)
	}
}

func countPods(counter *framework.PodCounter, cond framework.PodCondition) int {
	n := 0
	for _, p := range counter.Pods() {
		if cond(p) {
			n++
		}
	}
	return n
}

// summarize counts the pods of counter by phase and reason.
func summarize(counter *framework.PodCounter) string {
	counts := map[string]int{}
	for _, p := range counter.Pods() {
		key := string(p.Status.Phase)
		if p.Status.Reason != "" {
			key += "/" + p.Status.Reason
		}
		if framework.PodRunning(p) {
			key = "Running"
		}
		counts[key]++
	}
	return fmt.Sprint(counts)
}
