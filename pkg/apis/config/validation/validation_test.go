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

package validation

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	configv1alpha1 "github.com/podadmission/podadmission/pkg/apis/config/v1alpha1"
)

func defaulted(p configv1alpha1.PluginConfig) configv1alpha1.PluginConfig {
	cfg := &configv1alpha1.PodAdmissionConfiguration{Plugins: []configv1alpha1.PluginConfig{p}}
	configv1alpha1.SetObjectDefaults_PodAdmissionConfiguration(cfg)
	return cfg.Plugins[0]
}

func execPlugin() configv1alpha1.PluginConfig {
	return defaulted(configv1alpha1.PluginConfig{Name: "exec-plugin", Type: configv1alpha1.ExecPluginType})
}

func grpcPlugin() configv1alpha1.PluginConfig {
	return defaulted(configv1alpha1.PluginConfig{Name: "grpc-plugin", Type: configv1alpha1.GRPCPluginType, Endpoint: "unix:///run/podadmission/grpc.sock"})
}

func errorStrings(t *testing.T, cfg *configv1alpha1.PodAdmissionConfiguration) []string {
	t.Helper()
	var out []string
	for _, err := range ValidatePodAdmissionConfiguration(cfg) {
		out = append(out, err.Error())
	}
	return out
}

func TestValidConfigurations(t *testing.T) {
	full := execPlugin()
	full.Args = []string{"--level=baseline", ""}
	full.Env = []configv1alpha1.ExecEnvVar{{Name: "LEVEL", Value: "baseline"}, {Name: "my.var_1", Value: ""}}
	full.Timeout = &metav1.Duration{Duration: time.Minute}
	full.MaxConcurrentCalls = ptr.To[int32](1)
	full.FailurePolicy = configv1alpha1.FailurePolicyIgnore
	full.MaxBlockedDuration = &metav1.Duration{Duration: time.Hour}
	full.Match = &configv1alpha1.PodMatch{
		Namespaces:        []string{"default", "team-a"},
		ExcludeNamespaces: []string{"kube-system"},
		PodSelector: &metav1.LabelSelector{
			MatchLabels:      map[string]string{"app.kubernetes.io/name": "web"},
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"front"}}},
		},
		PodSource: configv1alpha1.StaticPodSource,
	}
	hard := grpcPlugin()
	hard.Name = "hard"
	hard.RejectionMode = configv1alpha1.RejectionModeHard
	hard.Endpoint = "/run/podadmission/hard.sock"
	hard.ServerUID = ptr.To(configv1alpha1.MaxServerUID)
	hard.MaxConcurrentCalls = ptr.To(configv1alpha1.MaxConcurrentCallsLimit)

	for name, cfg := range map[string]*configv1alpha1.PodAdmissionConfiguration{
		"no plugins":      {Plugins: []configv1alpha1.PluginConfig{}},
		"defaults":        {Plugins: []configv1alpha1.PluginConfig{execPlugin(), grpcPlugin()}},
		"every field set": {Plugins: []configv1alpha1.PluginConfig{full, hard}},
	} {
		t.Run(name, func(t *testing.T) {
			assert.Empty(t, errorStrings(t, cfg))
		})
	}
}

func TestValidationErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		plugin func() configv1alpha1.PluginConfig
		want   []string
	}{
		"name missing": {
			plugin: func() configv1alpha1.PluginConfig { p := execPlugin(); p.Name = ""; return p },
			want:   []string{"plugins[0].name: Required value"},
		},
		"name not a DNS label": {
			plugin: func() configv1alpha1.PluginConfig { p := execPlugin(); p.Name = "../Sbin"; return p },
			want:   []string{`plugins[0].name: Invalid value: "../Sbin": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`},
		},
		"name too long": {
			plugin: func() configv1alpha1.PluginConfig { p := execPlugin(); p.Name = strings.Repeat("a", 64); return p },
			want:   []string{`plugins[0].name: Invalid value: "` + strings.Repeat("a", 64) + `": must be no more than 63 characters`},
		},
		"type missing": {
			plugin: func() configv1alpha1.PluginConfig { p := execPlugin(); p.Type = ""; return p },
			want:   []string{`plugins[0].type: Required value: must be "Exec" or "GRPC"`},
		},
		"type unknown": {
			plugin: func() configv1alpha1.PluginConfig { p := execPlugin(); p.Type = "exec"; return p },
			want:   []string{`plugins[0].type: Unsupported value: "exec": supported values: "Exec", "GRPC"`},
		},
		"endpoint on Exec": {
			plugin: func() configv1alpha1.PluginConfig { p := execPlugin(); p.Endpoint = "/run/x.sock"; return p },
			want:   []string{"plugins[0].endpoint: Forbidden: only GRPC plugins have an endpoint; an Exec plugin is the executable named like the plugin in the plugin bin dir"},
		},
		"endpoint missing on GRPC": {
			plugin: func() configv1alpha1.PluginConfig { p := grpcPlugin(); p.Endpoint = ""; return p },
			want:   []string{"plugins[0].endpoint: Required value: a GRPC plugin needs the unix socket it serves on"},
		},
		"endpoint TCP": {
			plugin: func() configv1alpha1.PluginConfig { p := grpcPlugin(); p.Endpoint = "tcp://127.0.0.1:9000"; return p },
			want:   []string{`plugins[0].endpoint: Invalid value: "tcp://127.0.0.1:9000": must be a unix socket: an absolute path or a unix:// URL`},
		},
		"endpoint relative": {
			plugin: func() configv1alpha1.PluginConfig { p := grpcPlugin(); p.Endpoint = "unix://run/x.sock"; return p },
			want:   []string{`plugins[0].endpoint: Invalid value: "unix://run/x.sock": must be a unix socket: an absolute path or a unix:// URL`},
		},
		"endpoint not clean": {
			plugin: func() configv1alpha1.PluginConfig { p := grpcPlugin(); p.Endpoint = "/run/../tmp/x.sock"; return p },
			want:   []string{`plugins[0].endpoint: Invalid value: "/run/../tmp/x.sock": socket path must be clean (no //, ., .. or trailing /), like "/tmp/x.sock"`},
		},
		"endpoint too long": {
			plugin: func() configv1alpha1.PluginConfig {
				p := grpcPlugin()
				p.Endpoint = "/" + strings.Repeat("s", 107)
				return p
			},
			want: []string{`plugins[0].endpoint: Invalid value: "/` + strings.Repeat("s", 107) + `": socket path must be at most 107 bytes long`},
		},
		"args and env on GRPC": {
			plugin: func() configv1alpha1.PluginConfig {
				p := grpcPlugin()
				p.Args = []string{"-v"}
				p.Env = []configv1alpha1.ExecEnvVar{{Name: "A", Value: "b"}}
				return p
			},
			want: []string{"plugins[0].args: Forbidden: only Exec plugins take args", "plugins[0].env: Forbidden: only Exec plugins take env"},
		},
		"NUL in arg and env value": {
			plugin: func() configv1alpha1.PluginConfig {
				p := execPlugin()
				p.Args = []string{"ok", "a\x00b"}
				p.Env = []configv1alpha1.ExecEnvVar{{Name: "A", Value: "\x00"}}
				return p
			},
			want: []string{`plugins[0].args[1]: Invalid value: "a\x00b": must not contain a NUL byte`, `plugins[0].env[0].value: Invalid value: "\x00": must not contain a NUL byte`},
		},
		"env names": {
			plugin: func() configv1alpha1.PluginConfig {
				p := execPlugin()
				p.Env = []configv1alpha1.ExecEnvVar{{Name: ""}, {Name: "1A=B"}, {Name: "X"}, {Name: "X"}}
				return p
			},
			want: []string{
				"plugins[0].env[0].name: Required value",
				`plugins[0].env[1].name: Invalid value: "1A=B": a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit (e.g. 'my.env-name',  or 'MY_ENV.NAME',  or 'MyEnvName1', regex used for validation is '[-._a-zA-Z][-._a-zA-Z0-9]*')`,
				`plugins[0].env[3].name: Duplicate value: "X"`,
			},
		},
		"timeout zero": {
			plugin: func() configv1alpha1.PluginConfig { p := execPlugin(); p.Timeout = &metav1.Duration{}; return p },
			want:   []string{`plugins[0].timeout: Invalid value: "0s": must be greater than 0`},
		},
		"timeout too long": {
			plugin: func() configv1alpha1.PluginConfig {
				p := execPlugin()
				p.Timeout = &metav1.Duration{Duration: 61 * time.Second}
				return p
			},
			want: []string{`plugins[0].timeout: Invalid value: "1m1s": must be at most 1m0s`},
		},
		"not defaulted": {
			plugin: func() configv1alpha1.PluginConfig {
				return configv1alpha1.PluginConfig{Name: "raw", Type: configv1alpha1.ExecPluginType}
			},
			want: []string{
				"plugins[0].timeout: Required value",
				"plugins[0].maxConcurrentCalls: Required value",
				`plugins[0].failurePolicy: Required value: must be "Fail" or "Ignore"`,
				`plugins[0].rejectionMode: Required value: must be "Soft" or "Hard"`,
			},
		},
		"maxConcurrentCalls zero": {
			plugin: func() configv1alpha1.PluginConfig {
				p := execPlugin()
				p.MaxConcurrentCalls = ptr.To[int32](0)
				return p
			},
			want: []string{"plugins[0].maxConcurrentCalls: Invalid value: 0: must be between 1 and 256"},
		},
		"maxConcurrentCalls above the limit": {
			plugin: func() configv1alpha1.PluginConfig {
				p := grpcPlugin()
				p.MaxConcurrentCalls = ptr.To[int32](257)
				return p
			},
			want: []string{"plugins[0].maxConcurrentCalls: Invalid value: 257: must be between 1 and 256"},
		},
		"serverUID on Exec": {
			plugin: func() configv1alpha1.PluginConfig { p := execPlugin(); p.ServerUID = ptr.To[int64](0); return p },
			want:   []string{"plugins[0].serverUID: Forbidden: only GRPC plugins have a server"},
		},
		"serverUID negative": {
			plugin: func() configv1alpha1.PluginConfig { p := grpcPlugin(); p.ServerUID = ptr.To[int64](-1); return p },
			want:   []string{"plugins[0].serverUID: Invalid value: -1: must be a user id between 0 and 4294967294"},
		},
		"serverUID is (uid_t)-1": {
			plugin: func() configv1alpha1.PluginConfig {
				p := grpcPlugin()
				p.ServerUID = ptr.To[int64](1<<32 - 1)
				return p
			},
			want: []string{"plugins[0].serverUID: Invalid value: 4294967295: must be a user id between 0 and 4294967294"},
		},
		"enums": {
			plugin: func() configv1alpha1.PluginConfig {
				p := execPlugin()
				p.FailurePolicy = "fail"
				p.RejectionMode = "Terminal"
				return p
			},
			want: []string{
				`plugins[0].failurePolicy: Unsupported value: "fail": supported values: "Fail", "Ignore"`,
				`plugins[0].rejectionMode: Unsupported value: "Terminal": supported values: "Soft", "Hard"`,
			},
		},
		"maxBlockedDuration negative": {
			plugin: func() configv1alpha1.PluginConfig {
				p := execPlugin()
				p.MaxBlockedDuration = &metav1.Duration{Duration: -time.Second}
				return p
			},
			want: []string{`plugins[0].maxBlockedDuration: Invalid value: "-1s": must be greater than 0`},
		},
		"maxBlockedDuration with Hard": {
			plugin: func() configv1alpha1.PluginConfig {
				p := execPlugin()
				p.RejectionMode = configv1alpha1.RejectionModeHard
				p.MaxBlockedDuration = &metav1.Duration{Duration: time.Minute}
				return p
			},
			want: []string{"plugins[0].maxBlockedDuration: Forbidden: only applies to rejectionMode Soft: a Hard rejection fails the pod at once"},
		},
		"namespaces": {
			plugin: func() configv1alpha1.PluginConfig {
				p := execPlugin()
				p.Match.Namespaces = []string{"default", "Kube_System", "default"}
				p.Match.ExcludeNamespaces = []string{"default"}
				return p
			},
			want: []string{
				`plugins[0].match.namespaces[1]: Invalid value: "Kube_System": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
				`plugins[0].match.namespaces[2]: Duplicate value: "default"`,
				`plugins[0].match.excludeNamespaces[0]: Invalid value: "default": must not also be listed in namespaces`,
			},
		},
		"pod selector": {
			plugin: func() configv1alpha1.PluginConfig {
				p := execPlugin()
				p.Match.PodSelector = &metav1.LabelSelector{
					MatchLabels:      map[string]string{"app": "not valid"},
					MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: "Equals", Values: []string{"a"}}},
				}
				return p
			},
			want: []string{
				`plugins[0].match.podSelector.matchLabels: Invalid value: "not valid": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
				`plugins[0].match.podSelector.matchExpressions[0].operator: Invalid value: "Equals": not a valid selector operator`,
			},
		},
		"pod source": {
			plugin: func() configv1alpha1.PluginConfig { p := execPlugin(); p.Match.PodSource = "Mirror"; return p },
			want:   []string{`plugins[0].match.podSource: Unsupported value: "Mirror": supported values: "All", "API", "Static"`},
		},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := &configv1alpha1.PodAdmissionConfiguration{Plugins: []configv1alpha1.PluginConfig{tc.plugin()}}
			assert.Equal(t, tc.want, errorStrings(t, cfg))
		})
	}
}

// A half-written file reads as "plugins:" (null) or as apiVersion and kind
// alone; neither may stand for "no plugins".
func TestPluginsListIsRequired(t *testing.T) {
	assert.Equal(t, []string{`plugins: Required value: must be a list of plugins; write "plugins: []" for none`},
		errorStrings(t, &configv1alpha1.PodAdmissionConfiguration{}))
}

func TestDuplicateNamesInOneFile(t *testing.T) {
	second := grpcPlugin()
	second.Name = "exec-plugin"
	cfg := &configv1alpha1.PodAdmissionConfiguration{Plugins: []configv1alpha1.PluginConfig{execPlugin(), grpcPlugin(), second}}
	assert.Equal(t, []string{`plugins[2].name: Duplicate value: "exec-plugin"`}, errorStrings(t, cfg))
}

func TestSocketPath(t *testing.T) {
	for endpoint, want := range map[string]string{
		"/run/a.sock":        "/run/a.sock",
		"unix:///run/a.sock": "/run/a.sock",
	} {
		got, err := SocketPath(endpoint)
		require.NoError(t, err, endpoint)
		assert.Equal(t, want, got)
	}
	for _, endpoint := range []string{"", "a.sock", "unix://a.sock", "unix:", "http:///run/a.sock"} {
		_, err := SocketPath(endpoint)
		assert.EqualError(t, err, "must be a unix socket: an absolute path or a unix:// URL", endpoint)
	}
}
