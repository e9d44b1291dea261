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
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/podadmission/podadmission/cmd/pod-security-plugin/app"
	"github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1/protocol"
	"github.com/podadmission/podadmission/pkg/plugin"
)

const hostNetworkRequest = `{"apiVersion":"podadmission.kubelet.k8s.io/v1alpha1","kind":"PodAdmissionRequest","uid":"3f1c",` +
	`"pod":{"metadata":{"name":"web","namespace":"team-a"},"spec":{"hostNetwork":true,"containers":[{"name":"web","image":"registry.example/web:1"}]}},` +
	`"node":{"name":"node-1"},"static":false,"attempt":1}`

func TestHandleExecAnswersTheRequest(t *testing.T) {
	p := baselinePolicy(t)
	var out bytes.Buffer
	require.NoError(t, plugin.HandleExec(context.Background(), p.Handle, strings.NewReader(hostNetworkRequest), &out))
	var resp map[string]any
	require.NoError(t, json.Unmarshal(out.Bytes(), &resp))
	assert.Equal(t, map[string]any{
		"apiVersion": "podadmission.kubelet.k8s.io/v1alpha1",
		"kind":       "PodAdmissionResponse",
		"uid":        "3f1c",
		"allowed":    false,
		"reason":     "PodSecurity",
		"message":    `violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true)`,
	}, resp)
}

func TestHandleExecInvalidRequests(t *testing.T) {
	p := baselinePolicy(t)
	for name, tc := range map[string]struct{ request, want string }{
		"empty":         {"", "invalid request: empty, want a PodAdmissionRequest JSON object"},
		"garbage":       {"hello", "invalid request: not JSON"},
		"unknown field": {strings.Replace(hostNetworkRequest, `"static":false`, `"static":false,"extra":1`, 1), `invalid request: unknown field "extra"`},
		"too large":     {strings.Repeat(" ", protocol.MaxRequestSize+1), "invalid request: larger than 16 MiB"},
	} {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			err := plugin.HandleExec(context.Background(), p.Handle, strings.NewReader(tc.request), &out)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Empty(t, out.String())
		})
	}
}

func baselinePolicy(t *testing.T) *app.Policy {
	t.Helper()
	p, err := app.NewPolicy(&app.Options{Level: "baseline", Version: "latest"})
	require.NoError(t, err)
	return p
}
