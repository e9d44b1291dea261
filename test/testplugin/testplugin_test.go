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
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	configv1alpha1 "github.com/podadmission/podadmission/pkg/apis/config/v1alpha1"
	podadmissionv1alpha1 "github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/exectransport"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/grpctransport"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/transport"
	"github.com/podadmission/podadmission/test/testplugin/build"
)

// These tests run the built test plugin through the real transports, as
// the manager and the node e2e tests do.

func TestMain(m *testing.M) {
	code := m.Run()
	build.Cleanup()
	os.Exit(code)
}

func request(uid types.UID, podUID types.UID) *podadmissionv1alpha1.PodAdmissionRequest {
	return &podadmissionv1alpha1.PodAdmissionRequest{
		TypeMeta: podadmissionv1alpha1.RequestTypeMeta(),
		UID:      uid,
		Pod:      &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "pod-" + string(podUID), UID: podUID}},
		Attempt:  1,
	}
}

func tempDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "testplugin")
	require.NoError(t, err)
	require.NoError(t, os.Chmod(dir, 0o755))
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func execPlugin(t *testing.T, args ...string) *exectransport.Plugin {
	dir := tempDir(t)
	_, err := build.Install(dir, "testplugin")
	require.NoError(t, err)
	p, err := exectransport.New(&configv1alpha1.PluginConfig{Name: "testplugin", Type: configv1alpha1.ExecPluginType, Args: args}, dir)
	require.NoError(t, err)
	return p
}

func TestExecDecisionFileIsReadAtEveryCall(t *testing.T) {
	dir := tempDir(t)
	decision := filepath.Join(dir, "decision")
	log := filepath.Join(dir, "calls.log")
	p := execPlugin(t, "--mode=deny", "--decision-file="+decision, "--log-file="+log, "--retry-after=10s")

	require.NoError(t, os.WriteFile(decision, []byte("deny QuotaExceeded no GPUs left\n"), 0o644))
	resp, err := p.Admit(context.Background(), request("call-1", "a"))
	require.NoError(t, err)
	assert.Equal(t, "QuotaExceeded", resp.Reason)
	assert.Equal(t, "no GPUs left", resp.Message)
	assert.Equal(t, int32(10), *resp.RetryAfterSeconds)

	require.NoError(t, os.WriteFile(decision, []byte("allow"), 0o644))
	resp, err = p.Admit(context.Background(), request("call-2", "a"))
	require.NoError(t, err)
	assert.True(t, resp.Allowed)

	require.NoError(t, os.WriteFile(decision, []byte("maybe"), 0o644))
	_, err = p.Admit(context.Background(), request("call-3", "b"))
	require.EqualError(t, err, `exited with code 1`)
	assert.Equal(t, fmt.Sprintf(`"decision file %s: want \"allow\" or \"deny <Reason> <message>\", got \"maybe\""`, decision), transport.Stderr(err))

	calls, err := os.ReadFile(log)
	require.NoError(t, err)
	assert.Equal(t, "ns/pod-a uid=a attempt=1 static=false\nns/pod-a uid=a attempt=1 static=false\nns/pod-b uid=b attempt=1 static=false\n", string(calls))
}

// TestExecDenyImages: an image rule judges the pod whole, so an update
// that adds a container of a denied image is denied, and the log says it
// was an update.
func TestExecDenyImages(t *testing.T) {
	dir := tempDir(t)
	log := filepath.Join(dir, "calls.log")
	p := execPlugin(t, "--mode=allow", "--deny-images=registry.example/evil:1,registry.example/evil:2", "--log-file="+log)

	allowed := request("call-1", "a")
	allowed.Pod.Spec.Containers = []corev1.Container{{Name: "app", Image: "registry.example/app:1"}}
	resp, err := p.Admit(context.Background(), allowed)
	require.NoError(t, err)
	assert.True(t, resp.Allowed)

	update := request("call-2", "a")
	update.Pod.Spec = *allowed.Pod.Spec.DeepCopy()
	update.Pod.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debug", Image: "registry.example/evil:2"}}}
	update.Operation, update.OldPod = podadmissionv1alpha1.OperationUpdate, allowed.Pod
	resp, err = p.Admit(context.Background(), update)
	require.NoError(t, err)
	assert.False(t, resp.Allowed)
	assert.Equal(t, "ImageNotAllowed", resp.Reason)
	assert.Equal(t, `image "registry.example/evil:2" is not allowed on this node`, resp.Message)

	calls, err := os.ReadFile(log)
	require.NoError(t, err)
	assert.Equal(t, "ns/pod-a uid=a attempt=1 static=false\nns/pod-a uid=a attempt=1 static=false operation=Update\n", string(calls))
}

func TestBadFlags(t *testing.T) {
	bin, err := build.Binary()
	require.NoError(t, err)
	for _, tc := range []struct {
		args       []string
		wantStderr string
	}{
		{
			args:       []string{"--mode=bogus"},
			wantStderr: `testplugin: unknown --mode "bogus", want one of [allow deny sleep crash garbage huge wrong-api-version fork-sleep]` + "\n",
		},
		{
			args:       []string{"--serve=/tmp/x.sock", "--mode=huge"},
			wantStderr: "testplugin: --mode=huge is an Exec behaviour, it cannot be used with --serve\n",
		},
		{
			args:       []string{"--push=some"},
			wantStderr: `testplugin: unknown --push "some", want "pods" or "all"` + "\n",
		},
	} {
		out, err := exec.Command(bin, tc.args...).CombinedOutput()
		var exitErr *exec.ExitError
		require.ErrorAs(t, err, &exitErr, tc.args)
		assert.Equal(t, 2, exitErr.ExitCode(), tc.args)
		assert.Equal(t, tc.wantStderr, string(out), tc.args)
	}
}

func TestGRPCPushAll(t *testing.T) {
	dir := tempDir(t)
	socket := filepath.Join(dir, "p.sock")
	decision := filepath.Join(dir, "decision")
	log := filepath.Join(dir, "calls.log")
	require.NoError(t, os.WriteFile(decision, []byte("deny NotYet"), 0o644))
	bin, err := build.Binary()
	require.NoError(t, err)
	daemon := exec.Command(bin, "--serve=unix://"+socket, "--decision-file="+decision, "--push=all", "--log-file="+log)
	require.NoError(t, daemon.Start())
	t.Cleanup(func() {
		_ = daemon.Process.Signal(os.Interrupt)
		assert.NoError(t, daemon.Wait(), "the daemon stops cleanly on SIGINT")
	})

	p, err := grpctransport.New(&configv1alpha1.PluginConfig{Name: "testplugin", Type: configv1alpha1.GRPCPluginType, Endpoint: socket})
	require.NoError(t, err)
	p.Start(t.Context())
	t.Cleanup(func() { p.Close() })
	require.Equal(t, transport.Reevaluation{All: true}, next(t, p), "on connection")

	resp, err := p.Admit(context.Background(), request("call-1", "a"))
	require.NoError(t, err)
	assert.Equal(t, "NotYet", resp.Reason)
	assert.Empty(t, resp.Message)

	time.Sleep(200 * time.Millisecond) // let the WatchReevaluations stream open
	require.NoError(t, os.WriteFile(decision, []byte("allow"), 0o644))
	assert.Equal(t, transport.Reevaluation{All: true}, next(t, p), "on the decision change")

	calls, err := os.ReadFile(log)
	require.NoError(t, err)
	assert.Equal(t, "ns/pod-a uid=a attempt=1 static=false\n", string(calls))
}

func next(t *testing.T, p *grpctransport.Plugin) transport.Reevaluation {
	t.Helper()
	select {
	case r := <-p.Reevaluations():
		return r
	case <-time.After(10 * time.Second):
		require.FailNow(t, "no re-evaluation within 10s")
	}
	return transport.Reevaluation{}
}

func TestGRPCHoldThenAdmitByPush(t *testing.T) {
	dir := tempDir(t)
	socket := filepath.Join(dir, "p.sock")
	bin, err := build.Binary()
	require.NoError(t, err)
	daemon := exec.Command(bin, "--serve=unix://"+socket, "--hold=1s", "--retry-after=60s", "--reason=Held")
	require.NoError(t, daemon.Start())
	t.Cleanup(func() {
		_ = daemon.Process.Signal(os.Interrupt)
		assert.NoError(t, daemon.Wait(), "the daemon stops cleanly on SIGINT")
	})

	p, err := grpctransport.New(&configv1alpha1.PluginConfig{Name: "testplugin", Type: configv1alpha1.GRPCPluginType, Endpoint: socket})
	require.NoError(t, err)
	p.Start(t.Context())
	t.Cleanup(func() { p.Close() })
	require.Equal(t, transport.Reevaluation{All: true}, next(t, p), "on connection")
	time.Sleep(200 * time.Millisecond) // let the WatchReevaluations stream open

	first := time.Now()
	resp, err := p.Admit(context.Background(), request("call-1", "a"))
	require.NoError(t, err)
	assert.False(t, resp.Allowed, "the first call holds the pod")
	assert.Equal(t, "Held", resp.Reason)
	require.NotNil(t, resp.RetryAfterSeconds)
	assert.Equal(t, int32(60), *resp.RetryAfterSeconds)
	resp, err = p.Admit(context.Background(), request("call-2", "a"))
	require.NoError(t, err)
	assert.False(t, resp.Allowed, "a call within the hold holds the pod")

	assert.Equal(t, transport.Reevaluation{PodUIDs: []types.UID{"a"}}, next(t, p), "the push for the held pod")
	assert.GreaterOrEqual(t, time.Since(first), time.Second, "the push comes once the hold is over")
	resp, err = p.Admit(context.Background(), request("call-3", "a"))
	require.NoError(t, err)
	assert.True(t, resp.Allowed, "the pod is admitted after the hold")
	resp, err = p.Admit(context.Background(), request("call-4", "a"))
	require.NoError(t, err)
	assert.True(t, resp.Allowed, "a pod is held once: a later call admits it")
}

func TestHoldNeedsAnAllowingDaemon(t *testing.T) {
	bin, err := build.Binary()
	require.NoError(t, err)
	out, err := exec.Command(bin, "--hold=2s").CombinedOutput()
	require.Error(t, err)
	assert.Contains(t, string(out), "--hold needs --serve")
}

// TestExecBuildLinksNoGRPC: the Exec build (-tags testplugin_exec), which
// the node e2e suite installs as its Exec plugins, links no gRPC, so a call
// costs what an Exec plugin written with the SDK costs; the full build,
// the GRPC daemon, does.
func TestExecBuildLinksNoGRPC(t *testing.T) {
	deps := func(tags ...string) []string {
		args := append([]string{"list", "-deps"}, tags...)
		out, err := exec.Command("go", append(args, ".")...).CombinedOutput()
		require.NoError(t, err, "%s", out)
		return strings.Fields(string(out))
	}
	assert.Contains(t, deps(), "google.golang.org/grpc", "the full build serves GRPC")
	for _, dep := range deps("-tags", "testplugin_exec") {
		assert.NotContains(t, dep, "google.golang.org/grpc", "the Exec build links %s", dep)
	}
}
