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
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	apptesting "github.com/podadmission/podadmission/cmd/pod-security-plugin/app/testing"
	configv1alpha1 "github.com/podadmission/podadmission/pkg/apis/config/v1alpha1"
	podadmissionv1alpha1 "github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/exectransport"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/transport"
)

// These tests run the plugin binary as the kubelet does: through the Exec
// transport, one process per call.

var (
	buildOnce   sync.Once
	builtBinDir string
	buildErr    error
)

// binDir returns a trusted bin dir holding the plugin built as
// "pod-security", the name the examples give it.
func binDir(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		builtBinDir, buildErr = os.MkdirTemp("", "pod-security-plugin-")
		if buildErr != nil {
			return
		}
		if buildErr = os.Chmod(builtBinDir, 0o755); buildErr != nil {
			return
		}
		// Built as the release builds it: static, stripped.
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", filepath.Join(builtBinDir, "pod-security"), ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = &buildError{err: err, output: string(out)}
		}
	})
	require.NoError(t, buildErr)
	return builtBinDir
}

type buildError struct {
	err    error
	output string
}

func (e *buildError) Error() string { return "go build: " + e.err.Error() + "\n" + e.output }

func TestMain(m *testing.M) {
	code := m.Run()
	if builtBinDir != "" {
		os.RemoveAll(builtBinDir)
	}
	os.Exit(code)
}

func execPlugin(t *testing.T, args ...string) *exectransport.Plugin {
	t.Helper()
	cfg := &configv1alpha1.PluginConfig{Name: "pod-security", Type: configv1alpha1.ExecPluginType, Args: args}
	p, err := exectransport.New(cfg, binDir(t))
	require.NoError(t, err)
	return p
}

func admitRequest(pod *corev1.Pod) *podadmissionv1alpha1.PodAdmissionRequest {
	req := apptesting.KubeletRequest(pod, false)
	req.UID = "call-1"
	return req
}

func TestBinaryThroughTheExecTransport(t *testing.T) {
	p := execPlugin(t, "--level=baseline", "--exempt-namespaces=kube-system")

	resp, err := p.Admit(context.Background(), admitRequest(apptesting.HostNetworkPod("team-a")))
	require.NoError(t, err)
	assert.False(t, resp.Allowed)
	assert.Equal(t, "PodSecurity", resp.Reason)
	assert.Equal(t, `violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true)`, resp.Message)

	resp, err = p.Admit(context.Background(), admitRequest(apptesting.HostNetworkPod("kube-system")))
	require.NoError(t, err)
	assert.True(t, resp.Allowed)
}

// A bad flag fails the call; what the plugin says about it goes to the
// kubelet's log (stderr never reaches the pod's status).
func TestBinaryFlagErrorsReachTheKubeletLog(t *testing.T) {
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"bad level":    {[]string{"--level=superstrict"}, `"pod-security-plugin: --level \"superstrict\": must be baseline or restricted"`},
		"unknown flag": {[]string{"--levle=baseline"}, `"pod-security-plugin: unknown flag: --levle"`},
		"stray arg":    {[]string{"baseline"}, `"pod-security-plugin: unexpected argument \"baseline\"; flags are --exempt-namespaces, --exempt-runtime-classes, --exempt-static-pods, --level, --version"`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := execPlugin(t, tc.args...).Admit(context.Background(), admitRequest(apptesting.HostNetworkPod("team-a")))
			require.EqualError(t, err, `exited with code 1`)
			assert.Equal(t, tc.want, transport.Stderr(err))
		})
	}
}

// TestBinaryLatency measures what one Exec call of the plugin costs the
// kubelet (process start, decoding, evaluation, encoding) and bounds it
// loosely; the figures are in the test log (go test -v).
func TestBinaryLatency(t *testing.T) {
	p := execPlugin(t, "--level=restricted")
	req := admitRequest(apptesting.HostNetworkPod("team-a"))
	// The first call pays for the page cache.
	_, err := p.Admit(context.Background(), req)
	require.NoError(t, err)

	const calls = 50
	durations := make([]time.Duration, 0, calls)
	for range calls {
		start := time.Now()
		resp, err := p.Admit(context.Background(), req)
		durations = append(durations, time.Since(start))
		require.NoError(t, err)
		require.False(t, resp.Allowed)
	}
	slices.Sort(durations)
	p50, p90 := durations[calls/2], durations[calls*9/10]
	t.Logf("pod-security-plugin per Exec call over %d calls: p50 %s, p90 %s, max %s", calls, p50.Round(10*time.Microsecond), p90.Round(10*time.Microsecond), durations[calls-1].Round(10*time.Microsecond))
	// Far below the default plugin timeout of 5s even on a loaded
	// machine; a regression to seconds (say, network access) fails.
	assert.Less(t, p50, 500*time.Millisecond)
}
