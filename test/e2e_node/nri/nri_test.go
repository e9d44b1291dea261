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

package nri

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	configv1alpha1 "github.com/podadmission/podadmission/pkg/apis/config/v1alpha1"
	"github.com/podadmission/podadmission/test/e2e_node/crirecord"
	"github.com/podadmission/podadmission/test/e2e_node/framework"
)

// The NRI plugin's pod labels (test/e2e_node/nriplugin).
const (
	nriHookLabel = "e2e.podadmission.io/nri"
	nriHangLabel = "e2e.podadmission.io/nri-hang"
)

// The podadmission plugins of the comparison.
const (
	pluginGate        = "nri-cmp-gate"
	pluginPodSecurity = "nri-cmp-pod-security"
	pluginSleep       = "nri-cmp-sleep"
	pluginGone        = "nri-cmp-gone"
	reasonGate        = "HeldUntilReleased"
	failureWindow     = 30 * time.Second
	samplePeriod      = 2 * time.Second
)

// variant is one way of enforcing one policy on one pod: a ReplicaSet of
// one in a namespace of its own, so that its pods and events are its own.
type variant struct {
	column      string
	labels      map[string]string
	hostNetwork bool
	// release lets the held pod go; nil for a refusal.
	release func(pod *corev1.Pod) (time.Time, error)

	namespace string
	counter   *framework.PodCounter
	seen      nodeState
	samples   int
	result    column
}

// nodeState counts in how many samples each thing was on the node.
type nodeState struct {
	sandbox, ip, cgroup, mounts, hostPath int
}

// TestNRIComparison measures the two policies enforced by NRI and by
// podadmission side by side (see the package comment); it fails if a
// measure contradicts what the report says of it.
func TestNRIComparison(t *testing.T) {
	c := suite.Cluster
	require.Equal(t, framework.ContainerdMode, c.Options.Runtime, "the comparison needs containerd 2.x's NRI")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	require.NoError(t, c.Kubelet.SupportsPodAdmission())

	nri, err := c.StartNRIPlugin(ctx, nriPluginName)
	require.NoError(t, err)
	report.nriRuntime = nriRuntime(t, nri)
	gate := framework.Gate{
		Plugin: pluginGate, DecisionFile: c.PluginFile(pluginGate + ".decision"), Reason: reasonGate,
		Message: "held until released", LogFile: c.PluginFile(pluginGate + ".log"), RetryAfter: time.Minute,
	}
	configurePlugins(t, ctx, gate)

	nriRelease := func(pod *corev1.Pod) (time.Time, error) {
		at := time.Now()
		return at, nri.Release(pod.Namespace, pod.Name)
	}
	gateRelease := func(*corev1.Pod) (time.Time, error) { return gate.Open() }
	variants := []*variant{
		{column: "NRI validation plugin (ValidateContainerAdjustment)", labels: map[string]string{nriHookLabel: "validate"}, release: nriRelease},
		{column: "NRI plugin at RunPodSandbox", labels: map[string]string{nriHookLabel: "sandbox"}, release: nriRelease},
		{column: "podadmission GRPC plugin (soft)", labels: framework.PluginLabels(pluginGate), release: gateRelease},
		{column: "hostNetwork: NRI validation plugin", labels: map[string]string{nriHookLabel: "validate"}, hostNetwork: true},
		{column: "hostNetwork: podadmission pod-security-plugin (baseline, soft)", labels: framework.PluginLabels(pluginPodSecurity), hostNetwork: true},
	}
	report.window = *window
	start := time.Now()
	for _, v := range variants {
		v.namespace = suite.Namespace(t, ctx)
		require.NoError(t, c.CreateVolumeSources(ctx, v.namespace))
		v.counter, err = framework.CountPods(ctx, c.Client, v.namespace)
		require.NoError(t, err)
		defer v.counter.Stop()
		_, err = c.Client.AppsV1().ReplicaSets(v.namespace).Create(ctx, replicaSet(v), metav1.CreateOptions{})
		require.NoError(t, err)
	}
	// Sample the node while the window runs.
	for time.Since(start) < *window {
		for _, v := range variants {
			sampleNode(t, ctx, v)
		}
		time.Sleep(samplePeriod)
	}
	calls, err := crirecord.ReadJournal(c.CRIJournal())
	require.NoError(t, err)
	for _, v := range variants {
		observe(t, ctx, v, calls)
		report.columns = append(report.columns, v.result)
	}

	// Release the held pods, all at once: each path's own latency.
	var wg sync.WaitGroup
	for _, v := range variants {
		if v.release == nil {
			continue
		}
		pod := onlyPod(t, v)
		wg.Go(func() {
			released, err := v.release(pod)
			if !assert.NoError(t, err) {
				return
			}
			running, at, err := framework.WaitForPod(ctx, c.Client, pod.Namespace, pod.Name, 5*time.Minute, framework.PodRunning)
			if assert.NoError(t, err, "%s: the released pod should run", v.column) && running != nil {
				v.result.releaseToRunning = at.Sub(released)
			}
		})
	}
	wg.Wait()
	report.columns = report.columns[:0]
	for _, v := range variants {
		report.columns = append(report.columns, v.result)
	}
	checkHolds(t, variants)

	report.failures = failureScenarios(t, ctx, nri)
}

// checkHolds asserts what the report then says of the hold: podadmission's
// pod has nothing on the node and one attempt, NRI's have their sandbox
// and retries.
func checkHolds(t *testing.T, variants []*variant) {
	for _, v := range variants {
		r := v.result
		assert.Equal(t, 1, r.podsCreated, "%s: pods the ReplicaSet created", v.column)
		if strings.HasPrefix(v.column, "NRI") || strings.HasPrefix(v.column, "hostNetwork: NRI") {
			assert.Positive(t, r.sandboxAttempts, "%s: the runtime refused the pod, so the kubelet made its sandbox", v.column)
		} else {
			assert.Zero(t, r.sandboxAttempts, "%s: no sandbox for a held pod", v.column)
			assert.Zero(t, v.seen.cgroup+v.seen.mounts+v.seen.sandbox, "%s: nothing on the node for a held pod", v.column)
		}
		if v.release != nil {
			assert.Positive(t, r.releaseToRunning, "%s: release to Running", v.column)
		}
	}
}

// configurePlugins writes the podadmission plugins' configuration: the
// GRPC gate, pod-security-plugin at baseline (it refuses hostNetwork),
// an Exec plugin that never answers (2 s timeout) and a GRPC plugin whose
// daemon is not running; and waits until the kubelet loaded it.
func configurePlugins(t *testing.T, ctx context.Context, gate framework.Gate) {
	c := suite.Cluster
	gateConfig, err := c.StartGate(ctx, gate)
	require.NoError(t, err)
	installBinary(t, filepath.Join(c.Options.PluginsDir, "pod-security-plugin"), pluginPodSecurity)
	require.NoError(t, c.InstallExecPlugin(pluginSleep))
	plugins := []configv1alpha1.PluginConfig{
		gateConfig,
		{Name: pluginPodSecurity, Type: configv1alpha1.ExecPluginType, Args: []string{"--level=baseline", "--version=latest"}, Match: framework.MatchPluginLabel(pluginPodSecurity)},
		{Name: pluginSleep, Type: configv1alpha1.ExecPluginType, Args: []string{"--mode=sleep"}, Timeout: &metav1.Duration{Duration: nriPluginRequestTime}, Match: framework.MatchPluginLabel(pluginSleep)},
		{Name: pluginGone, Type: configv1alpha1.GRPCPluginType, Endpoint: "unix://" + c.Layout.SocketPath(pluginGone+".sock"), Match: framework.MatchPluginLabel(pluginGone)},
	}
	before, err := c.ScrapeKubeletMetrics(ctx)
	require.NoError(t, err)
	const reloads = "kubelet_pod_admission_config_reloads_total"
	success := map[string]string{"result": "success"}
	previous, _ := before.Value(reloads, success)
	require.NoError(t, c.WritePluginConfig("10-nri-comparison.yaml", plugins...))
	require.Eventually(t, func() bool {
		m, err := c.ScrapeKubeletMetrics(ctx)
		if err != nil {
			return false
		}
		now, _ := m.Value(reloads, success)
		return now > previous
	}, 30*time.Second, 100*time.Millisecond, "the kubelet should load the plugin configuration")
}

// installBinary copies an executable into the kubelet's plugin bin dir as
// name, root-owned and 0755, renamed into place.
func installBinary(t *testing.T, src, name string) {
	in, err := os.Open(src)
	require.NoError(t, err, "%s is built by make plugins", src)
	defer in.Close()
	binDir := suite.Cluster.Kubelet.PluginBinDir
	tmp, err := os.CreateTemp(binDir, "."+name+".tmp-*")
	require.NoError(t, err)
	defer os.Remove(tmp.Name())
	_, err = io.Copy(tmp, in)
	require.NoError(t, err)
	require.NoError(t, tmp.Chmod(0o755))
	require.NoError(t, tmp.Close())
	require.NoError(t, os.Rename(tmp.Name(), filepath.Join(binDir, name)))
}

// replicaSet is v's ReplicaSet of one pod with the volumes of a real pod.
func replicaSet(v *variant) *appsv1.ReplicaSet {
	c := suite.Cluster
	pod := c.NewPodWithVolumes(v.namespace, "pod", v.labels)
	pod.Spec.HostNetwork = v.hostNetwork
	rs := c.NewReplicaSet(v.namespace, "policy", 1, v.labels)
	rs.Spec.Template.Spec = pod.Spec
	return rs
}

func onlyPod(t *testing.T, v *variant) *corev1.Pod {
	pods := v.counter.Pods()
	require.Len(t, pods, 1, "%s: pods", v.column)
	return pods[0]
}

// sampleNode records what the node has of v's pods now.
func sampleNode(t *testing.T, ctx context.Context, v *variant) {
	c := suite.Cluster
	v.samples++
	for _, pod := range v.counter.Pods() {
		sandboxes, err := c.PodSandboxes(ctx, string(pod.UID))
		require.NoError(t, err)
		for _, s := range sandboxes {
			if s.Ready {
				v.seen.sandbox++
				if s.IP != "" {
					v.seen.ip++
				}
				break
			}
		}
		if cgroups, err := framework.PodCgroups(pod.UID); assert.NoError(t, err) && len(cgroups) > 0 {
			v.seen.cgroup++
		}
		if mounts, err := c.PodMounts(pod.UID); assert.NoError(t, err) && len(mounts) > 0 {
			v.seen.mounts++
		}
		if _, err := os.Stat(c.HostPathDir(pod.Namespace, pod.Name)); err == nil {
			v.seen.hostPath++
		}
	}
}

// observe fills v's column of the report at the end of its window.
func observe(t *testing.T, ctx context.Context, v *variant, calls []crirecord.Call) {
	c := suite.Cluster
	r := &v.result
	r.name = v.column
	r.podsCreated = v.counter.Created()
	r.samples = v.samples
	r.seen = v.seen
	pod := onlyPod(t, v)
	r.sandboxAttempts, r.sandboxFailures = attempts(calls, "RunPodSandbox", string(pod.UID))
	r.containerAttempts, r.containerFailures = attempts(calls, "CreateContainer", string(pod.UID))
	r.status = describeStatus(pod)
	r.events = eventSummary(t, ctx, pod)
	requests, err := c.NodeObjectRequests(v.namespace)
	require.NoError(t, err)
	r.fetched = len(requests) > 0
	switch {
	case r.sandboxAttempts == 0:
		r.waitsIn = "kubelet, before any set-up (soft admission)"
	case r.containerAttempts == 0:
		r.waitsIn = "runtime: the kubelet's RunPodSandbox fails"
	default:
		r.waitsIn = "runtime: the kubelet's CreateContainer fails"
	}
}

// attempts counts the calls of method for the pod, and the failed ones.
func attempts(calls []crirecord.Call, method, uid string) (n, failed int) {
	for _, c := range calls {
		if c.Method == method && c.PodUID == uid {
			n++
			if c.Error != "" {
				failed++
			}
		}
	}
	return n, failed
}

// describeStatus is the pod's phase, reason and its container's state.
func describeStatus(pod *corev1.Pod) string {
	s := string(pod.Status.Phase)
	if pod.Status.Reason != "" {
		s += ", reason " + pod.Status.Reason
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil {
			s += fmt.Sprintf("; container waiting: %s", w.Reason)
			if w.Message != "" {
				s += ": " + truncate(w.Message, 160)
			}
		}
	}
	for _, cond := range pod.Status.Conditions {
		if cond.Type == "PodAdmitted" {
			s += fmt.Sprintf("; condition PodAdmitted=%s", cond.Status)
		}
	}
	return s
}

func truncate(s string, n int) string {
	s = strings.ReplaceAll(s, "|", "/")
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// eventSummary counts the pod's events by reason ("Failed x12, BackOff x30").
func eventSummary(t *testing.T, ctx context.Context, pod *corev1.Pod) eventCounts {
	events, err := suite.Cluster.Client.CoreV1().Events(pod.Namespace).List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("involvedObject.uid", string(pod.UID)).String(),
	})
	require.NoError(t, err)
	counts := eventCounts{}
	for _, e := range events.Items {
		counts[e.Reason] += int(max(e.Count, 1))
	}
	return counts
}

type eventCounts map[string]int

func (e eventCounts) total() int {
	n := 0
	for _, c := range e {
		n += c
	}
	return n
}

func (e eventCounts) String() string {
	reasons := make([]string, 0, len(e))
	for r := range e {
		reasons = append(reasons, r)
	}
	sort.Strings(reasons)
	var parts []string
	for _, r := range reasons {
		parts = append(parts, fmt.Sprintf("%s ×%d", r, e[r]))
	}
	return strings.Join(parts, ", ")
}

// nriRuntime is what containerd told the NRI plugin when it registered.
func nriRuntime(t *testing.T, p *framework.NRIPlugin) string {
	calls, err := p.Calls()
	require.NoError(t, err)
	for _, c := range calls {
		if c.Hook == "configure" {
			return c.Decision
		}
	}
	return "unknown"
}

// failureScenarios runs each plugin failure on a bare pod the policy would
// hold, for failureWindow each: the NRI plugin hanging at validation, then
// (restarted) at CreateContainer, then not running at all (the default
// validator requires it; a pod may waive that by annotation); the
// podadmission plugins hanging past their timeout and not running.
func failureScenarios(t *testing.T, ctx context.Context, nri *framework.NRIPlugin) []failure {
	c := suite.Cluster
	var out []failure
	run := func(f failure, labels, annotations map[string]string) failure {
		ns := suite.Namespace(t, ctx)
		pod := c.NewPod(ns, "pod", labels)
		pod.Annotations = annotations
		created, err := c.Client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
		require.NoError(t, err)
		got, at, err := framework.WaitForPod(ctx, c.Client, ns, pod.Name, failureWindow, framework.PodRunning)
		if err == nil {
			f.outcome = fmt.Sprintf("Running after %.1f s: fails open", at.Sub(created.CreationTimestamp.Time).Seconds())
			f.open = true
		} else {
			got, err = c.Client.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
			require.NoError(t, err)
			f.outcome = fmt.Sprintf("not Running after %s: fails closed; %s", failureWindow, describeStatus(got))
		}
		calls, err := crirecord.ReadJournal(c.CRIJournal())
		require.NoError(t, err)
		f.sandboxes, _ = attempts(calls, "RunPodSandbox", string(got.UID))
		f.containers, _ = attempts(calls, "CreateContainer", string(got.UID))
		return f
	}

	hang := func(hook string) failure {
		f := run(failure{name: fmt.Sprintf("NRI plugin hangs at %s (plugin_request_timeout %s)", hook, nriPluginRequestTime)},
			map[string]string{nriHookLabel: hook, nriHangLabel: "true"}, nil)
		f.pluginNote = "the plugin is still registered"
		if !nri.Running() {
			f.pluginNote = "NRI closed the plugin (it exited)"
		}
		return f
	}
	out = append(out, hang("validate"))
	var err error
	if !nri.Running() {
		nri, err = c.StartNRIPlugin(ctx, nriPluginName)
		require.NoError(t, err)
	}
	out = append(out, hang("create"))
	nri.Stop()

	out = append(out,
		run(failure{name: "NRI plugin not running, required by the default validator"}, map[string]string{nriHookLabel: "validate"}, nil),
		run(failure{name: "NRI plugin not running, the pod's author sets " + tolerateMissingNRI + ": \"true\""},
			map[string]string{nriHookLabel: "validate"}, map[string]string{tolerateMissingNRI: "true"}),
		run(failure{name: fmt.Sprintf("podadmission Exec plugin hangs (timeout %s, failurePolicy Fail)", nriPluginRequestTime)}, framework.PluginLabels(pluginSleep), nil),
		run(failure{name: "podadmission GRPC plugin not running (failurePolicy Fail)"}, framework.PluginLabels(pluginGone), nil),
	)
	// What the report says of them.
	for _, f := range out[2:] {
		if strings.HasPrefix(f.name, "podadmission") {
			assert.False(t, f.open, "%s: fails closed", f.name)
			assert.Zero(t, f.sandboxes, "%s: no sandbox", f.name)
		}
	}
	return out
}
