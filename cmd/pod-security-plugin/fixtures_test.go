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
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	k8sapiv1 "k8s.io/kubernetes/pkg/apis/core/v1"
	"sigs.k8s.io/yaml"

	podadmissionv1alpha1 "github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1"
	"github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1/protocol"
	"github.com/podadmission/podadmission/pkg/plugin"
)

// psaModuleDir returns the directory of the k8s.io/pod-security-admission
// module this plugin is built with; its test/testdata holds the upstream
// fixtures: for each level and policy version, pods that must pass and pods
// that must fail.
func psaModuleDir(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "k8s.io/pod-security-admission").Output()
	require.NoError(t, err, "go list -m k8s.io/pod-security-admission")
	dir := strings.TrimSpace(string(out))
	require.DirExists(t, filepath.Join(dir, "test", "testdata"))
	return dir
}

// apiDefaults applies the defaults the API server gives a pod before the
// kubelet sees it (upstream runs the fixtures through an API server too: a
// volume without a source is an emptyDir).
var apiDefaults = runtime.NewScheme()

func init() {
	utilruntime.Must(k8sapiv1.RegisterDefaults(apiDefaults))
}

func readFixture(t *testing.T, path string) *corev1.Pod {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	pod := &corev1.Pod{}
	require.NoError(t, yaml.UnmarshalStrict(data, pod), path)
	apiDefaults.Default(pod)
	if pod.Namespace == "" {
		pod.Namespace = "default"
	}
	return pod
}

// TestUpstreamFixtures runs every upstream Pod Security Standards fixture
// through the plugin at its level and version: the "pass" pods must be
// admitted, the "fail" pods rejected with the PodSecurity reason and the
// apiserver's message.
func TestUpstreamFixtures(t *testing.T) {
	testdata := filepath.Join(psaModuleDir(t), "test", "testdata")
	counts := map[string]int{}
	for _, level := range []string{"baseline", "restricted"} {
		versions, err := os.ReadDir(filepath.Join(testdata, level))
		require.NoError(t, err)
		require.NotEmpty(t, versions)
		for _, version := range versions {
			p, err := newPodSecurityPolicy(&options{level: level, version: version.Name()})
			require.NoError(t, err)
			wantPrefix := `violates PodSecurity "` + level + ":" + version.Name() + `": `
			for _, expect := range []string{"pass", "fail"} {
				files, _ := filepath.Glob(filepath.Join(testdata, level, version.Name(), expect, "*.yaml"))
				sort.Strings(files)
				for _, file := range files {
					resp := decide(t, p, request(t, readFixture(t, file), false))
					counts[expect]++
					rel, _ := filepath.Rel(testdata, file)
					if expect == "pass" {
						assert.True(t, resp.Allowed, "%s: %s", rel, resp.Message)
						continue
					}
					if assert.False(t, resp.Allowed, rel) {
						assert.Equal(t, ReasonPodSecurity, resp.Reason, rel)
						assert.True(t, strings.HasPrefix(resp.Message, wantPrefix), "%s: %q", rel, resp.Message)
						assert.LessOrEqual(t, len(resp.Message), protocol.MaxMessageLength, rel)
					}
				}
			}
		}
	}
	t.Logf("upstream fixtures: %d pass, %d fail", counts["pass"], counts["fail"])
	// The module ships thousands; a handful would mean the layout changed.
	assert.Greater(t, counts["pass"], 500)
	assert.Greater(t, counts["fail"], 1000)
}

// TestRestrictedPassesBaseline: every pod the restricted level admits, the
// baseline level admits too, at every version.
func TestRestrictedFixturesPassBaseline(t *testing.T) {
	testdata := filepath.Join(psaModuleDir(t), "test", "testdata")
	files, err := filepath.Glob(filepath.Join(testdata, "restricted", "*", "pass", "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		version := filepath.Base(filepath.Dir(filepath.Dir(file)))
		p, err := newPodSecurityPolicy(&options{level: "baseline", version: version})
		require.NoError(t, err)
		resp := decide(t, p, request(t, readFixture(t, file), false))
		assert.True(t, resp.Allowed, "%s: %s", file, resp.Message)
	}
}

// kubeletRequest is the kubelet's request for pod.
func kubeletRequest(pod *corev1.Pod, static bool) *podadmissionv1alpha1.PodAdmissionRequest {
	return &podadmissionv1alpha1.PodAdmissionRequest{
		TypeMeta: podadmissionv1alpha1.RequestTypeMeta(),
		UID:      "request-uid", Pod: pod, Static: static, Attempt: 1, Node: podadmissionv1alpha1.NodeInfo{Name: "node-1"},
	}
}

// request is the kubelet's request for pod as the plugin gets it: encoded
// by the kubelet, decoded by the SDK.
func request(t *testing.T, pod *corev1.Pod, static bool) *plugin.Request {
	t.Helper()
	data, err := podadmissionv1alpha1.EncodeRequest(kubeletRequest(pod, static))
	require.NoError(t, err)
	req, err := plugin.DecodeRequest(data)
	require.NoError(t, err)
	return req
}

// decide runs the plugin's handler on req.
func decide(t *testing.T, p *podSecurityPolicy, req *plugin.Request) *plugin.Response {
	t.Helper()
	resp, err := p.handle(context.Background(), req)
	require.NoError(t, err)
	return resp
}
