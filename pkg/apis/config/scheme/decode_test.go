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

package scheme

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	configv1alpha1 "github.com/podadmission/podadmission/pkg/apis/config/v1alpha1"
)

const header = "apiVersion: podadmission.kubelet.config.k8s.io/v1alpha1\nkind: PodAdmissionConfiguration\n"

func TestDecodeAppliesDefaults(t *testing.T) {
	cfg, err := Decode([]byte(header + `
plugins:
- name: exec-plugin
  type: Exec
- name: grpc-plugin
  type: GRPC
  endpoint: /run/grpc.sock
`))
	require.NoError(t, err)
	want := []configv1alpha1.PluginConfig{{
		Name:               "exec-plugin",
		Type:               configv1alpha1.ExecPluginType,
		Timeout:            &metav1.Duration{Duration: 5 * time.Second},
		MaxConcurrentCalls: ptr.To[int32](4),
		FailurePolicy:      configv1alpha1.FailurePolicyFail,
		RejectionMode:      configv1alpha1.RejectionModeSoft,
		Match:              &configv1alpha1.PodMatch{PodSource: configv1alpha1.AllPodSources},
	}, {
		Name:               "grpc-plugin",
		Type:               configv1alpha1.GRPCPluginType,
		Endpoint:           "/run/grpc.sock",
		Timeout:            &metav1.Duration{Duration: 5 * time.Second},
		MaxConcurrentCalls: ptr.To[int32](16),
		FailurePolicy:      configv1alpha1.FailurePolicyFail,
		RejectionMode:      configv1alpha1.RejectionModeSoft,
		Match:              &configv1alpha1.PodMatch{PodSource: configv1alpha1.AllPodSources},
	}}
	assert.Equal(t, want, cfg.Plugins)
	assert.Equal(t, "podadmission.kubelet.config.k8s.io/v1alpha1", cfg.APIVersion)
	assert.Equal(t, "PodAdmissionConfiguration", cfg.Kind)
}

func TestDecodeKeepsExplicitValues(t *testing.T) {
	cfg, err := Decode([]byte(`{
  "apiVersion": "podadmission.kubelet.config.k8s.io/v1alpha1",
  "kind": "PodAdmissionConfiguration",
  "plugins": [{
    "name": "pss",
    "type": "Exec",
    "args": ["--level", "baseline"],
    "env": [{"name": "LEVEL", "value": "baseline"}],
    "timeout": "2s",
    "maxConcurrentCalls": 2,
    "failurePolicy": "Ignore",
    "rejectionMode": "Soft",
    "maxBlockedDuration": "10m",
    "match": {
      "namespaces": ["default"],
      "excludeNamespaces": ["kube-system"],
      "podSelector": {"matchLabels": {"app": "web"}},
      "podSource": "Static"
    }
  }]
}`))
	require.NoError(t, err)
	require.Len(t, cfg.Plugins, 1)
	assert.Equal(t, configv1alpha1.PluginConfig{
		Name:               "pss",
		Type:               configv1alpha1.ExecPluginType,
		Args:               []string{"--level", "baseline"},
		Env:                []configv1alpha1.ExecEnvVar{{Name: "LEVEL", Value: "baseline"}},
		Timeout:            &metav1.Duration{Duration: 2 * time.Second},
		MaxConcurrentCalls: ptr.To[int32](2),
		FailurePolicy:      configv1alpha1.FailurePolicyIgnore,
		RejectionMode:      configv1alpha1.RejectionModeSoft,
		MaxBlockedDuration: &metav1.Duration{Duration: 10 * time.Minute},
		Match: &configv1alpha1.PodMatch{
			Namespaces:        []string{"default"},
			ExcludeNamespaces: []string{"kube-system"},
			PodSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			PodSource:         configv1alpha1.StaticPodSource,
		},
	}, cfg.Plugins[0])
}

func TestDecodeWithoutPlugins(t *testing.T) {
	cfg, err := Decode([]byte("# no plugins yet\n---\n" + header))
	require.NoError(t, err)
	assert.Empty(t, cfg.Plugins)
}

func TestDecodeErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		data    string
		wantErr string
	}{
		"unknown field": {
			data:    header + "plugins:\n- name: a\n  type: Exec\n  timout: 1s\n",
			wantErr: `strict decoding error: unknown field "plugins[0].timout"`,
		},
		"unknown top-level field": {
			data:    header + "plugin:\n- name: a\n",
			wantErr: `strict decoding error: unknown field "plugin"`,
		},
		"duplicate field in YAML": {
			data:    header + "plugins:\n- name: a\n  name: b\n  type: Exec\n",
			wantErr: "strict decoding error: yaml: unmarshal errors:\n  line 5: key \"name\" already set in map",
		},
		"duplicate field in JSON": {
			data:    `{"apiVersion": "podadmission.kubelet.config.k8s.io/v1alpha1", "kind": "PodAdmissionConfiguration", "plugins": [{"name": "a", "name": "b", "type": "Exec"}]}`,
			wantErr: `strict decoding error: duplicate field "plugins[0].name"`,
		},
		"missing apiVersion": {
			data:    "kind: PodAdmissionConfiguration\n",
			wantErr: `apiVersion: Required value: must be "podadmission.kubelet.config.k8s.io/v1alpha1"`,
		},
		"wrong apiVersion": {
			data:    "apiVersion: kubelet.config.k8s.io/v1\nkind: PodAdmissionConfiguration\n",
			wantErr: `apiVersion: Unsupported value: "kubelet.config.k8s.io/v1": supported values: "podadmission.kubelet.config.k8s.io/v1alpha1"`,
		},
		"wrong kind": {
			data:    "apiVersion: podadmission.kubelet.config.k8s.io/v1alpha1\nkind: CredentialProviderConfig\n",
			wantErr: `kind: Unsupported value: "CredentialProviderConfig": supported values: "PodAdmissionConfiguration"`,
		},
		"missing apiVersion and kind": {
			data:    "plugins: []\n",
			wantErr: `[apiVersion: Required value: must be "podadmission.kubelet.config.k8s.io/v1alpha1", kind: Required value: must be "PodAdmissionConfiguration"]`,
		},
		"empty": {
			data:    "",
			wantErr: "no PodAdmissionConfiguration in the file: it is empty or holds only comments",
		},
		"only comments": {
			data:    "# plugins: []\n---\n# nothing\n",
			wantErr: "no PodAdmissionConfiguration in the file: it is empty or holds only comments",
		},
		"two documents": {
			data:    header + "---\n" + header,
			wantErr: "2 YAML documents in the file: it must hold exactly one PodAdmissionConfiguration",
		},
		"bad timeout": {
			data:    header + "plugins:\n- name: a\n  type: Exec\n  timeout: 5x\n",
			wantErr: `plugins[0].timeout: Invalid value: "5x": must be a duration such as "5s": time: unknown unit "x" in duration "5x"`,
		},
		"numeric maxBlockedDuration": {
			data:    header + "plugins:\n- name: a\n  type: Exec\n- name: b\n  type: Exec\n  maxBlockedDuration: 300\n",
			wantErr: `plugins[1].maxBlockedDuration: Invalid value: "300": must be a duration string such as "5s"`,
		},
		"wrong type of value": {
			data:    header + "plugins:\n- name: a\n  type: Exec\n  maxConcurrentCalls: many\n",
			wantErr: "json: cannot unmarshal string into Go struct field PluginConfig.plugins.maxConcurrentCalls of type int32",
		},
		"plugins not a list": {
			data:    header + "plugins: {name: a}\n",
			wantErr: "json: cannot unmarshal object into Go struct field PodAdmissionConfiguration.plugins of type []v1alpha1.PluginConfig",
		},
		"YAML syntax": {
			data:    header + "plugins: [\n",
			wantErr: "yaml: line 3: did not find expected node content",
		},
	} {
		t.Run(name, func(t *testing.T) {
			cfg, err := Decode([]byte(tc.data))
			require.EqualError(t, err, tc.wantErr)
			assert.Nil(t, cfg)
		})
	}
}

// Validation tells "plugins: []" (no plugins, on purpose) from "plugins:"
// and a missing key (a half-written file) by nil; decoding must keep that.
func TestDecodeKeepsAnExplicitEmptyPluginsList(t *testing.T) {
	for doc, wantNil := range map[string]bool{
		header + "plugins: []\n": false,
		`{"apiVersion": "podadmission.kubelet.config.k8s.io/v1alpha1", "kind": "PodAdmissionConfiguration", "plugins": []}`: false,
		header + "plugins:\n":      true,
		header + "plugins: null\n": true,
		header:                     true,
	} {
		cfg, err := Decode([]byte(doc))
		require.NoError(t, err, doc)
		assert.Equal(t, wantNil, cfg.Plugins == nil, "plugins of %q", doc)
		assert.Empty(t, cfg.Plugins)
	}
}
