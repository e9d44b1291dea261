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
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1/protocol"
	"github.com/podadmission/podadmission/pkg/plugin"
	podv1 "github.com/podadmission/podadmission/pkg/plugin/corev1"
)

func TestPodSelectedByNoPolicyIsAdmittedAtOnce(t *testing.T) {
	env := newGateEnv(t, gateConfig{})
	env.addPolicy(t, policy("team-a", "db-only", "uid-db", 1, map[string]string{"app": "db"}))
	env.addPolicy(t, policy("team-b", "deny-all", "uid-b", 1, nil))

	resp := env.admit(pod("team-a", "web", map[string]string{"app": "web"}))
	assert.True(t, resp.Allowed)
	resp = env.admit(pod("team-c", "web", nil))
	assert.True(t, resp.Allowed)
	assert.Empty(t, env.gate.blocked)
}

func TestHeldUntilTheAgentAcknowledgesEverySelectingPolicy(t *testing.T) {
	env := newGateEnv(t, gateConfig{})
	env.addPolicy(t, policy("team-a", "deny-all", "uid-deny", 2, nil))
	env.addPolicy(t, policy("team-a", "allow-dns", "uid-dns", 1, map[string]string{"app": "web"}))
	env.ack("uid-deny", 1) // an older generation does not count
	web := pod("team-a", "web", map[string]string{"app": "web"})

	resp := env.admit(web)
	assert.Equal(t, &plugin.Response{
		Reason:  "NetworkPolicyNotAcknowledged",
		Message: "waiting for the node's network policy agent to acknowledge NetworkPolicies team-a/allow-dns (generation 1), team-a/deny-all (generation 2) (no acknowledgement in /run/netpol-acks yet)",
	}, resp)

	env.ack("uid-dns", 1)
	env.gate.recheck(context.Background())
	assert.Empty(t, env.pusher.pushedUIDs(), "one policy is still not acknowledged")
	resp = env.admit(web)
	assert.Equal(t, "waiting for the node's network policy agent to acknowledge NetworkPolicy team-a/deny-all (generation 2) (no acknowledgement in /run/netpol-acks yet)", resp.Message)

	env.ack("uid-deny", 2)
	env.gate.recheck(context.Background())
	assert.Equal(t, []podv1.UID{podv1.UID(web.UID)}, env.pusher.pushedUIDs(), "the last acknowledgement pushes the pod")
	env.gate.recheck(context.Background())
	assert.Len(t, env.pusher.pushedUIDs(), 1, "pushed once until the kubelet asks")

	resp = env.admit(web)
	assert.True(t, resp.Allowed)
	assert.Empty(t, env.gate.blocked, "an admitted pod is forgotten")
}

func TestNewerAcknowledgementCountsForOlderGenerations(t *testing.T) {
	env := newGateEnv(t, gateConfig{})
	env.addPolicy(t, policy("team-a", "deny-all", "uid-deny", 2, nil))
	env.ack("uid-deny", 3)
	assert.True(t, env.admit(pod("team-a", "web", nil)).Allowed)
}

func TestNewGenerationHoldsNewPodsAgain(t *testing.T) {
	env := newGateEnv(t, gateConfig{})
	np := policy("team-a", "deny-all", "uid-deny", 1, nil)
	env.addPolicy(t, np)
	env.ack("uid-deny", 1)
	assert.True(t, env.admit(pod("team-a", "first", nil)).Allowed)

	updated := np.DeepCopy()
	updated.Generation = 2
	require.NoError(t, env.policies.Update(updated))
	env.gate.policySeen(updated)
	resp := env.admit(pod("team-a", "second", nil))
	assert.Equal(t, "NetworkPolicyNotAcknowledged", resp.Reason)
	assert.Contains(t, resp.Message, "team-a/deny-all (generation 2)")
}

func TestHostNetworkPodsAreExempt(t *testing.T) {
	env := newGateEnv(t, gateConfig{exemptHostNetwork: true})
	env.synced.Store(false)
	env.addPolicy(t, policy("kube-system", "deny-all", "uid", 1, nil))
	hostNet := pod("kube-system", "cni-agent", nil)
	hostNet.Spec.HostNetwork = true
	assert.True(t, env.admit(hostNet).Allowed, "admitted even before the caches sync: the CNI agent itself may be such a pod")
	assert.Zero(t, env.apiCalls)

	env = newGateEnv(t, gateConfig{exemptHostNetwork: false})
	env.addPolicy(t, policy("kube-system", "deny-all", "uid", 1, nil))
	assert.Equal(t, "NetworkPolicyNotAcknowledged", env.admit(hostNet).Reason)
}

func TestHeldUntilTheCachesSync(t *testing.T) {
	env := newGateEnv(t, gateConfig{})
	env.synced.Store(false)
	web := pod("team-a", "web", nil)
	resp := env.admit(web)
	assert.Equal(t, &plugin.Response{
		Reason:  "NetworkPolicyCacheNotSynced",
		Message: "waiting for the gate's NetworkPolicy and Namespace caches to sync with the API server",
	}, resp)
	assert.Zero(t, env.apiCalls, "no API call before the caches sync")

	env.synced.Store(true)
	env.gate.cachesSynced(context.Background())
	assert.Equal(t, 1, env.pusher.allCount(), "every held pod is evaluated again with the synced caches")
	assert.True(t, env.admit(web).Allowed)
}

func TestDeletedPolicyReleasesItsPods(t *testing.T) {
	env := newGateEnv(t, gateConfig{})
	np := policy("team-a", "deny-all", "uid-deny", 1, nil)
	env.addPolicy(t, np)
	web := pod("team-a", "web", nil)
	require.False(t, env.admit(web).Allowed)

	env.deletePolicy(t, np)
	env.gate.recheck(context.Background())
	assert.Equal(t, []podv1.UID{podv1.UID(web.UID)}, env.pusher.pushedUIDs())
	assert.True(t, env.admit(web).Allowed)
}

func TestAPolicyTheInformerHasNotDeliveredYetHoldsThePod(t *testing.T) {
	env := newGateEnv(t, gateConfig{})
	// Created just before the pod; the informer has not delivered it.
	env.api["team-a"] = []*networkingv1.NetworkPolicy{policy("team-a", "deny-all", "uid-new", 1, nil)}
	web := pod("team-a", "web", nil)

	resp := env.admit(web)
	assert.Equal(t, "NetworkPolicyNotAcknowledged", resp.Reason)
	assert.Contains(t, resp.Message, "team-a/deny-all (generation 1)")
	assert.Equal(t, 1, env.apiCalls)

	// The kubelet asks again; the gate remembers the policy without
	// asking the API server again, and still holds the pod.
	resp = env.admit(web)
	assert.Equal(t, "NetworkPolicyNotAcknowledged", resp.Reason)
	assert.Equal(t, 1, env.apiCalls, "one consistent LIST per pod")

	env.ack("uid-new", 1)
	env.gate.recheck(context.Background())
	assert.Equal(t, []podv1.UID{podv1.UID(web.UID)}, env.pusher.pushedUIDs())
	assert.True(t, env.admit(web).Allowed)
}

func TestAPolicyTheInformerNeverDeliversStopsCountingAfterTheLagAllowance(t *testing.T) {
	env := newGateEnv(t, gateConfig{})
	env.api["team-a"] = []*networkingv1.NetworkPolicy{policy("team-a", "short-lived", "uid-gone", 1, nil)}
	web := pod("team-a", "web", nil)
	require.False(t, env.admit(web).Allowed)
	env.api["team-a"] = nil // deleted before the informer saw it

	env.clock.Step(informerLagAllowance + time.Second)
	assert.True(t, env.admit(web).Allowed)
}

func TestAPIErrorsFallBackToTheInformerCache(t *testing.T) {
	env := newGateEnv(t, gateConfig{})
	env.apiErr = errors.New("connection refused")
	assert.True(t, env.admit(pod("team-a", "web", nil)).Allowed, "no policy in the synced cache")
	env.addPolicy(t, policy("team-a", "deny-all", "uid", 1, nil))
	assert.False(t, env.admit(pod("team-a", "api", nil)).Allowed)
}

func TestUnreadableSelectorSelectsThePod(t *testing.T) {
	env := newGateEnv(t, gateConfig{})
	np := policy("team-a", "odd", "uid-odd", 1, nil)
	np.Spec.PodSelector = metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Resembles", Values: []string{"web"}}}}
	env.addPolicy(t, np)
	assert.Equal(t, "NetworkPolicyNotAcknowledged", env.admit(pod("team-a", "web", nil)).Reason)
}

func TestExemptNamespaceSelector(t *testing.T) {
	selector, err := labels.Parse("netpol-gate.podadmission.io/exempt=true")
	require.NoError(t, err)
	env := newGateEnv(t, gateConfig{exemptNamespaces: selector})
	require.NoError(t, env.namespaces.Add(&v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "monitoring", Labels: map[string]string{"netpol-gate.podadmission.io/exempt": "true"}}}))
	require.NoError(t, env.namespaces.Add(&v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}))
	env.addPolicy(t, policy("monitoring", "deny-all", "uid-m", 1, nil))
	env.addPolicy(t, policy("team-a", "deny-all", "uid-a", 1, nil))
	env.addPolicy(t, policy("new", "deny-all", "uid-n", 1, nil))

	assert.True(t, env.admit(pod("monitoring", "prom", nil)).Allowed)
	assert.False(t, env.admit(pod("team-a", "web", nil)).Allowed)

	newPod := pod("new", "web", nil)
	resp := env.admit(newPod)
	assert.Equal(t, &plugin.Response{
		Reason:  "NetworkPolicyCacheNotSynced",
		Message: "waiting for namespace new to reach the gate's cache, to match --exempt-namespace-selector",
	}, resp)
	require.NoError(t, env.namespaces.Add(&v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "new", Labels: map[string]string{"netpol-gate.podadmission.io/exempt": "true"}}}))
	env.gate.recheck(context.Background())
	assert.Equal(t, []podv1.UID{podv1.UID(newPod.UID)}, env.pusher.pushedUIDs())
}

func TestSettleTime(t *testing.T) {
	env := newGateEnv(t, gateConfig{settleTime: 5 * time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go env.gate.runRechecks(ctx)

	np := policy("team-a", "deny-all", "uid-deny", 1, nil)
	np.CreationTimestamp = metav1.NewTime(testStart) // now on the fake clock
	env.addPolicy(t, np)
	env.clock.Step(time.Second)
	web := pod("team-a", "web", nil)

	resp := env.admit(web)
	assert.Equal(t, "NetworkPolicySettling", resp.Reason)
	assert.Equal(t, "waiting for NetworkPolicy team-a/deny-all (generation 1) to be known for the settle time of 5s (4s more)", resp.Message)
	require.NotNil(t, resp.RetryAfterSeconds)
	assert.EqualValues(t, 5, *resp.RetryAfterSeconds)

	env.clock.Step(3999 * time.Millisecond)
	assert.Never(t, func() bool { return len(env.pusher.pushedUIDs()) > 0 }, 100*time.Millisecond, 10*time.Millisecond)
	env.clock.Step(time.Millisecond)
	require.Eventually(t, func() bool { return len(env.pusher.pushedUIDs()) == 1 }, 5*time.Second, 5*time.Millisecond,
		"pushed the moment the policy has settled")
	assert.True(t, env.admit(web).Allowed)
}

func TestSettleTimeCountsFromTheAPIServersWrite(t *testing.T) {
	env := newGateEnv(t, gateConfig{settleTime: 5 * time.Second})
	np := policy("team-a", "deny-all", "uid-deny", 3, nil)
	np.CreationTimestamp = metav1.NewTime(testStart.Add(-time.Hour))
	np.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl", Time: ptrTime(testStart.Add(-10 * time.Minute))}}
	env.addPolicy(t, np) // first seen by a gate that just started
	assert.True(t, env.admit(pod("team-a", "web", nil)).Allowed, "a policy written 10 minutes ago is in force")

	np2 := policy("team-a", "fresh", "uid-fresh", 1, nil)
	np2.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl", Time: ptrTime(testStart.Add(time.Hour))}} // a clock ahead of the node's
	env.addPolicy(t, np2)
	assert.Equal(t, "NetworkPolicySettling", env.admit(pod("team-a", "api", nil)).Reason, "a write time in the future does not shorten the wait")
}

func ptrTime(t time.Time) *metav1.Time { mt := metav1.NewTime(t); return &mt }

func TestForgetsPodsTheKubeletStoppedAskingAbout(t *testing.T) {
	env := newGateEnv(t, gateConfig{})
	env.addPolicy(t, policy("team-a", "deny-all", "uid", 1, nil))
	require.False(t, env.admit(pod("team-a", "deleted", nil)).Allowed)
	env.clock.Step(blockedPodTTL + time.Second)
	env.gate.recheck(context.Background())
	assert.Empty(t, env.gate.blocked)
	assert.Empty(t, env.pusher.pushedUIDs())
}

func TestMessageListsAsManyPoliciesAsFit(t *testing.T) {
	env := newGateEnv(t, gateConfig{})
	for i := range 40 {
		env.addPolicy(t, policy("team-a", fmt.Sprintf("policy-with-a-rather-long-name-%02d", i), types.UID(fmt.Sprintf("uid-%d", i)), 1, nil))
	}
	resp := env.admit(pod("team-a", "web", nil))
	assert.LessOrEqual(t, len(resp.Message), protocol.MaxMessageLength)
	assert.True(t, strings.HasPrefix(resp.Message, "waiting for the node's network policy agent to acknowledge NetworkPolicies team-a/policy-with-a-rather-long-name-00 (generation 1), "), resp.Message)
	assert.Regexp(t, `, team-a/policy-with-a-rather-long-name-\d\d \(generation 1\) and \d+ more \(no acknowledgement in /run/netpol-acks yet\)$`, resp.Message)
}

func TestAPolicyDeletedAfterTheInformerDeliveredItReleasesPodsItHeldFromTheAPI(t *testing.T) {
	env := newGateEnv(t, gateConfig{})
	np := policy("team-a", "deny-all", "uid-new", 1, nil)
	env.api["team-a"] = []*networkingv1.NetworkPolicy{np}
	web := pod("team-a", "web", nil)
	require.False(t, env.admit(web).Allowed)

	// The informer catches up, then the policy is deleted.
	env.api["team-a"] = nil
	env.addPolicy(t, np)
	env.deletePolicy(t, np)
	env.gate.recheck(context.Background())
	assert.Equal(t, []podv1.UID{podv1.UID(web.UID)}, env.pusher.pushedUIDs())
	assert.True(t, env.admit(web).Allowed)
}
