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
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	configv1alpha1 "github.com/podadmission/podadmission/pkg/apis/config/v1alpha1"
	"github.com/podadmission/podadmission/test/e2e_node/framework"
)

// The example plugins of cmd/ (issue 7), run as a node runs them: the
// pod-security-plugin binary from the kubelet's plugin bin dir, the
// netpol-gate-plugin daemon with its own kubeconfig. make plugins builds
// both into the suite's -e2e.bin-dir.

const (
	pluginPodSecurity = "pod-security-plugin"
	pluginNetpolGate  = "netpol-gate"

	reasonPodSecurity     = "PodSecurity"
	reasonNotAcknowledged = "NetworkPolicyNotAcknowledged"

	// podSecurityWindow is how long the hostNetwork Deployment is watched
	// for replacement pods; a thrashing controller replaces a failed pod
	// within seconds.
	podSecurityWindow = 30 * time.Second
	// ackToRunningGoal is the bound on what the gate adds to a
	// pod's start: from the acknowledgement to the pod Running, less the
	// start of a pod the gate lets through at once on the same node (on a
	// loaded machine a start alone can take longer than this bound).
	ackToRunningGoal = 1500 * time.Millisecond
)

// examplePluginBinary is the path of an example plugin built by make
// plugins, or installed (-e2e.plugins-dir).
func examplePluginBinary(t *testing.T, name string) string {
	t.Helper()
	path := filepath.Join(suite.Cluster.Options.PluginsDir, name)
	_, err := os.Stat(path)
	require.NoError(t, err, "%s is built by make plugins", path)
	return path
}

// writeExamplePluginConfig writes a configuration file for the running
// kubelet and waits until it has reloaded it; the file is removed when t
// ends.
func writeExamplePluginConfig(t *testing.T, ctx context.Context, file string, plugins ...configv1alpha1.PluginConfig) {
	t.Helper()
	c := suite.Cluster
	const reloads = "kubelet_pod_admission_config_reloads_total"
	success := map[string]string{"result": "success"}
	before, err := c.ScrapeKubeletMetrics(ctx)
	require.NoError(t, err)
	previous, _ := before.Value(reloads, success)

	require.NoError(t, c.WritePluginConfig(file, plugins...))
	t.Cleanup(func() { _ = c.RemovePluginConfig(file) })
	require.Eventually(t, func() bool {
		m, err := c.ScrapeKubeletMetrics(ctx)
		if err != nil {
			return false
		}
		now, _ := m.Value(reloads, success)
		return now > previous
	}, 30*time.Second, 100*time.Millisecond, "the kubelet should reload its plugin configuration after %s was written", file)
}

// installPluginBinary copies an executable into the kubelet's plugin bin
// dir as name, root-owned and 0755, renamed into place.
func installPluginBinary(t *testing.T, src, name string) {
	t.Helper()
	binDir := suite.Cluster.Kubelet.PluginBinDir
	in, err := os.Open(src)
	require.NoError(t, err)
	defer in.Close()
	tmp, err := os.CreateTemp(binDir, "."+name+".tmp-*")
	require.NoError(t, err)
	defer os.Remove(tmp.Name())
	_, err = io.Copy(tmp, in)
	require.NoError(t, err)
	require.NoError(t, tmp.Chmod(0o755))
	require.NoError(t, tmp.Close())
	require.NoError(t, os.Rename(tmp.Name(), filepath.Join(binDir, name)))
}

// TestPodSecurityPlugin: pod-security-plugin at the baseline level holds a
// hostNetwork Deployment's pod Pending with reason PodSecurity and the
// apiserver's violation message, and the Deployment creates exactly one
// pod; a compliant Deployment's pod runs.
func TestPodSecurityPlugin(t *testing.T) {
	usePluginKubelet(t, pluginKubelet)
	ctx := testContext(t, 5*time.Minute)
	c := suite.Cluster
	installPluginBinary(t, examplePluginBinary(t, "pod-security-plugin"), pluginPodSecurity)
	writeExamplePluginConfig(t, ctx, "80-pod-security.yaml", configv1alpha1.PluginConfig{
		Name:  pluginPodSecurity,
		Type:  configv1alpha1.ExecPluginType,
		Args:  []string{"--level=baseline", "--version=latest"},
		Match: framework.MatchPluginLabel(pluginPodSecurity),
	})

	hostNetNS := newNamespace(t, ctx)
	counter, err := framework.CountPods(ctx, c.Client, hostNetNS)
	require.NoError(t, err)
	defer counter.Stop()
	hostNetwork := c.PodSpec()
	hostNetwork.HostNetwork = true
	created := time.Now()
	_, err = c.Client.AppsV1().Deployments(hostNetNS).Create(ctx, newDeployment(hostNetNS, "host-network", hostNetwork), metav1.CreateOptions{})
	require.NoError(t, err)

	require.Eventually(t, func() bool { return counter.Created() > 0 }, time.Minute, 50*time.Millisecond, "the Deployment should create a pod")
	name := counter.Pods()[0].Name
	held := waitBlocked(t, ctx, hostNetNS, name, reasonPodSecurity)
	durationFigure(t, "hostNetwork Deployment created to pod held", time.Since(created))
	assertSoftBlocked(t, ctx, held, pluginPodSecurity, reasonPodSecurity)
	assert.Equal(t, `Pod admission plugin "pod-security-plugin" rejected the pod: violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true)`, held.Status.Message)

	compliantNS := newNamespace(t, ctx)
	_, err = c.Client.AppsV1().Deployments(compliantNS).Create(ctx, newDeployment(compliantNS, "compliant", c.PodSpec()), metav1.CreateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		pods, err := c.Client.CoreV1().Pods(compliantNS).List(ctx, metav1.ListOptions{})
		return err == nil && len(pods.Items) == 1 && framework.PodRunning(&pods.Items[0])
	}, 2*time.Minute, 100*time.Millisecond, "the compliant Deployment's pod should run")

	// The held pod is still the only one, and still held.
	if remaining := podSecurityWindow - time.Since(created); remaining > 0 {
		time.Sleep(remaining)
	}
	counter.Stop()
	require.NoError(t, counter.Err())
	assert.Equal(t, 1, counter.Created(), "pods the hostNetwork Deployment created in %s", podSecurityWindow)
	assertHeldNow(t, ctx, held, pluginPodSecurity, reasonPodSecurity)
}

// newDeployment is a one-replica Deployment of pods with spec that
// pod-security-plugin evaluates.
func newDeployment(namespace, name string, spec corev1.PodSpec) *appsv1.Deployment {
	labels := framework.PluginLabels(pluginPodSecurity)
	labels["app"] = name
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec},
		},
	}
}

// startNetpolGate runs netpol-gate-plugin with the admin kubeconfig and an
// acknowledgement directory until t ends, and returns the directory.
func startNetpolGate(t *testing.T, ctx context.Context) (endpoint, ackDir string) {
	t.Helper()
	c := suite.Cluster
	socket := c.Layout.SocketPath("netpol-gate.sock")
	ackDir = c.Layout.StatePath("netpol-acks")
	_ = os.Remove(socket)
	p, err := framework.StartProcess(framework.ProcessSpec{
		Name:   "plugin-netpol-gate",
		Binary: examplePluginBinary(t, "netpol-gate-plugin"),
		Args: []string{
			"--kubeconfig=" + c.ControlPlane.AdminKubeconfig,
			"--socket=" + socket,
			"--ack-dir=" + ackDir,
			"-v=4",
		},
		LogPath: c.Layout.LogPath("plugin-netpol-gate"),
	})
	require.NoError(t, err)
	t.Cleanup(func() { p.Stop(10 * time.Second) })
	require.NoError(t, p.WaitReady(ctx, func(context.Context) error {
		_, err := os.Stat(socket)
		return err
	}))
	return "unix://" + socket, ackDir
}

// TestNetpolGate: netpol-gate-plugin holds a pod created after a
// NetworkPolicy that selects it until a fake policy agent acknowledges the
// policy, then the pod runs within 1.5 s more than a pod the gate does not
// hold takes to start; a pod in a namespace without policies starts without
// waiting.
func TestNetpolGate(t *testing.T) {
	usePluginKubelet(t, pluginKubelet)
	ctx := testContext(t, 5*time.Minute)
	c := suite.Cluster
	endpoint, ackDir := startNetpolGate(t, ctx)
	writeExamplePluginConfig(t, ctx, "81-netpol-gate.yaml", configv1alpha1.PluginConfig{
		Name:     pluginNetpolGate,
		Type:     configv1alpha1.GRPCPluginType,
		Endpoint: endpoint,
		Match:    framework.MatchPluginLabel(pluginNetpolGate),
	})

	ns := newNamespace(t, ctx)
	policy, err := c.Client.NetworkingV1().NetworkPolicies(ns).Create(ctx, &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "deny-all"},
		Spec:       networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	counter, err := framework.CountPods(ctx, c.Client, ns)
	require.NoError(t, err)
	defer counter.Stop()
	pod, err := c.Client.CoreV1().Pods(ns).Create(ctx, c.NewPod(ns, "gated", framework.PluginLabels(pluginNetpolGate)), metav1.CreateOptions{})
	require.NoError(t, err)

	held := waitBlocked(t, ctx, ns, pod.Name, reasonNotAcknowledged)
	assertSoftBlocked(t, ctx, held, pluginNetpolGate, reasonNotAcknowledged)
	assert.Contains(t, held.Status.Message, fmt.Sprintf("NetworkPolicy %s/deny-all (generation %d)", ns, policy.Generation))
	// Without the acknowledgement it stays held.
	time.Sleep(2 * time.Second)
	_, running := counter.RunningAt(pod.UID)
	require.False(t, running, "the pod must not run before the agent acknowledges the policy")

	// The fake agent programs the policy and says so.
	acked := time.Now()
	require.NoError(t, os.WriteFile(filepath.Join(ackDir, fmt.Sprintf("%s.%d", policy.UID, policy.Generation)), nil, 0o644))
	require.Eventually(t, func() bool { _, ok := counter.RunningAt(pod.UID); return ok }, time.Minute, 20*time.Millisecond,
		"the pod should run once its policy is acknowledged")
	runningAt, _ := counter.RunningAt(pod.UID)
	ackToRunning := runningAt.Sub(acked)
	durationFigure(t, "netpol acknowledgement to pod Running", ackToRunning)

	// A namespace without policies: the pod starts at once.
	open := newNamespace(t, ctx)
	start := time.Now()
	_, err = c.Client.CoreV1().Pods(open).Create(ctx, c.NewPod(open, "free", framework.PluginLabels(pluginNetpolGate)), metav1.CreateOptions{})
	require.NoError(t, err)
	free, runningSeen, err := framework.WaitForPod(ctx, c.Client, open, "free", time.Minute, framework.PodRunning)
	require.NoError(t, err)
	reference := runningSeen.Sub(start)
	durationFigure(t, "netpol gate, no policy: create to Running", reference)
	assert.LessOrEqual(t, ackToRunning, reference+ackToRunningGoal,
		"acknowledgement to Running (%s) should take at most %s more than a pod's start without a hold (%s)", ackToRunning, ackToRunningGoal, reference)
	events, err := c.Client.CoreV1().Events(open).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.uid=" + string(free.UID)})
	require.NoError(t, err)
	for _, ev := range events.Items {
		assert.False(t, strings.HasPrefix(ev.Reason, "NetworkPolicy"), "the pod in a namespace without policies was held: %s %s", ev.Reason, ev.Message)
	}
	require.NoError(t, counter.Err())
}
