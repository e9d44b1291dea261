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
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/podadmission/podadmission/cmd/pod-security-plugin/app"
)

func parseOptions(t *testing.T, args ...string) *options {
	t.Helper()
	o := &options{}
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.addFlags(fs)
	require.NoError(t, fs.Parse(args))
	return o
}

// TestPolicyFlagsAreTheExecPlugins: the daemon takes the Exec plugin's
// flags, with its defaults, and --socket.
func TestPolicyFlagsAreTheExecPlugins(t *testing.T) {
	o := parseOptions(t, "--socket=unix:///run/podadmission/pod-security.sock")
	require.NoError(t, o.validate())
	assert.Equal(t, app.Options{Level: "baseline", Version: "latest"}, o.policy)
	assert.Equal(t, "/run/podadmission/pod-security.sock", o.socketPath())

	o = parseOptions(t, "--socket=/run/pod-security.sock", "--level=restricted", "--version=v1.37",
		"--exempt-namespaces=a,b", "--exempt-runtime-classes=kata", "--exempt-static-pods")
	require.NoError(t, o.validate())
	assert.Equal(t, app.Options{
		Level: "restricted", Version: "v1.37",
		ExemptNamespaces: []string{"a", "b"}, ExemptRuntimeClasses: []string{"kata"}, ExemptStaticPods: true,
	}, o.policy)
}

func TestOptionErrorsNameTheFlag(t *testing.T) {
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"no socket":       {nil, `--socket: required: the unix socket to serve the kubelet on, such as /run/podadmission/pod-security.sock`},
		"empty socket":    {[]string{"--socket="}, `--socket: required: `},
		"relative socket": {[]string{"--socket=pod-security.sock"}, `--socket "pod-security.sock": must be a unix socket: an absolute path or a unix:// URL`},
		"tcp socket":      {[]string{"--socket=tcp://127.0.0.1:1234"}, `--socket "tcp://127.0.0.1:1234": must be a unix socket: an absolute path or a unix:// URL`},
		"unclean socket":  {[]string{"--socket=/run//pod-security.sock"}, `--socket "/run//pod-security.sock": socket path must be clean (no //, ., .. or trailing /), like "/run/pod-security.sock"`},
		"level":           {[]string{"--socket=/run/ps.sock", "--level=strict"}, `--level "strict": must be baseline or restricted`},
		"namespace": {[]string{"--socket=/run/ps.sock", "--exempt-namespaces=Kube_System"},
			`--exempt-namespaces: "Kube_System" is not a namespace name: a lowercase RFC 1123 label`},
		"several": {[]string{"--level=privileged", "--version=next"},
			`--socket: required: the unix socket to serve the kubelet on, such as /run/podadmission/pod-security.sock; ` +
				`--level "privileged": must be baseline or restricted (privileged admits every pod: remove the plugin instead); --version "next": must be "latest" or "v1.x"`},
	} {
		t.Run(name, func(t *testing.T) {
			err := parseOptions(t, tc.args...).validate()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), "\n")
		})
	}
}
