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
	"encoding/json"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
	networkinglisters "k8s.io/client-go/listers/networking/v1"
	"k8s.io/client-go/tools/cache"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/podadmission/podadmission/pkg/plugin"
	podv1 "github.com/podadmission/podadmission/pkg/plugin/corev1"
)

var testStart = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// recordingPusher records the re-evaluations a gate asks for.
type recordingPusher struct {
	mu     sync.Mutex
	uids   []podv1.UID
	all    int
	pushed chan struct{}
}

func newRecordingPusher() *recordingPusher {
	return &recordingPusher{pushed: make(chan struct{}, 100)}
}

func (p *recordingPusher) Reevaluate(uids ...podv1.UID) {
	p.mu.Lock()
	p.uids = append(p.uids, uids...)
	p.mu.Unlock()
	p.pushed <- struct{}{}
}

func (p *recordingPusher) ReevaluateAll() {
	p.mu.Lock()
	p.all++
	p.mu.Unlock()
	p.pushed <- struct{}{}
}

func (p *recordingPusher) pushedUIDs() []podv1.UID {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.uids)
}

func (p *recordingPusher) allCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.all
}

// gateEnv is a gate over indexers the test fills in, a fake clock, and a
// fake API server for the gate's consistent LIST.
type gateEnv struct {
	gate       *gate
	clock      *clocktesting.FakeClock
	policies   cache.Indexer
	namespaces cache.Indexer
	synced     atomic.Bool
	pusher     *recordingPusher

	mu       sync.Mutex
	acks     ackSet
	ackErr   error
	api      map[string][]*networkingv1.NetworkPolicy
	apiErr   error
	apiCalls int
}

// newGateEnv returns a synced gate in acknowledgement mode unless cfg says
// otherwise (settleTime set, acks nil).
func newGateEnv(t *testing.T, cfg gateConfig) *gateEnv {
	t.Helper()
	env := &gateEnv{
		clock:      clocktesting.NewFakeClock(testStart),
		policies:   cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}),
		namespaces: cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{}),
		pusher:     newRecordingPusher(),
		acks:       ackSet{},
		api:        map[string][]*networkingv1.NetworkPolicy{},
	}
	env.synced.Store(true)
	if cfg.settleTime == 0 && cfg.acks == nil {
		cfg.acks = env.currentAcks
		cfg.ackDir = "/run/netpol-acks"
	}
	env.gate = newGate(cfg, env.clock, networkinglisters.NewNetworkPolicyLister(env.policies), corelisters.NewNamespaceLister(env.namespaces),
		env.synced.Load, env.listPolicies, env.pusher)
	return env
}

func (env *gateEnv) currentAcks() (ackSet, error) {
	env.mu.Lock()
	defer env.mu.Unlock()
	return env.acks, env.ackErr
}

func (env *gateEnv) ack(uid types.UID, generation int64) {
	env.mu.Lock()
	acks := ackSet{}
	for k, v := range env.acks {
		acks[k] = v
	}
	acks[uid] = generation
	env.acks = acks
	env.mu.Unlock()
}

func (env *gateEnv) listPolicies(_ context.Context, namespace string) ([]*networkingv1.NetworkPolicy, error) {
	env.mu.Lock()
	defer env.mu.Unlock()
	env.apiCalls++
	if env.apiErr != nil {
		return nil, env.apiErr
	}
	var out []*networkingv1.NetworkPolicy
	for _, np := range env.api[namespace] {
		out = append(out, np)
	}
	for _, obj := range env.policies.List() {
		if np := obj.(*networkingv1.NetworkPolicy); np.Namespace == namespace {
			out = append(out, np)
		}
	}
	return out, nil
}

// addPolicy puts np in the informer cache (and so in the API server).
func (env *gateEnv) addPolicy(t *testing.T, np *networkingv1.NetworkPolicy) {
	t.Helper()
	require.NoError(t, env.policies.Add(np))
	env.gate.policySeen(np)
}

func (env *gateEnv) deletePolicy(t *testing.T, np *networkingv1.NetworkPolicy) {
	t.Helper()
	require.NoError(t, env.policies.Delete(np))
	env.gate.policyGone(np.UID)
}

// admit asks the gate about pod, which it gets as the SDK decodes it from
// the kubelet's JSON.
func (env *gateEnv) admit(pod *v1.Pod) *plugin.Response {
	data, err := json.Marshal(pod)
	if err != nil {
		panic(err)
	}
	sdkPod := &podv1.Pod{}
	if err := sdkPod.UnmarshalJSON(data); err != nil {
		panic(err)
	}
	return env.gate.admit(context.Background(), &plugin.Request{UID: "call", Pod: sdkPod, PodJSON: data, Attempt: 1, Node: plugin.NodeInfo{Name: "node-1"}})
}

func policy(namespace, name string, uid types.UID, generation int64, matchLabels map[string]string) *networkingv1.NetworkPolicy {
	return &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: uid, Generation: generation, CreationTimestamp: metav1.NewTime(testStart)},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: matchLabels},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
		},
	}
}

func pod(namespace, name string, labels map[string]string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: types.UID(namespace + "-" + name), Labels: labels},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "registry.example/app:1"}}},
	}
}
