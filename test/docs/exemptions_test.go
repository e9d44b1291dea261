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

package docs

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podadmission/podadmission/pkg/kubelet/podadmission"
)

// securityPlugin is the plugin that enforces a node policy in the samples.
const securityPlugin = "pod-security-plugin"

// Case 8 of issue 12: the sample configuration and KEP story 1 exempted
// kube-system, a namespace the cluster admin controls, from the node's pod
// security policy. No sample may exempt a namespace from it: a kube-system
// pod from the API server must reach the plugin.
func TestNoSampleExemptsANamespaceFromTheSecurityPlugin(t *testing.T) {
	samples := map[string]string{}
	for _, document := range documents {
		for _, ex := range examples(t, document) {
			if strings.Contains(ex.body, "kind: PodAdmissionConfiguration") && strings.Contains(ex.body, "name: "+securityPlugin) {
				samples[ex.document+":"+strconv.Itoa(ex.line)] = ex.body
			}
		}
	}
	files, err := filepath.Glob(filepath.Join("..", "..", "examples", "pod-admission", "*.yaml"))
	require.NoError(t, err)
	for _, file := range files {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		if strings.Contains(string(data), "name: "+securityPlugin) {
			samples[file] = string(data)
		}
	}
	require.GreaterOrEqual(t, len(samples), 3, "the README sample, KEP story 1 and examples/pod-admission")

	for name, body := range samples {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.Chmod(dir, 0o755))
			path := filepath.Join(dir, "10-sample.yaml")
			require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
			cfg, err := podadmission.LoadConfig(path)
			require.NoError(t, err)
			for _, p := range cfg.Plugins {
				if p.Name == securityPlugin {
					for _, arg := range p.Args {
						assert.NotContains(t, arg, "--exempt-namespaces", "the plugin exempts namespaces itself")
					}
				}
			}
			// No plugin is installed here: a plugin the pod reaches fails its
			// call, one whose match section leaves the pod out is not called.
			chain, err := podadmission.NewChain(t.Context(), cfg, t.TempDir())
			require.NoError(t, err)
			defer chain.Close()
			pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "privileged", UID: "uid-1"}}
			result := chain.Evaluate(context.Background(), podadmission.EvaluationRequest{Pod: pod, AllPlugins: true})
			for _, d := range result.Decisions {
				if d.Plugin.Name == securityPlugin {
					assert.NotEqual(t, podadmission.OutcomeNotMatched, d.Outcome, "a kube-system pod bypasses the security plugin")
				}
			}
		})
	}
}
