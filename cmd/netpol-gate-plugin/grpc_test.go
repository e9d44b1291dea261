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

package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2"

	configv1alpha1 "github.com/podadmission/podadmission/pkg/apis/config/v1alpha1"
	podadmissionv1alpha1 "github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/grpctransport"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/transport"
	"github.com/podadmission/podadmission/pkg/plugin"
	"github.com/podadmission/podadmission/pkg/plugin/grpcplugin"
)

// TestGateThroughTheKubeletsGRPCTransport runs the gate as main does, on
// informers of a fake clientset, serving on a unix socket, and talks to it
// with the kubelet's GRPC transport: a pod created after a policy is held
// until the agent's acknowledgement file appears, and the kubelet is asked
// to evaluate it again right then.
func TestGateThroughTheKubeletsGRPCTransport(t *testing.T) {
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), klog.Background()))
	defer cancel()
	client := fake.NewClientset(
		&v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}},
		&v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "open"}},
	)
	ackDir := filepath.Join(t.TempDir(), "acks")
	socket := filepath.Join(t.TempDir(), "gate.sock")

	var g *gate
	server := grpcplugin.NewServer(func(ctx context.Context, req *plugin.Request) (*plugin.Response, error) {
		return g.admit(ctx, req), nil
	})
	acks, err := newAckWatcher(klog.Background(), ackDir, 0, func() { g.requestRecheck() })
	require.NoError(t, err)
	cfg := gateConfig{acks: acks.current, ackDir: ackDir, exemptHostNetwork: true}
	factory := informers.NewSharedInformerFactory(client, 0)
	g, cluster, err := newGateWithInformers(cfg, client, factory, server)
	require.NoError(t, err)
	cluster.start(ctx, g)
	go g.runRechecks(ctx)
	go func() { assert.NoError(t, acks.run(ctx)) }()
	served := make(chan error, 1)
	go func() { served <- server.Serve(ctx, socket) }()
	defer func() {
		cancel()
		require.NoError(t, <-served)
		factory.Shutdown()
	}()

	kubelet, err := grpctransport.New(&configv1alpha1.PluginConfig{
		Name: "netpol-gate", Type: configv1alpha1.GRPCPluginType, Endpoint: "unix://" + socket,
	})
	require.NoError(t, err)
	kubelet.Start(t.Context())
	defer kubelet.Close()
	admit := func(p *v1.Pod) *podadmissionv1alpha1.PodAdmissionResponse {
		t.Helper()
		var resp *podadmissionv1alpha1.PodAdmissionResponse
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			var err error
			resp, err = kubelet.Admit(ctx, &podadmissionv1alpha1.PodAdmissionRequest{TypeMeta: podadmissionv1alpha1.RequestTypeMeta(), UID: types.UID("call-" + p.Name), Pod: p, Attempt: 1, Node: podadmissionv1alpha1.NodeInfo{Name: "node-1"}})
			assert.NoError(c, err)
		}, 10*time.Second, 20*time.Millisecond, "the gate serves on its socket")
		return resp
	}
	require.Eventually(t, cluster.hasSynced, 10*time.Second, 10*time.Millisecond)

	np := policy("team-a", "deny-all", "uid-deny-all", 1, nil)
	_, err = client.NetworkingV1().NetworkPolicies("team-a").Create(ctx, np, metav1.CreateOptions{})
	require.NoError(t, err)
	web := pod("team-a", "web", nil)

	resp := admit(web)
	assert.False(t, resp.Allowed)
	assert.Equal(t, "NetworkPolicyNotAcknowledged", resp.Reason)
	assert.Equal(t, "waiting for the node's network policy agent to acknowledge NetworkPolicy team-a/deny-all (generation 1) (no acknowledgement in "+ackDir+" yet)", resp.Message)

	// A pod in a namespace without policies, and a host-network pod, start
	// at once.
	assert.True(t, admit(pod("open", "web", nil)).Allowed)
	hostNet := pod("team-a", "agent", nil)
	hostNet.Spec.HostNetwork = true
	assert.True(t, admit(hostNet).Allowed)

	// The agent acknowledges the policy; the kubelet hears about the pod.
	drain(kubelet.Reevaluations())
	ackedAt := time.Now()
	require.NoError(t, os.WriteFile(filepath.Join(ackDir, "uid-deny-all.1"), nil, 0o644))
	waitForReevaluation(t, kubelet.Reevaluations(), web.UID)
	t.Logf("re-evaluation pushed %s after the acknowledgement", time.Since(ackedAt))
	assert.True(t, admit(web).Allowed)
}

func drain(ch <-chan transport.Reevaluation) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}

func waitForReevaluation(t *testing.T, ch <-chan transport.Reevaluation, uid types.UID) {
	t.Helper()
	timeout := time.After(5 * time.Second)
	for {
		select {
		case r := <-ch:
			if slices.Contains(r.PodUIDs, uid) {
				return
			}
		case <-timeout:
			t.Fatalf("no re-evaluation of pod %s within 5s", uid)
		}
	}
}
