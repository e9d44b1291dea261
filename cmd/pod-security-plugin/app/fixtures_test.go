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
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	apptesting "github.com/podadmission/podadmission/cmd/pod-security-plugin/app/testing"
	"github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1/protocol"
	"github.com/podadmission/podadmission/pkg/plugin"
)

// TestUpstreamFixtures runs every upstream Pod Security Standards fixture
// through the plugin at its level and version: the "pass" pods must be
// admitted, the "fail" pods rejected with the PodSecurity reason and the
// apiserver's message.
func TestUpstreamFixtures(t *testing.T) {
	counts := map[bool]int{}
	policies := map[string]*Policy{}
	for _, f := range apptesting.UpstreamFixtures(t) {
		p := policies[f.Level+":"+f.Version]
		if p == nil {
			p = mustPolicy(t, Options{Level: f.Level, Version: f.Version})
			policies[f.Level+":"+f.Version] = p
		}
		resp := decide(t, p, apptesting.Request(t, f.Pod, false))
		counts[f.Pass]++
		if f.Pass {
			assert.True(t, resp.Allowed, "%s: %s", f.Name, resp.Message)
			continue
		}
		if assert.False(t, resp.Allowed, f.Name) {
			wantPrefix := `violates PodSecurity "` + f.Level + ":" + f.Version + `": `
			assert.Equal(t, ReasonPodSecurity, resp.Reason, f.Name)
			assert.True(t, strings.HasPrefix(resp.Message, wantPrefix), "%s: %q", f.Name, resp.Message)
			assert.LessOrEqual(t, len(resp.Message), protocol.MaxMessageLength, f.Name)
		}
	}
	t.Logf("upstream fixtures: %d pass, %d fail", counts[true], counts[false])
	// The module ships thousands; a handful would mean the layout changed.
	assert.Greater(t, counts[true], 500)
	assert.Greater(t, counts[false], 1000)
}

// TestRestrictedFixturesPassBaseline: every pod the restricted level admits, the
// baseline level admits too, at every version.
func TestRestrictedFixturesPassBaseline(t *testing.T) {
	checked := 0
	for _, f := range apptesting.UpstreamFixtures(t) {
		if f.Level != "restricted" || !f.Pass {
			continue
		}
		p := mustPolicy(t, Options{Level: "baseline", Version: f.Version})
		resp := decide(t, p, apptesting.Request(t, f.Pod, false))
		assert.True(t, resp.Allowed, "%s: %s", f.Name, resp.Message)
		checked++
	}
	require.NotZero(t, checked)
}

// decide runs the plugin's handler on req.
func decide(t *testing.T, p *Policy, req *plugin.Request) *plugin.Response {
	t.Helper()
	resp, err := p.Handle(context.Background(), req)
	require.NoError(t, err)
	return resp
}
