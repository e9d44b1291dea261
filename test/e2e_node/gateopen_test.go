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
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podadmission/podadmission/test/e2e_node/crirecord"
	"github.com/podadmission/podadmission/test/e2e_node/framework"
)

// gateOpenPods is how many held pods are let go by one push in
// TestGateOpens, and gatePushSamples how many pods TestGateOpensPerPod
// measures one at a time (the issue asks for at least 20).
const (
	gateOpenPods    = 25
	gatePushSamples = 20
)

// grpcGateRetryAfter is the retryAfterSeconds the GRPC gate answers with:
// the kubelet evaluates its held pods again only after this long, unless
// the plugin pushes. Every pod running well within it (gateOpenBound)
// proves the push admitted it.
const (
	grpcGateRetryAfter = 60 * time.Second
	gateOpenBound      = 10 * time.Second
)

// grpcGateReason is what the GRPC gate's decision file denies with.
const grpcGateReason = "E2EGateClosed"

// newGRPCGate is a GRPC gate daemon of the suite (installSuitePlugins
// starts it): the test plugin holding the pods labelled plugin with reason
// until its decision file allows, asking for a retry only after
// grpcGateRetryAfter.
func newGRPCGate(c *framework.Cluster, plugin, reason string) framework.Gate {
	return framework.Gate{
		Plugin:       plugin,
		DecisionFile: c.PluginFile(plugin + ".decision"),
		Reason:       reason,
		Message:      "the e2e " + plugin + " is closed",
		LogFile:      c.PluginFile(plugin + ".log"),
		RetryAfter:   grpcGateRetryAfter,
	}
}

// grpcGate is the gate of the gate-open tests.
func grpcGate(c *framework.Cluster) framework.Gate {
	return newGRPCGate(c, pluginGRPCGate, grpcGateReason)
}

// holdGate is the gate of the tests that prove a held pod holds nothing.
func holdGate(c *framework.Cluster) framework.Gate {
	return newGRPCGate(c, pluginHoldGate, reasonHoldGate)
}

// TestGateOpens (issue 5, test 5, throughput): a GRPC plugin holds 25 pods
// and asks not to be asked again for a minute; then its decision changes
// and it pushes a re-evaluation of all of them. Every pod must run within
// seconds, so the push, not the retry time, admitted it. The time from
// the push to Running is mostly the runtime starting 25 pods at once,
// which the same pods created with no plugin show; TestGateOpensPerPod
// measures the latency of a push.
func TestGateOpens(t *testing.T) {
	usePluginKubelet(t, pluginKubelet)
	ctx := testContext(t, 5*time.Minute)
	c := suite.Cluster
	startWithoutPlugin := startTimes(t, ctx, gateOpenPods)
	durationFigure(t, "reference: create to Running p99, no plugin", framework.Percentile(startWithoutPlugin, 99))

	ns := newNamespace(t, ctx)
	gate := grpcGate(c)
	require.NoError(t, gate.Close())

	counter, err := framework.CountPods(ctx, c.Client, ns)
	require.NoError(t, err)
	defer counter.Stop()
	uids := make([]types.UID, 0, gateOpenPods)
	for i := range gateOpenPods {
		pod, err := c.Client.CoreV1().Pods(ns).Create(ctx, c.NewPod(ns, fmt.Sprintf("gated-%02d", i), framework.PluginLabels(pluginGRPCGate)), metav1.CreateOptions{})
		require.NoError(t, err)
		uids = append(uids, pod.UID)
	}
	heldSince := time.Now()
	for i := range gateOpenPods {
		pod := waitBlocked(t, ctx, ns, fmt.Sprintf("gated-%02d", i), grpcGateReason)
		if i == 0 {
			assertSoftBlocked(t, ctx, pod, pluginGRPCGate, grpcGateReason)
		}
	}
	durationFigure(t, fmt.Sprintf("create %d pods to all held", gateOpenPods), time.Since(heldSince))
	for _, uid := range uids {
		assert.Empty(t, crirecord.Filter(criCalls(t), "RunPodSandbox", string(uid)), "no sandbox while held")
	}

	// The runtime starts these pods no faster than it started them with no
	// plugin, and a loaded node (containerd 2.x sandboxes under CPU
	// contention) starts the second batch of 25 up to half again as slowly
	// as the first: the bound is gateOpenBound on top of twice the
	// reference's slowest start. It must end well before the plugin's retry
	// time, or the test could not tell a push from the retry.
	bound := gateOpenBound + 2*framework.Percentile(startWithoutPlugin, 100)
	require.Less(t, time.Since(heldSince)+bound, grpcGateRetryAfter,
		"this node starts %d pods too slowly (%s with no plugin) to tell a push from the retry after %s", gateOpenPods, framework.Percentile(startWithoutPlugin, 100), grpcGateRetryAfter)

	// Open the gate: the daemon sees the file change and pushes.
	opened, err := gate.Open()
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		for _, uid := range uids {
			if _, ok := counter.RunningAt(uid); !ok {
				return false
			}
		}
		return true
	}, bound, 50*time.Millisecond, "every held pod should run within %s of the push (the plugin asked for a retry after %s)", bound, grpcGateRetryAfter)

	latencies := make([]time.Duration, 0, len(uids))
	for _, uid := range uids {
		at, _ := counter.RunningAt(uid)
		latencies = append(latencies, at.Sub(opened))
	}
	t.Logf("gate opened at %s; first pod Running after %s, last after %s", opened.Format("15:04:05.000"),
		framework.Percentile(latencies, 0).Round(time.Millisecond), framework.Percentile(latencies, 100).Round(time.Millisecond))
	p50, p99 := framework.Percentile(latencies, 50), framework.Percentile(latencies, 99)
	// Starting the pods is most of the figure: compare with the reference.
	durationFigure(t, "all at once: gate open to Running p50", p50)
	durationFigure(t, "all at once: gate open to Running p99", p99)
	durationFigure(t, "all at once: gate open to Running max", framework.Percentile(latencies, 100))

	calls := criCalls(t)
	for _, uid := range uids {
		assert.Len(t, crirecord.Filter(calls, "RunPodSandbox", string(uid)), 1, "one sandbox per pod, after the gate opened")
	}
	assert.Equal(t, gateOpenPods, counter.Created(), "pods ever created")
	require.NoError(t, counter.Err())
}

// TestGateOpensPerPod (issue 5, test 5, latency): one pod at a time, the
// GRPC plugin holds a pod (asking not to be asked again for a minute),
// then its decision changes at a random instant and it pushes a
// re-evaluation. Each pod must run within seconds of the push and before
// the retry time, with exactly two plugin calls and its one sandbox
// created after the push, and the kubelet's log must say that the push
// woke it. Each sample is followed by a pod no plugin looks at, the
// reference for starting a pod. Reports the time from the push to Running
// and its parts (delivery, wake, start); the goal,
// framework.PushToRunningP99Goal, is the benchmark's.
func TestGateOpensPerPod(t *testing.T) {
	usePluginKubelet(t, pluginKubelet)
	ctx := testContext(t, 5*time.Minute)
	c := suite.Cluster
	ns := newNamespace(t, ctx)
	counter, err := framework.CountPods(ctx, c.Client, ns)
	require.NoError(t, err)
	defer counter.Stop()

	samples, reference, err := c.MeasurePushes(ctx, counter, grpcGate(c), c.NewPod, ns, gatePushSamples, gateOpenBound)
	require.NoError(t, err)
	suite.PushFigures(t, "one pod", samples, reference)
	latencies := make([]time.Duration, 0, len(samples))
	for _, s := range samples {
		latencies = append(latencies, s.PushToRunning())
	}
	// The goal is the benchmark's (make bench-e2e); here it is reported.
	goal := framework.PushToRunningP99Goal(c.Runtime.Mode())
	if p99 := framework.Percentile(latencies, 99); p99 <= goal {
		t.Logf("goal met: p99 %s <= %s", p99.Round(time.Millisecond), goal)
	} else {
		t.Logf("goal MISSED: p99 %s > %s", p99.Round(time.Millisecond), goal)
	}
	assert.Equal(t, 2*gatePushSamples, counter.Created(), "pods ever created")
	require.NoError(t, counter.Err())
}

// startTimes creates n pods no plugin looks at, all at once, and returns
// each one's time from its creation to Running: the runtime's share of
// the gate-open figure. The pods are deleted before it returns.
func startTimes(t *testing.T, ctx context.Context, n int) []time.Duration {
	t.Helper()
	c := suite.Cluster
	ns, err := c.CreateNamespace(ctx, t.Name()+"-reference")
	require.NoError(t, err)
	defer func() { require.NoError(t, c.DeleteNamespace(ctx, ns)) }()
	counter, err := framework.CountPods(ctx, c.Client, ns)
	require.NoError(t, err)
	defer counter.Stop()
	created := map[types.UID]time.Time{}
	for i := range n {
		pod, err := c.Client.CoreV1().Pods(ns).Create(ctx, c.NewPod(ns, fmt.Sprintf("reference-%02d", i), nil), metav1.CreateOptions{})
		require.NoError(t, err)
		created[pod.UID] = time.Now()
	}
	var times []time.Duration
	require.Eventually(t, func() bool {
		times = times[:0]
		for uid, at := range created {
			running, ok := counter.RunningAt(uid)
			if !ok {
				return false
			}
			times = append(times, running.Sub(at))
		}
		return true
	}, 2*time.Minute, 50*time.Millisecond, "reference pods should run")
	return times
}
