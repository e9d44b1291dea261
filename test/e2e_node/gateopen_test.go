//go:build e2e_node

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

	configv1alpha1 "github.com/podadmission/podadmission/pkg/apis/config/v1alpha1"
	"github.com/podadmission/podadmission/test/e2e_node/crirecord"
	"github.com/podadmission/podadmission/test/e2e_node/framework"
)

// gateOpenPods is how many held pods the gate-open latency is measured on.
const gateOpenPods = 25

// gateOpenP99Goal is the goal for the time from a GRPC plugin's
// re-evaluation push to the pod Running.
const gateOpenP99Goal = 1500 * time.Millisecond

// grpcGateReason is what the GRPC gate's decision file denies with.
const grpcGateReason = "E2EGateClosed"

var grpcGateEndpoint string

func grpcGateDecisionFile() string { return suite.Cluster.PluginFile(pluginGRPCGate + ".decision") }

// grpcGatePlugin is the GRPC plugin daemon's configuration.
func grpcGatePlugin(c *framework.Cluster) configv1alpha1.PluginConfig {
	grpcGateEndpoint = "unix://" + c.Layout.SocketPath(pluginGRPCGate+".sock")
	return configv1alpha1.PluginConfig{
		Name:     pluginGRPCGate,
		Type:     configv1alpha1.GRPCPluginType,
		Endpoint: grpcGateEndpoint,
		Match:    framework.MatchPluginLabel(pluginGRPCGate),
	}
}

// startGRPCGate starts the daemon, closed, before the kubelet connects.
func startGRPCGate(c *framework.Cluster) error {
	if err := framework.SetDecision(grpcGateDecisionFile(), "deny "+grpcGateReason+" the e2e GRPC gate is closed"); err != nil {
		return err
	}
	endpoint, err := c.StartGRPCPlugin(context.Background(), pluginGRPCGate,
		"--decision-file="+grpcGateDecisionFile(), "--log-file="+c.PluginFile(pluginGRPCGate+".log"))
	if err != nil {
		return err
	}
	if endpoint != grpcGateEndpoint {
		return fmt.Errorf("GRPC gate serves on %s, configured for %s", endpoint, grpcGateEndpoint)
	}
	return nil
}

// TestGateOpens (issue 5, test 5): a GRPC plugin holds pods, then its
// decision changes and it pushes a re-evaluation; every pod must run
// promptly, without waiting for the kubelet's back-off. Measures the time
// from the push to Running for each pod.
func TestGateOpens(t *testing.T) {
	usePluginKubelet(t, pluginKubelet)
	ctx := testContext(t, 5*time.Minute)
	ns := newNamespace(t, ctx)
	c := suite.Cluster
	require.NoError(t, framework.SetDecision(grpcGateDecisionFile(), "deny "+grpcGateReason+" the e2e GRPC gate is closed"))

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

	// Open the gate: the daemon sees the file change and pushes.
	opened := time.Now()
	require.NoError(t, framework.SetDecision(grpcGateDecisionFile(), "allow"))
	require.Eventually(t, func() bool {
		for _, uid := range uids {
			if _, ok := counter.RunningAt(uid); !ok {
				return false
			}
		}
		return true
	}, 2*time.Minute, 50*time.Millisecond, "every held pod should run once the gate opens")

	latencies := make([]time.Duration, 0, len(uids))
	for _, uid := range uids {
		at, _ := counter.RunningAt(uid)
		latencies = append(latencies, at.Sub(opened))
	}
	p50, p99 := framework.Percentile(latencies, 50), framework.Percentile(latencies, 99)
	durationFigure(t, "gate open to Running p50", p50)
	durationFigure(t, "gate open to Running p99", p99)
	durationFigure(t, "gate open to Running max", framework.Percentile(latencies, 100))
	assert.LessOrEqual(t, p99, gateOpenP99Goal, "p99 of gate open to Running over %d pods", len(uids))

	calls := criCalls(t)
	for _, uid := range uids {
		assert.Len(t, crirecord.Filter(calls, "RunPodSandbox", string(uid)), 1, "one sandbox per pod, after the gate opened")
	}
	assert.Equal(t, gateOpenPods, counter.Created(), "pods ever created")
	require.NoError(t, counter.Err())
}
