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

package podadmission_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/podadmission/podadmission/pkg/kubelet/podadmission"
	"github.com/podadmission/podadmission/test/testplugin/build"
)

// These tests run the Manager with the real transports and the test plugin
// (test/testplugin) as Exec processes and as a GRPC daemon.

// TestMain fails the tests if any goroutine is left when they end: the
// Manager's, its plugins' and their connections' all end with Stop.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		build.Cleanup()
		os.Exit(code)
	}))
}

const header = "apiVersion: podadmission.kubelet.config.k8s.io/v1alpha1\nkind: PodAdmissionConfiguration\nplugins:\n"

// trustedDir returns a new root-owned directory with mode 0755.
func trustedDir(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.Mkdir(dir, 0o755))
	return dir
}

type processTest struct {
	manager *podadmission.Manager
	clock   *clocktesting.FakeClock
	binDir  string
	// wakes receives the pods the Manager asks the kubelet to sync.
	wakes chan types.UID
}

// newProcessTest installs the test plugin in a bin dir under each name in
// binaries and starts a Manager for config (plugins only).
func newProcessTest(t *testing.T, plugins string, binaries ...string) *processTest {
	t.Helper()
	pt := &processTest{
		clock:  clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)),
		binDir: trustedDir(t, "bin"),
		wakes:  make(chan types.UID, 100),
	}
	for _, name := range binaries {
		pt.install(t, name)
	}
	configDir := trustedDir(t, "config")
	require.NoError(t, os.WriteFile(filepath.Join(configDir, "10-test.yaml"), []byte(header+plugins), 0o644))
	m, err := podadmission.NewManager(podadmission.Options{
		ConfigPath: configDir,
		BinDir:     pt.binDir,
		NodeName:   "node-1",
		Clock:      pt.clock,
		WakePod:    func(uid types.UID, _ bool) { pt.wakes <- uid },
	})
	require.NoError(t, err)
	m.Start(t.Context())
	t.Cleanup(m.Stop)
	pt.manager = m
	return pt
}

func (pt *processTest) install(t *testing.T, name string) {
	t.Helper()
	_, err := build.Install(pt.binDir, name)
	require.NoError(t, err)
}

// woken says whether the Manager asked the kubelet to sync pod since the
// last call, draining the wakes.
func (pt *processTest) woken(pod *v1.Pod) bool {
	woken := false
	for {
		select {
		case uid := <-pt.wakes:
			woken = woken || uid == pod.UID
		default:
			return woken
		}
	}
}

func (pt *processTest) admit(pod *v1.Pod) (lifecycle.PodAdmitResult, bool) {
	return pt.manager.SoftAdmit(context.Background(), &lifecycle.PodAdmitAttributes{Pod: pod})
}

func testPod(name string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name + "-uid")}}
}

func TestExecChain(t *testing.T) {
	pt := newProcessTest(t, `
- name: allow
  type: Exec
  args: [--mode=allow]
- name: deny
  type: Exec
  args: [--mode=deny, --reason=ImageNotSigned, --message=registry.example/app:1 is not signed]
- name: never
  type: Exec
  args: [--mode=crash]
`, "allow", "deny", "never")

	result, terminal := pt.admit(testPod("web"))
	assert.False(t, terminal)
	assert.Equal(t, lifecycle.PodAdmitResult{
		Reason:  "ImageNotSigned",
		Message: `Pod admission plugin "deny" rejected the pod: registry.example/app:1 is not signed`,
	}, result)
}

func TestExecFailuresRejectWithFailurePolicyFail(t *testing.T) {
	for mode, wantMessage := range map[string]string{
		"crash":             `Pod admission plugin "plugin" failed (failurePolicy Fail): exited with code 3`,
		"garbage":           `Pod admission plugin "plugin" failed (failurePolicy Fail): invalid response: not JSON: invalid character 'h' in literal true (expecting 'r')`,
		"huge":              `Pod admission plugin "plugin" failed (failurePolicy Fail): response larger than 1 MiB; its processes were killed`,
		"wrong-api-version": `Pod admission plugin "plugin" failed (failurePolicy Fail): invalid response: apiVersion "podadmission.kubelet.k8s.io/v1" does not match the request's "podadmission.kubelet.k8s.io/v1alpha1"`,
		// The chain's timeout ends the call, whether the transport
		// returns first (it killed the process) or the chain's deadline.
		"sleep": `Pod admission plugin "plugin" failed (failurePolicy Fail): no answer within the timeout of 1s`,
	} {
		t.Run(mode, func(t *testing.T) {
			pt := newProcessTest(t, "- name: plugin\n  type: Exec\n  timeout: 1s\n  args: [--mode="+mode+"]\n", "plugin")
			start := time.Now()
			result, terminal := pt.admit(testPod("web"))
			assert.Less(t, time.Since(start), 5*time.Second)
			assert.False(t, terminal)
			assert.False(t, result.Admit)
			assert.Equal(t, "PodAdmissionPluginFailed", result.Reason)
			assert.Equal(t, wantMessage, result.Message)
		})
	}
}

func TestExecFailureIgnored(t *testing.T) {
	pt := newProcessTest(t, "- name: plugin\n  type: Exec\n  failurePolicy: Ignore\n  args: [--mode=crash]\n", "plugin")
	result, terminal := pt.admit(testPod("web"))
	assert.True(t, result.Admit)
	assert.False(t, terminal)
}

func TestMissingExecBinaryBlocksUntilInstalled(t *testing.T) {
	pt := newProcessTest(t, "- name: late\n  type: Exec\n  args: [--mode=allow]\n")
	pod := testPod("web")
	result, terminal := pt.admit(pod)
	assert.False(t, terminal)
	assert.Equal(t, "PodAdmissionPluginFailed", result.Reason)
	assert.Equal(t, `Pod admission plugin "late" failed (failurePolicy Fail): executable `+filepath.Join(pt.binDir, "late")+` does not exist`, result.Message)

	pt.install(t, "late")
	pt.clock.Step(time.Second)
	require.Eventually(t, func() bool { return pt.woken(pod) }, 10*time.Second, time.Millisecond, "woken when its back-off expires")
	result, _ = pt.admit(pod)
	assert.True(t, result.Admit)
}

func TestUntrustedExecBinaryBlocks(t *testing.T) {
	pt := newProcessTest(t, "- name: plugin\n  type: Exec\n  args: [--mode=allow]\n", "plugin")
	require.NoError(t, os.Chmod(filepath.Join(pt.binDir, "plugin"), 0o777))
	result, _ := pt.admit(testPod("web"))
	assert.False(t, result.Admit)
	assert.Equal(t, `Pod admission plugin "plugin" failed (failurePolicy Fail): untrusted executable: `+filepath.Join(pt.binDir, "plugin")+": mode 0777 is group or world writable", result.Message)
}

// startGRPCPlugin runs the test plugin as a GRPC daemon on a new socket and
// returns the socket path.
func startGRPCPlugin(t *testing.T, args ...string) string {
	t.Helper()
	socket := filepath.Join(trustedDir(t, "run"), "plugin.sock")
	build.ServeGRPC(t, socket, args...)
	return socket
}

func TestGRPCPushedReevaluationAdmitsWithoutWaitingForTheBackoff(t *testing.T) {
	decision := filepath.Join(t.TempDir(), "decision")
	require.NoError(t, os.WriteFile(decision, []byte("deny NetworkPolicyPending waiting for NetworkPolicy default/deny-all\n"), 0o644))
	socket := startGRPCPlugin(t, "--decision-file="+decision, "--push=pods")
	pt := newProcessTest(t, "- name: netpol-gate\n  type: GRPC\n  endpoint: unix://"+socket+"\n")
	pod := testPod("web")

	result, terminal := pt.admit(pod)
	require.False(t, terminal)
	assert.Equal(t, lifecycle.PodAdmitResult{
		Reason:  "NetworkPolicyPending",
		Message: `Pod admission plugin "netpol-gate" rejected the pod: waiting for NetworkPolicy default/deny-all`,
	}, result)
	// The plugin asks for every pod again when its watch stream connects,
	// which may be before or after the first evaluation; let that settle.
	time.Sleep(500 * time.Millisecond)
	if pt.woken(pod) {
		result, _ = pt.admit(pod)
		require.False(t, result.Admit)
	}
	require.Never(t, func() bool { return pt.woken(pod) }, 200*time.Millisecond, 5*time.Millisecond)

	// The fake clock never moves: only the plugin's push can wake the pod.
	require.NoError(t, os.WriteFile(decision, []byte("allow\n"), 0o644))
	pushed := time.Now()
	require.Eventually(t, func() bool { return pt.woken(pod) }, 10*time.Second, time.Millisecond)
	t.Logf("push to wake: %s", time.Since(pushed))
	result, _ = pt.admit(pod)
	assert.True(t, result.Admit)
}

func TestGRPCSocketGoneRejects(t *testing.T) {
	socket := filepath.Join(trustedDir(t, "run"), "gone.sock")
	pt := newProcessTest(t, "- name: gone\n  type: GRPC\n  timeout: 1s\n  endpoint: "+socket+"\n")
	result, terminal := pt.admit(testPod("web"))
	assert.False(t, terminal)
	assert.Equal(t, "PodAdmissionPluginFailed", result.Reason)
	assert.Equal(t, `Pod admission plugin "gone" failed (failurePolicy Fail): cannot reach the plugin: socket `+socket+" does not exist; is the plugin running?", result.Message)
}

// TestNothingRunsBeforeStartOrAfterStop: a Manager with an Exec and a GRPC
// plugin runs no goroutine and makes no connection until Start, and leaves
// none after Stop, also with a call in flight when Stop is called.
func TestNothingRunsBeforeStartOrAfterStop(t *testing.T) {
	socket := startGRPCPlugin(t, "--mode=allow")
	before := goleak.IgnoreCurrent()
	binDir := trustedDir(t, "bin")
	_, err := build.Install(binDir, "slow")
	require.NoError(t, err)
	configDir := trustedDir(t, "config")
	require.NoError(t, os.WriteFile(filepath.Join(configDir, "10-test.yaml"), []byte(header+`
- name: gate
  type: GRPC
  endpoint: unix://`+socket+`
- name: slow
  type: Exec
  timeout: 30s
  args: [--mode=sleep]
  match:
    podSelector: {matchLabels: {slow: "yes"}}
`), 0o644))
	m, err := podadmission.NewManager(podadmission.Options{ConfigPath: configDir, BinDir: binDir, NodeName: "node-1", WakePod: func(types.UID, bool) {}})
	require.NoError(t, err)
	goleak.VerifyNone(t, before)

	m.Start(context.Background())
	result, _ := m.SoftAdmit(context.Background(), &lifecycle.PodAdmitAttributes{Pod: testPod("web")})
	assert.True(t, result.Admit, "the GRPC plugin answers once started: %+v", result)

	// Stop waits for the call in flight, which its caller ends.
	slow := testPod("slow")
	slow.Labels = map[string]string{"slow": "yes"}
	ctx, cancel := context.WithCancel(context.Background())
	evaluated := make(chan lifecycle.PodAdmitResult, 1)
	go func() {
		result, _ := m.SoftAdmit(ctx, &lifecycle.PodAdmitAttributes{Pod: slow})
		evaluated <- result
	}()
	time.Sleep(200 * time.Millisecond)
	time.AfterFunc(300*time.Millisecond, cancel)
	m.Stop()
	assert.Equal(t, podadmission.ReasonInterrupted, (<-evaluated).Reason)
	goleak.VerifyNone(t, before)

	result, _ = m.SoftAdmit(context.Background(), &lifecycle.PodAdmitAttributes{Pod: testPod("after")})
	assert.Equal(t, podadmission.ReasonUnavailable, result.Reason, "a stopped Manager holds pods")
	m.Stop()
}
