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
	"bytes"
	"context"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	"github.com/podadmission/podadmission/cmd/pod-security-plugin/app"
	apptesting "github.com/podadmission/podadmission/cmd/pod-security-plugin/app/testing"
	configv1alpha1 "github.com/podadmission/podadmission/pkg/apis/config/v1alpha1"
	podadmissionv1alpha1 "github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/grpctransport"
	"github.com/podadmission/podadmission/pkg/plugin"
)

// These tests run the daemon as main does, on a unix socket, and ask it
// through the kubelet's GRPC transport. The reference is the Exec plugin's
// answer: the same flags' policy behind plugin.HandleExec, the JSON the
// kubelet writes to its stdin and reads from its stdout.

// daemon is the daemon run with args and the Exec plugin's policy for them.
type daemon struct {
	kubelet    *grpctransport.Plugin
	execPolicy *app.Policy
}

// startDaemon runs the daemon with args on a socket in a directory that
// does not exist yet, until the test ends.
func startDaemon(t *testing.T, args ...string) *daemon {
	t.Helper()
	socket := filepath.Join(t.TempDir(), "run", "pod-security.sock")
	o := parseOptions(t, append(args, "--socket="+socket)...)
	require.NoError(t, o.validate())
	execPolicy, err := app.NewPolicy(&o.policy)
	require.NoError(t, err)

	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- run(ctx, o) }()
	t.Cleanup(func() {
		cancel()
		assert.NoError(t, <-served, "the daemon ends cleanly")
	})
	waitForSocket(t, socket, served)

	kubelet, err := grpctransport.New(&configv1alpha1.PluginConfig{
		Name: "pod-security", Type: configv1alpha1.GRPCPluginType, Endpoint: "unix://" + socket,
	})
	require.NoError(t, err)
	kubelet.Start(ctx)
	t.Cleanup(func() { _ = kubelet.Close() })
	return &daemon{kubelet: kubelet, execPolicy: execPolicy}
}

// waitForSocket waits until the daemon accepts connections on socket, or
// fails with its error.
func waitForSocket(t *testing.T, socket string, served <-chan error) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		select {
		case err := <-served:
			t.Fatalf("the daemon ended before it served: %v", err)
		default:
		}
		if conn, err := net.Dial("unix", socket); err == nil {
			conn.Close()
			return
		}
	}
	t.Fatalf("the daemon does not serve on %s", socket)
}

// admit asks the daemon, through the kubelet's GRPC transport, and the Exec
// plugin the same request and checks that they answer alike; it returns
// the daemon's answer.
func (d *daemon) admit(t *testing.T, pod *corev1.Pod, static bool) *podadmissionv1alpha1.PodAdmissionResponse {
	t.Helper()
	req := apptesting.KubeletRequest(pod, static)
	req.UID = types.UID("call-" + pod.Name)
	resp, err := d.kubelet.Admit(t.Context(), req)
	require.NoError(t, err)
	assert.Equal(t, execAdmit(t, d.execPolicy, req), resp, "the Exec plugin's answer")
	return resp
}

// execAdmit is the Exec plugin's answer to req.
func execAdmit(t *testing.T, p *app.Policy, req *podadmissionv1alpha1.PodAdmissionRequest) *podadmissionv1alpha1.PodAdmissionResponse {
	t.Helper()
	in, err := podadmissionv1alpha1.EncodeRequest(req)
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, plugin.HandleExec(t.Context(), p.Handle, bytes.NewReader(in), &out))
	resp, err := podadmissionv1alpha1.DecodeResponse(out.Bytes(), req)
	require.NoError(t, err)
	return resp
}

// TestUpstreamFixturesAsTheExecPlugin runs every upstream Pod Security
// Standards fixture through a daemon at its level and version: it answers
// what the Exec plugin answers, and admits the "pass" pods and rejects the
// "fail" ones.
func TestUpstreamFixturesAsTheExecPlugin(t *testing.T) {
	daemons := map[string]*daemon{}
	counts := map[bool]int{}
	for _, f := range apptesting.UpstreamFixtures(t) {
		d := daemons[f.Level+":"+f.Version]
		if d == nil {
			d = startDaemon(t, "--level="+f.Level, "--version="+f.Version)
			daemons[f.Level+":"+f.Version] = d
		}
		resp := d.admit(t, f.Pod, false)
		assert.Equal(t, f.Pass, resp.Allowed, "%s: %s", f.Name, resp.Message)
		counts[f.Pass]++
	}
	t.Logf("upstream fixtures through %d daemons: %d pass, %d fail", len(daemons), counts[true], counts[false])
	assert.Greater(t, counts[true], 500)
	assert.Greater(t, counts[false], 1000)
}

// TestRestrictedDenialReadsAsTheExecPlugins: the pod's status reads the
// same whichever form refused it.
func TestRestrictedDenialReadsAsTheExecPlugins(t *testing.T) {
	d := startDaemon(t, "--level=restricted", "--version=v1.37")
	pod := apptesting.HostNetworkPod("team-a")
	pod.Spec.HostPID = true
	pod.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
	pod.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 8080}}

	resp := d.admit(t, pod, false)
	assert.False(t, resp.Allowed)
	assert.Equal(t, app.ReasonPodSecurity, resp.Reason)
	assert.Equal(t, `violates PodSecurity "restricted:v1.37": host namespaces (hostNetwork=true, hostPID=true), hostPort (container "web" uses hostPort 8080), privileged (container "web" must not set securityContext.privileged=true), `+
		`allowPrivilegeEscalation != false (container "web" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "web" must set securityContext.capabilities.drop=["ALL"]), `+
		`runAsNonRoot != true (pod or container "web" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "web" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`, resp.Message)
}

// TestExemptionsAsTheExecPlugin: the GRPC request says whether the pod is
// static as the Exec request does, so --exempt-static-pods and the other
// exemptions decide alike.
func TestExemptionsAsTheExecPlugin(t *testing.T) {
	d := startDaemon(t, "--exempt-namespaces=kube-system,monitoring", "--exempt-runtime-classes=kata", "--exempt-static-pods")
	for name, tc := range map[string]struct {
		pod         *corev1.Pod
		static      bool
		wantAllowed bool
	}{
		"exempt namespace":         {apptesting.HostNetworkPod("kube-system"), false, true},
		"namespace not exempt":     {apptesting.HostNetworkPod("team-a"), false, false},
		"static pod":               {apptesting.HostNetworkPod("team-a"), true, true},
		"exempt runtime class":     {withRuntimeClass(apptesting.HostNetworkPod("team-a"), "kata"), false, true},
		"runtime class not exempt": {withRuntimeClass(apptesting.HostNetworkPod("team-a"), "runc"), false, false},
	} {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tc.wantAllowed, d.admit(t, tc.pod, tc.static).Allowed)
		})
	}

	// Without the flag, static pods are checked like any other.
	d = startDaemon(t)
	resp := d.admit(t, apptesting.HostNetworkPod("kube-system"), true)
	assert.False(t, resp.Allowed)
	assert.Equal(t, `violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true)`, resp.Message)
}

func withRuntimeClass(pod *corev1.Pod, name string) *corev1.Pod {
	pod.Spec.RuntimeClassName = &name
	return pod
}
