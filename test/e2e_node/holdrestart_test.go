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
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	podadmissionv1alpha1 "github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1"
	"github.com/podadmission/podadmission/test/e2e_node/crirecord"
	"github.com/podadmission/podadmission/test/e2e_node/framework"
)

const (
	// escalatingPods are held by pluginEscalate across the restart.
	escalatingPods = 10
	// restartAfterHold is when, after the pods are held, the kubelet
	// restarts: well inside escalateAfter, so that a kubelet that counted
	// maxBlockedDuration from its own start would fail them this much late.
	restartAfterHold = 20 * time.Second
	// escalationEarly and escalationLate bound the time from a pod's first
	// hold to its failure (on the watch) around escalateAfter. The first
	// hold is the PodAdmitted condition's lastTransitionTime, which the
	// API keeps to the second, truncated: the kubelet counts from it, so
	// the failure comes no earlier; it comes within a sync tick (1 s) and a
	// status write of the deadline.
	escalationEarly = 250 * time.Millisecond
	escalationLate  = 2 * time.Second
	// missingConfigMap is the configMap the admitted pod mounts; it is
	// created only after the restart, so the pod is admitted but cannot
	// start before it.
	missingConfigMap = "created-after-restart"
)

// TestHoldSurvivesKubeletRestart (issue 11): the hold and the admission
// are in the API, so a kubelet restart changes neither.
//
//   - 10 pods held by a plugin with maxBlockedDuration 60s, across a kubelet
//     restart 20 s into the hold, fail at 60 s (± a sync tick) from their
//     first hold, not 60 s after the restart, with a message naming
//     maxBlockedDuration; their PodAdmitted condition keeps its
//     lastTransitionTime across the restart.
//   - A pod the plugins admitted but that has not started when the kubelet
//     restarts (its configMap volume waits for a configMap created after
//     the restart) is not sent to the plugins again: the plugin's call log
//     has one call for it, and it runs once its configMap exists.
func TestHoldSurvivesKubeletRestart(t *testing.T) {
	usePluginKubelet(t, pluginKubelet)
	ctx := testContext(t, 5*time.Minute)
	c := suite.Cluster
	ns := newNamespace(t, ctx)
	counter, err := framework.CountPods(ctx, c.Client, ns)
	require.NoError(t, err)
	defer counter.Stop()
	admitLog := c.PluginFile(pluginAdmitOnce + ".log")

	admitted := c.NewPod(ns, "admitted", framework.PluginLabels(pluginAdmitOnce))
	admitted.Spec.Volumes = []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: missingConfigMap},
	}}}}
	admitted.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "config", MountPath: "/mnt/config"}}
	admitted = createPod(t, ctx, admitted)
	held := make([]*corev1.Pod, 0, escalatingPods)
	for i := range escalatingPods {
		held = append(held, createPod(t, ctx, c.NewPod(ns, fmt.Sprintf("held-%02d", i), framework.PluginLabels(pluginEscalate))))
	}
	heldAt := map[types.UID]time.Time{}
	require.Eventually(t, func() bool {
		for _, p := range held {
			if at, ok := counter.FirstSeen(p.UID, blockedWith(reasonEscalate)); ok {
				heldAt[p.UID] = at
			}
		}
		return len(heldAt) == len(held)
	}, time.Minute, 50*time.Millisecond, "every pod should be held by %s", pluginEscalate)
	lastHeld := time.Time{}
	for _, at := range heldAt {
		lastHeld = later(lastHeld, at)
	}

	require.Eventually(t, func() bool { return len(framework.CallsFor(readCalls(t, admitLog), string(admitted.UID))) > 0 },
		time.Minute, 100*time.Millisecond, "the plugin should have been asked about %s", admitted.Name)
	assert.Eventually(t, func() bool {
		p, ok := counter.Pod(admitted.UID)
		return ok && framework.PodAdmittedIs(corev1.ConditionTrue)(p)
	}, 30*time.Second, 100*time.Millisecond, "pod %s, admitted by the plugins, should have %s True before it starts", admitted.Name, podadmissionv1alpha1.PodAdmitted)
	p, _ := counter.Pod(admitted.UID)
	require.False(t, framework.PodRunning(p), "pod %s cannot run before its configMap exists: %s", admitted.Name, framework.DescribePod(p))
	transitions := map[types.UID]metav1.Time{}
	for _, p := range held {
		now, _ := counter.Pod(p.UID)
		if cond := podadmissionv1alpha1.PodAdmittedCondition(&now.Status); assert.NotNil(t, cond, "held pod %s has no %s condition", p.Name, podadmissionv1alpha1.PodAdmitted) {
			assert.Equal(t, corev1.ConditionFalse, cond.Status, "%s of held pod %s", cond.Type, p.Name)
			assert.False(t, cond.LastTransitionTime.After(heldAt[p.UID]), "%s lastTransitionTime of %s (%s) should be the start of the hold, which the watch saw at %s",
				cond.Type, p.Name, cond.LastTransitionTime.Format(time.StampMilli), heldAt[p.UID].Format(time.StampMilli))
			transitions[p.UID] = cond.LastTransitionTime
		}
	}

	time.Sleep(time.Until(lastHeld.Add(restartAfterHold)))
	restart := time.Now()
	require.NoError(t, c.RestartKubelet(ctx, pluginKubelet))
	durationFigure(t, "kubelet restart to node Ready", time.Since(restart))
	_, err = c.Client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: missingConfigMap},
		Data:       map[string]string{"data": "e2e"},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	waitRunning(t, ctx, ns, admitted.Name, time.Minute, "the admitted pod should run once its configMap exists")
	assert.Len(t, framework.CallsFor(readCalls(t, admitLog), string(admitted.UID)), 1,
		"plugin calls for %s, admitted before the restart: the restart must not send it to the plugins again", admitted.Name)
	assert.Len(t, crirecord.Filter(criCalls(t), "RunPodSandbox", string(admitted.UID)), 1, "sandboxes of %s", admitted.Name)

	// The new kubelet has synced every pod by now: the held ones are held
	// still, since the first hold.
	for _, p := range held {
		now, err := c.Client.CoreV1().Pods(ns).Get(ctx, p.Name, metav1.GetOptions{})
		require.NoError(t, err)
		require.True(t, blockedWith(reasonEscalate)(now), "%s should be held after the restart: %s", p.Name, framework.DescribePod(now))
		before, ok := transitions[p.UID]
		if cond := podadmissionv1alpha1.PodAdmittedCondition(&now.Status); ok && assert.NotNil(t, cond, "%s of %s after the restart", podadmissionv1alpha1.PodAdmitted, p.Name) {
			assert.True(t, before.Equal(&cond.LastTransitionTime), "%s lastTransitionTime of %s: %s before the restart, %s after",
				cond.Type, p.Name, before.UTC().Format(time.RFC3339), cond.LastTransitionTime.UTC().Format(time.RFC3339))
		}
	}

	var sinceHold, sinceDecision []time.Duration
	for _, p := range held {
		failed, at, err := framework.WaitForPod(ctx, c.Client, ns, p.Name, escalateAfter+30*time.Second, failedWith(reasonEscalate))
		require.NoError(t, err, "held pod %s should fail once held for %s", p.Name, escalateAfter)
		if failedAt, ok := counter.FirstSeen(p.UID, failedWith(reasonEscalate)); ok {
			at = failedAt
		}
		// Without a condition (a kubelet that has none), the first hold the
		// watch saw stands in for it.
		firstHold := heldAt[p.UID]
		if ltt, ok := transitions[p.UID]; ok {
			firstHold = ltt.Time
		}
		blocked := at.Sub(firstHold)
		t.Logf("%s: failed %s after its first hold (%s), %s after the watch first saw it held, %s after the restart", p.Name,
			blocked.Round(time.Millisecond), firstHold.Format(time.StampMilli), at.Sub(heldAt[p.UID]).Round(time.Millisecond), at.Sub(restart).Round(time.Millisecond))
		assert.GreaterOrEqual(t, blocked, escalateAfter-escalationEarly, "%s failed before its maxBlockedDuration", p.Name)
		assert.LessOrEqual(t, blocked, escalateAfter+escalationLate, "%s failed %s after its first hold, not %s (restart %s after the hold)",
			p.Name, blocked.Round(time.Millisecond), escalateAfter, restart.Sub(firstHold).Round(time.Millisecond))
		sinceHold = append(sinceHold, blocked)
		// The kubelet's decision, from its log: the rest is its status write.
		decisions, err := c.KubeletLogLines(`"Pod admission rejected a pod for good"`, ` pod="`+ns+`/`+p.Name+`" `)
		require.NoError(t, err)
		if len(decisions) > 0 {
			sinceDecision = append(sinceDecision, at.Sub(decisions[len(decisions)-1].Time))
		}
		assert.Contains(t, failed.Status.Message, "maxBlockedDuration", "message of %s", p.Name)
		assertNoRuntimeWork(t, failed)
	}
	durationFigure(t, "escalation: first hold (lastTransitionTime) to Failed p50", framework.Percentile(sinceHold, 50))
	durationFigure(t, "escalation: first hold (lastTransitionTime) to Failed max", framework.Percentile(sinceHold, 100))
	if len(sinceDecision) > 0 {
		durationFigure(t, "escalation: kubelet's decision to Failed on the watch max", framework.Percentile(sinceDecision, 100))
	}
}

func readCalls(t *testing.T, logFile string) []framework.PluginCall {
	t.Helper()
	calls, err := framework.ReadPluginLog(logFile)
	require.NoError(t, err)
	return calls
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
