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
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	kubetypes "k8s.io/kubernetes/pkg/kubelet/types"
)

const webPod = `apiVersion: v1
kind: Pod
metadata:
  name: web
  labels: {app: web}
spec:
  containers:
  - name: web
    image: registry.example/web:1
`

func TestReadPodAppliesTheAPIServerDefaults(t *testing.T) {
	pod, err := readPod("pod.yaml", strings.NewReader(webPod))
	require.NoError(t, err)
	assert.Equal(t, "web", pod.Name)
	assert.Equal(t, v1.RestartPolicyAlways, pod.Spec.RestartPolicy)
	assert.Equal(t, v1.DNSClusterFirst, pod.Spec.DNSPolicy)
	assert.Equal(t, v1.PullIfNotPresent, pod.Spec.Containers[0].ImagePullPolicy)
	assert.Equal(t, "/dev/termination-log", pod.Spec.Containers[0].TerminationMessagePath)
}

func TestReadPodAcceptsJSONAndComments(t *testing.T) {
	pod, err := readPod("pod.json", strings.NewReader(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"j"},"spec":{"containers":[{"name":"c","image":"i"}]}}`))
	require.NoError(t, err)
	assert.Equal(t, "j", pod.Name)

	pod, err = readPod("pod.yaml", strings.NewReader("# a comment\n---\n"+webPod+"---\n# trailing comment\n"))
	require.NoError(t, err)
	assert.Equal(t, "web", pod.Name)
}

func TestReadPodErrorsNameTheManifest(t *testing.T) {
	for name, tc := range map[string]struct{ manifest, want string }{
		"empty": {"", "pod.yaml: empty, want a Pod manifest"},
		"unknown field": {strings.Replace(webPod, "  containers:", "  hostNetwrk: true\n  containers:", 1),
			`pod.yaml: strict decoding error: unknown field "spec.hostNetwrk"`},
		"duplicate field": {strings.Replace(webPod, "  name: web\n", "  name: web\n  name: other\n", 1),
			"pod.yaml: not YAML or JSON: yaml: unmarshal errors:\n  line 5: key \"name\" already set in map"},
		"deployment": {"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n",
			`pod.yaml: apiVersion "apps/v1", kind "Deployment": want apiVersion "v1", kind "Pod" (the kubelet admits pods, not the objects that create them)`},
		"no kind":        {"metadata: {name: web}\n", `pod.yaml: apiVersion "", kind "": want apiVersion "v1", kind "Pod"`},
		"two documents":  {webPod + "---\n" + webPod, "pod.yaml: holds 2 YAML documents, want one Pod"},
		"not yaml":       {"{{{", "pod.yaml: not YAML or JSON"},
		"wrong type":     {strings.Replace(webPod, "name: web\n  labels", "name: [web]\n  labels", 1), `pod.yaml: `},
		"not an object":  {"- a\n- b\n", "pod.yaml: not a Kubernetes object"},
		"too large":      {strings.Repeat("#", maxManifestSize+1), "pod.yaml: larger than 10 MiB"},
		"bad field type": {strings.Replace(webPod, "  containers:", "  hostNetwork: yes-please\n  containers:", 1), `pod.yaml: `},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := readPod("pod.yaml", strings.NewReader(tc.manifest))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestPodAsNodeSeesAPIPod(t *testing.T) {
	pod, err := readPod("pod.yaml", strings.NewReader(webPod))
	require.NoError(t, err)
	seen, err := podAsNodeSees("pod.yaml", pod, "node-1", false)
	require.NoError(t, err)
	assert.Equal(t, "default", seen.Namespace)
	assert.Equal(t, "web", seen.Name)
	assert.NotEmpty(t, seen.UID)
	assert.Equal(t, "node-1", seen.Spec.NodeName)
	assert.False(t, kubetypes.IsStaticPod(seen))
	assert.Empty(t, pod.Spec.NodeName, "the decoded pod is not modified")
}

func TestPodAsNodeSeesGenerateName(t *testing.T) {
	pod, err := readPod("pod.yaml", strings.NewReader(strings.Replace(webPod, "name: web\n", "generateName: web-\n", 1)))
	require.NoError(t, err)
	seen, err := podAsNodeSees("pod.yaml", pod, "node-1", false)
	require.NoError(t, err)
	assert.Regexp(t, `^web-[a-z0-9]{5}$`, seen.Name)

	_, err = podAsNodeSees("pod.yaml", pod, "node-1", true)
	assert.EqualError(t, err, "pod.yaml: metadata.name: Required value")
}

func TestPodAsNodeSeesStaticPod(t *testing.T) {
	pod, err := readPod("etcd.yaml", strings.NewReader(strings.Replace(webPod, "  labels", "  namespace: kube-system\n  labels", 1)))
	require.NoError(t, err)
	seen, err := podAsNodeSees("etcd.yaml", pod, "Node-1", true)
	require.NoError(t, err)
	assert.True(t, kubetypes.IsStaticPod(seen))
	assert.Equal(t, "web-node-1", seen.Name)
	assert.Equal(t, "kube-system", seen.Namespace)
	assert.Equal(t, string(seen.UID), seen.Annotations[kubetypes.ConfigHashAnnotationKey])
	assert.Contains(t, seen.Spec.Tolerations, v1.Toleration{Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute})
}
