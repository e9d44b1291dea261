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

package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	configv1alpha1 "github.com/podadmission/podadmission/pkg/apis/config/v1alpha1"
	"github.com/podadmission/podadmission/test/e2e_node/crirecord"
	"github.com/podadmission/podadmission/test/e2e_node/framework"
)

const (
	demoPlugin    = "demo-gate"
	demoNamespace = "demo"
	demoReason    = "MaintenanceWindow"
	demoHold      = 15 * time.Second
)

// demo brings the cluster up with the drop-in kubelet and a plugin, shows
// a ReplicaSet's pod held Pending by the plugin without the ReplicaSet
// creating more pods, opens the plugin's gate, shows the pod running, and
// keeps the cluster until Ctrl-C.
func demo(ctx context.Context) error {
	opts, err := framework.OptionsFromFlags(framework.KubeletOptions{})
	if err != nil {
		return err
	}
	harnessLog, err := quietHarnessLog(opts.ArtifactsRoot)
	if err != nil {
		return err
	}
	step("Bringing up a one-node cluster (%s runtime) around %s/kubelet", opts.Runtime, opts.BinDir)
	c, err := framework.UpUntilInterrupted(ctx, opts)
	if err != nil {
		return err
	}
	defer c.Down()
	step("Cluster up in %s; component logs and artifacts in %s, harness log %s", c.StartupTime.Round(time.Millisecond), c.Layout.Artifacts, harnessLog)
	if err := c.Kubelet.SupportsPodAdmission(); err != nil {
		return err
	}

	decision := c.PluginFile(demoPlugin + ".decision")
	if err := framework.SetDecision(decision, "deny "+demoReason+" the node is in a maintenance window; new pods wait until it ends"); err != nil {
		return err
	}
	plugin := configv1alpha1.PluginConfig{
		Name:  demoPlugin,
		Type:  configv1alpha1.ExecPluginType,
		Args:  []string{"--decision-file=" + decision, "--retry-after=1s"},
		Match: &configv1alpha1.PodMatch{Namespaces: []string{demoNamespace}},
	}
	if err := c.InstallExecPlugin(demoPlugin); err != nil {
		return err
	}
	if err := c.WritePluginConfig("10-demo.yaml", plugin); err != nil {
		return err
	}
	cfg, _ := os.ReadFile(c.Layout.ArtifactPath("pod-admission/10-demo.yaml"))
	step("Plugin configuration %s/10-demo.yaml:\n%s", c.Kubelet.PluginConfigDir, indent(cfg))
	step("Restarting the kubelet with --feature-gates=%s=true --pod-admission-plugin-config --pod-admission-plugin-bin-dir", framework.PodAdmissionFeatureGate)
	if _, err := c.EnsureKubelet(ctx, framework.KubeletOptions{PodAdmission: true, PluginFlags: true}); err != nil {
		return err
	}

	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: demoNamespace}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	if err := waitDefaultServiceAccount(ctx, c); err != nil {
		return err
	}
	counter, err := framework.CountPods(ctx, c.Client, demoNamespace)
	if err != nil {
		return err
	}
	defer counter.Stop()
	step("Creating ReplicaSet %s/web (1 replica) while the plugin denies pods", demoNamespace)
	if _, err := c.Client.AppsV1().ReplicaSets(demoNamespace).Create(ctx, c.NewReplicaSet(demoNamespace, "web", 1, map[string]string{"app": "web"}), metav1.CreateOptions{}); err != nil {
		return err
	}
	created := time.Now()
	time.Sleep(2 * time.Second)
	showPods(ctx, c)
	for time.Since(created) < demoHold {
		time.Sleep(5 * time.Second)
		fmt.Printf("    +%2.0fs: the ReplicaSet has created %d pod(s) so far\n", time.Since(created).Seconds(), counter.Created())
	}
	pods := counter.Pods()
	if len(pods) == 0 {
		return fmt.Errorf("the ReplicaSet created no pod")
	}
	showEvents(ctx, c, pods[0])
	calls, err := crirecord.ReadJournal(c.CRIJournal())
	if err != nil {
		return err
	}
	sandboxes := len(crirecord.Filter(calls, "RunPodSandbox", string(pods[0].UID)))
	step("The ReplicaSet created %d pod in %s; it is held Pending and the runtime created %d sandboxes for it", counter.Created(), demoHold, sandboxes)

	step("Ending the maintenance window: the plugin now allows pods")
	opened := time.Now()
	if err := framework.SetDecision(decision, "allow"); err != nil {
		return err
	}
	pod, at, err := framework.WaitForPod(ctx, c.Client, demoNamespace, pods[0].Name, 2*time.Minute, framework.PodRunning)
	if err != nil {
		return err
	}
	step("Pod %s is Running %s after the plugin allowed it (node %s)", pod.Name, at.Sub(opened).Round(time.Millisecond), pod.Spec.NodeName)
	showPods(ctx, c)

	step("The cluster keeps running. kubeconfig: %s\n    Plugin decision file: %s (write \"deny <Reason> <message>\" or \"allow\")\n    Press Ctrl-C to tear everything down.", c.ControlPlane.AdminKubeconfig, decision)
	<-ctx.Done()
	return nil
}

// quietHarnessLog sends the harness's own klog lines to a file, so the
// demo's terminal shows the demo; errors still reach stderr.
func quietHarnessLog(artifactsRoot string) (string, error) {
	if err := os.MkdirAll(artifactsRoot, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(artifactsRoot, "demo-harness.log")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return "", err
	}
	for name, value := range map[string]string{"logtostderr": "false", "alsologtostderr": "false", "stderrthreshold": "ERROR"} {
		if err := flag.Set(name, value); err != nil {
			return "", err
		}
	}
	klog.SetOutput(f)
	return path, nil
}

func waitDefaultServiceAccount(ctx context.Context, c *framework.Cluster) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := c.Client.CoreV1().ServiceAccounts(demoNamespace).Get(ctx, "default", metav1.GetOptions{}); err == nil {
			return nil
		} else if time.Now().After(deadline) {
			return fmt.Errorf("namespace %s has no default service account: %w", demoNamespace, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// showPods prints the demo's pods as the API server has them now (the
// counter's watch may not have seen the latest status yet).
func showPods(ctx context.Context, c *framework.Cluster) {
	pods, err := c.Client.CoreV1().Pods(demoNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		fmt.Printf("    cannot list the pods of %s: %v\n", demoNamespace, err)
		return
	}
	fmt.Printf("    %-28s %-10s %-20s %s\n", "POD", "PHASE", "REASON", "MESSAGE")
	for _, p := range pods.Items {
		fmt.Printf("    %-28s %-10s %-20s %s\n", p.Name, p.Status.Phase, p.Status.Reason, p.Status.Message)
	}
}

func showEvents(ctx context.Context, c *framework.Cluster, pod *corev1.Pod) {
	events, err := c.Client.CoreV1().Events(pod.Namespace).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.uid=" + string(pod.UID)})
	if err != nil {
		return
	}
	fmt.Printf("    events of %s:\n", pod.Name)
	for _, e := range events.Items {
		fmt.Printf("      %-8s %-20s %s\n", e.Type, e.Reason, e.Message)
	}
}

func step(format string, args ...any) {
	fmt.Printf("\n==> %s %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func indent(b []byte) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return "    " + strings.Join(lines, "\n    ")
}
