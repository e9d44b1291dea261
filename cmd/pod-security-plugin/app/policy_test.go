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

package app

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	apptesting "github.com/podadmission/podadmission/cmd/pod-security-plugin/app/testing"
	"github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1/protocol"
	"github.com/podadmission/podadmission/pkg/plugin"
)

func mustPolicy(t *testing.T, o Options) *Policy {
	t.Helper()
	p, err := NewPolicy(&o)
	require.NoError(t, err)
	return p
}

func TestRejectsLikeTheAPIServer(t *testing.T) {
	p := mustPolicy(t, Options{Level: "baseline", Version: "latest"})
	resp := decide(t, p, apptesting.Request(t, apptesting.HostNetworkPod("team-a"), false))
	assert.Equal(t, &plugin.Response{
		Reason:  "PodSecurity",
		Message: `violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true)`,
	}, resp)

	pod := apptesting.HostNetworkPod("team-a")
	pod.Spec.HostPID = true
	pod.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
	pod.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 8080}}
	p = mustPolicy(t, Options{Level: "restricted", Version: "v1.37"})
	resp = decide(t, p, apptesting.Request(t, pod, false))
	assert.Equal(t, `violates PodSecurity "restricted:v1.37": host namespaces (hostNetwork=true, hostPID=true), hostPort (container "web" uses hostPort 8080), privileged (container "web" must not set securityContext.privileged=true), `+
		`allowPrivilegeEscalation != false (container "web" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "web" must set securityContext.capabilities.drop=["ALL"]), `+
		`runAsNonRoot != true (pod or container "web" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "web" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`, resp.Message)
}

func TestAdmitsCompliantPods(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team-a"},
		Spec: corev1.PodSpec{
			SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
			Containers: []corev1.Container{{Name: "web", Image: "registry.example/web:1", SecurityContext: &corev1.SecurityContext{
				AllowPrivilegeEscalation: ptr.To(false),
				Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			}}},
		},
	}
	for _, level := range []string{"baseline", "restricted"} {
		resp := decide(t, mustPolicy(t, Options{Level: level, Version: "latest"}), apptesting.Request(t, pod, false))
		assert.True(t, resp.Allowed, level)
		assert.Empty(t, resp.Reason)
	}
}

func TestPinnedVersion(t *testing.T) {
	// Restricted requires dropping ALL capabilities since v1.22.
	pod := apptesting.HostNetworkPod("team-a")
	pod.Spec.HostNetwork = false
	pod.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}
	pod.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false)}
	assert.True(t, decide(t, mustPolicy(t, Options{Level: "restricted", Version: "v1.21"}), apptesting.Request(t, pod, false)).Allowed)
	resp := decide(t, mustPolicy(t, Options{Level: "restricted", Version: "v1.22"}), apptesting.Request(t, pod, false))
	assert.Equal(t, `violates PodSecurity "restricted:v1.22": unrestricted capabilities (container "web" must set securityContext.capabilities.drop=["ALL"])`, resp.Message)
}

func TestExemptions(t *testing.T) {
	p := mustPolicy(t, Options{
		Level: "baseline", Version: "latest",
		ExemptNamespaces:     []string{"kube-system", "monitoring"},
		ExemptRuntimeClasses: []string{"kata"},
		ExemptStaticPods:     true,
	})
	for name, tc := range map[string]struct {
		req         *plugin.Request
		wantAllowed bool
	}{
		"exempt namespace":         {apptesting.Request(t, apptesting.HostNetworkPod("kube-system"), false), true},
		"other exempt namespace":   {apptesting.Request(t, apptesting.HostNetworkPod("monitoring"), false), true},
		"namespace not exempt":     {apptesting.Request(t, apptesting.HostNetworkPod("team-a"), false), false},
		"static pod":               {apptesting.Request(t, apptesting.HostNetworkPod("team-a"), true), true},
		"exempt runtime class":     {apptesting.Request(t, withRuntimeClass(apptesting.HostNetworkPod("team-a"), "kata"), false), true},
		"runtime class not exempt": {apptesting.Request(t, withRuntimeClass(apptesting.HostNetworkPod("team-a"), "runc"), false), false},
	} {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tc.wantAllowed, decide(t, p, tc.req).Allowed)
		})
	}

	// Without the flag, static pods are checked like any other.
	p = mustPolicy(t, Options{Level: "baseline", Version: "latest"})
	assert.False(t, decide(t, p, apptesting.Request(t, apptesting.HostNetworkPod("kube-system"), true)).Allowed)
}

func withRuntimeClass(pod *corev1.Pod, name string) *corev1.Pod {
	pod.Spec.RuntimeClassName = &name
	return pod
}

func TestLongMessagesAreCutToTheProtocolLimit(t *testing.T) {
	pod := apptesting.HostNetworkPod("team-a")
	pod.Spec.Containers = nil
	for i := range 60 {
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{
			Name:            fmt.Sprintf("container-with-a-long-name-%02d", i),
			Image:           "registry.example/app:1",
			SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)},
		})
	}
	resp := decide(t, mustPolicy(t, Options{Level: "baseline", Version: "latest"}), apptesting.Request(t, pod, false))
	assert.Len(t, resp.Message, protocol.MaxMessageLength)
	assert.True(t, strings.HasPrefix(resp.Message, `violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true), privileged (containers "container-with-a-long-name-00", `), resp.Message)
	assert.True(t, strings.HasSuffix(resp.Message, " (...)"), resp.Message)
	assert.NoError(t, resp.Validate(), "the kubelet accepts the response")
}
