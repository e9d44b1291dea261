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

package grpctransport_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	configv1alpha1 "github.com/podadmission/podadmission/pkg/apis/config/v1alpha1"
	pb "github.com/podadmission/podadmission/pkg/apis/podadmission/grpc/v1alpha1"
	podadmissionv1alpha1 "github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/grpctransport"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/transport"
	"github.com/podadmission/podadmission/pkg/plugin"
	"github.com/podadmission/podadmission/test/testplugin/build"
)

var (
	_ transport.Plugin      = (*grpctransport.Plugin)(nil)
	_ transport.Reevaluator = (*grpctransport.Plugin)(nil)
)

func request(uid types.UID) *podadmissionv1alpha1.PodAdmissionRequest {
	return &podadmissionv1alpha1.PodAdmissionRequest{
		TypeMeta: podadmissionv1alpha1.RequestTypeMeta(),
		UID:      uid,
		Pod: &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "web", UID: "pod-uid-1"},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
		},
		Node: podadmissionv1alpha1.NodeInfo{
			Name:     "node-a",
			Labels:   map[string]string{"zone": "a"},
			NodeInfo: corev1.NodeSystemInfo{KernelVersion: "6.1.0"},
		},
		Operation: podadmissionv1alpha1.OperationCreate,
		Static:    true,
		Attempt:   2,
	}
}

// newPlugin returns a started plugin for endpoint, closed when the test
// ends.
func newPlugin(t *testing.T, endpoint string) *grpctransport.Plugin {
	t.Helper()
	p, err := grpctransport.New(&configv1alpha1.PluginConfig{
		Name:     "p",
		Type:     configv1alpha1.GRPCPluginType,
		Endpoint: endpoint,
	})
	require.NoError(t, err)
	p.Start(t.Context())
	t.Cleanup(func() { assert.NoError(t, p.Close()) })
	return p
}

// nextReevaluation waits for the plugin's next re-evaluation.
func nextReevaluation(t *testing.T, p *grpctransport.Plugin) transport.Reevaluation {
	t.Helper()
	select {
	case r, ok := <-p.Reevaluations():
		require.True(t, ok, "Reevaluations closed")
		return r
	case <-time.After(10 * time.Second):
		require.FailNow(t, "no re-evaluation within 10s")
	}
	return transport.Reevaluation{}
}

func assertNoReevaluation(t *testing.T, p *grpctransport.Plugin, within time.Duration) {
	t.Helper()
	select {
	case r := <-p.Reevaluations():
		assert.Failf(t, "unexpected re-evaluation", "%+v", r)
	case <-time.After(within):
	}
}

func TestAdmitSendsTheRequestAndReturnsTheAnswer(t *testing.T) {
	socket := socketPath(t)
	var seen *plugin.Request
	startSDKServer(t, socket, func(_ context.Context, req *plugin.Request) (*plugin.Response, error) {
		seen = req
		return plugin.DenyRetryAfter("ImageNotSigned", "image nginx is not signed", 30*time.Second), nil
	})
	p := newPlugin(t, "unix://"+socket)

	resp, err := p.Admit(context.Background(), request("call-1"))
	require.NoError(t, err)
	assert.Equal(t, &podadmissionv1alpha1.PodAdmissionResponse{
		TypeMeta:          metav1.TypeMeta{APIVersion: "podadmission.kubelet.k8s.io/v1alpha1", Kind: "PodAdmissionResponse"},
		UID:               "call-1",
		Reason:            "ImageNotSigned",
		Message:           "image nginx is not signed",
		RetryAfterSeconds: ptr.To[int32](30),
	}, resp)

	assertSeen(t, request("call-1"), seen)
}

// assertSeen says that got, what an SDK plugin got, is every field of want,
// what the kubelet sent.
func assertSeen(t *testing.T, want *podadmissionv1alpha1.PodAdmissionRequest, got *plugin.Request) {
	t.Helper()
	require.NotNil(t, got)
	assert.Equal(t, string(want.UID), string(got.UID))
	assert.Equal(t, want.Operation, got.Operation)
	assert.Equal(t, want.Static, got.Static)
	assert.Equal(t, want.Attempt, got.Attempt)
	assert.Equal(t, want.Node.Name, got.Node.Name)
	assert.Equal(t, want.Node.Labels, got.Node.Labels)
	for what, pair := range map[string][2]any{
		"pod":       {want.Pod, got.Pod},
		"old pod":   {want.OldPod, got.OldPod},
		"node info": {want.Node.NodeInfo, got.Node.NodeInfo},
	} {
		sent, err := json.Marshal(pair[0])
		require.NoError(t, err)
		seen, err := json.Marshal(pair[1])
		require.NoError(t, err)
		assert.Equal(t, string(sent), string(seen), what)
	}
	sentPod, err := json.Marshal(want.Pod)
	require.NoError(t, err)
	assert.Equal(t, string(sentPod), string(got.PodJSON))
}

func TestPluginStartingLaterIsFoundAndItsBlockedPodsRetried(t *testing.T) {
	socket := socketPath(t)
	p := newPlugin(t, socket)

	start := time.Now()
	_, err := p.Admit(context.Background(), request("call-1"))
	require.EqualError(t, err, fmt.Sprintf(`cannot reach the plugin: socket %s does not exist; is the plugin running?`, socket))
	assert.Less(t, time.Since(start), time.Second, "a call to an absent plugin fails fast")
	assertNoReevaluation(t, p, 200*time.Millisecond)

	startSDKServer(t, socket, func(context.Context, *plugin.Request) (*plugin.Response, error) { return plugin.Allow(), nil })
	assert.Equal(t, transport.Reevaluation{All: true}, nextReevaluation(t, p), "connecting asks for every blocked pod to be evaluated again")
	resp, err := p.Admit(context.Background(), request("call-2"))
	require.NoError(t, err)
	assert.True(t, resp.Allowed)
}

func TestReconnectsAfterThePluginRestarts(t *testing.T) {
	socket := socketPath(t)
	allow := func(context.Context, *plugin.Request) (*plugin.Response, error) { return plugin.Allow(), nil }
	server := startSDKServer(t, socket, allow)
	p := newPlugin(t, socket)
	assert.Equal(t, transport.Reevaluation{All: true}, nextReevaluation(t, p))

	server.shutdown()
	require.Eventually(t, func() bool {
		_, err := p.Admit(context.Background(), request("call-1"))
		return err != nil && err.Error() == fmt.Sprintf(`cannot reach the plugin: socket %s does not exist; is the plugin running?`, socket)
	}, 5*time.Second, 20*time.Millisecond)

	startSDKServer(t, socket, allow)
	assert.Equal(t, transport.Reevaluation{All: true}, nextReevaluation(t, p), "every reconnection asks for every blocked pod")
	_, err := p.Admit(context.Background(), request("call-2"))
	require.NoError(t, err)
}

func TestPushedReevaluationsAreForwarded(t *testing.T) {
	socket := socketPath(t)
	server := startSDKServer(t, socket, func(context.Context, *plugin.Request) (*plugin.Response, error) { return plugin.Allow(), nil })
	p := newPlugin(t, socket)
	require.Equal(t, transport.Reevaluation{All: true}, nextReevaluation(t, p))

	// The stream may open a moment after the connection is ready.
	require.Eventually(t, func() bool {
		server.Reevaluate("pod-b", "pod-a")
		select {
		case r := <-p.Reevaluations():
			if r.All {
				return false
			}
			assert.Equal(t, transport.Reevaluation{PodUIDs: []types.UID{"pod-a", "pod-b"}}, r)
			return true
		case <-time.After(100 * time.Millisecond):
			return false
		}
	}, 5*time.Second, time.Millisecond)

	server.ReevaluateAll()
	assert.Equal(t, transport.Reevaluation{All: true}, nextReevaluation(t, p))
	server.Reevaluate()
	assertNoReevaluation(t, p, 200*time.Millisecond)
}

func TestCallFailures(t *testing.T) {
	for name, tc := range map[string]struct {
		server  pb.PodAdmissionPluginServer
		wantErr string
	}{
		"uid not echoed": {
			server:  &answering{resp: &pb.AdmitResponse{Uid: "other", Allowed: true}},
			wantErr: `invalid response: uid: Invalid value: "other": must echo the request's uid "call-1"`,
		},
		"rejection without reason": {
			server:  &answering{resp: &pb.AdmitResponse{Uid: "call-1"}},
			wantErr: `invalid response: reason: Required value: required when allowed is false`,
		},
		"negative retry": {
			server:  &answering{resp: &pb.AdmitResponse{Uid: "call-1", Reason: "No", RetryAfterSeconds: ptr.To[int32](-3)}},
			wantErr: `invalid response: retryAfterSeconds: Invalid value: -3: must not be negative`,
		},
		"response over 1 MiB": {
			server:  &answering{resp: &pb.AdmitResponse{Uid: "call-1", Reason: "No", Message: strings.Repeat("m", 1<<20)}},
			wantErr: `response larger than 1 MiB`,
		},
		"not a pod admission plugin": {
			server:  &unimplemented{},
			wantErr: `%s does not serve the PodAdmissionPlugin service: method Admit not implemented`,
		},
	} {
		t.Run(name, func(t *testing.T) {
			socket := socketPath(t)
			startRawServer(t, socket, tc.server)
			p := newPlugin(t, socket)
			resp, err := p.Admit(context.Background(), request("call-1"))
			wantErr := tc.wantErr
			if strings.Contains(wantErr, "%s") {
				wantErr = fmt.Sprintf(wantErr, socket)
			}
			require.EqualError(t, err, wantErr)
			assert.Nil(t, resp)
		})
	}
}

func TestHandlerErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		err     error
		wantErr string
	}{
		"plain error": {
			err:     errors.New("policy server unreachable"),
			wantErr: `call failed (Unknown): policy server unreachable`,
		},
		"status error": {
			err:     status.Error(codes.FailedPrecondition, "policy not loaded yet"),
			wantErr: `call failed (FailedPrecondition): policy not loaded yet`,
		},
	} {
		t.Run(name, func(t *testing.T) {
			socket := socketPath(t)
			startSDKServer(t, socket, func(context.Context, *plugin.Request) (*plugin.Response, error) { return nil, tc.err })
			p := newPlugin(t, socket)
			_, err := p.Admit(context.Background(), request("call-1"))
			require.EqualError(t, err, tc.wantErr)
		})
	}
}

func TestDeadlineAndCancel(t *testing.T) {
	socket := socketPath(t)
	startSDKServer(t, socket, func(ctx context.Context, _ *plugin.Request) (*plugin.Response, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	p := newPlugin(t, socket)

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := p.Admit(ctx, request("call-1"))
	assert.Less(t, time.Since(start), 2*time.Second)
	// The deadline travels to the plugin, whose server may give up first.
	assert.ErrorIs(t, err, context.DeadlineExceeded, "the chain tells a call its deadline ended by its error")

	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	_, err = p.Admit(ctx, request("call-2"))
	require.EqualError(t, err, `call stopped: context canceled`)
	assert.ErrorIs(t, err, context.Canceled)
}

func TestThePluginsOwnDeadlineReport(t *testing.T) {
	socket := socketPath(t)
	startRawServer(t, socket, &failing{err: status.Error(codes.DeadlineExceeded, "policy server too slow")})
	p := newPlugin(t, socket)
	_, err := p.Admit(context.Background(), request("call-1"))
	require.EqualError(t, err, `the plugin ran out of time (policy server too slow): context deadline exceeded`)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
}

func TestNotASocket(t *testing.T) {
	socket := socketPath(t)
	require.NoError(t, os.WriteFile(socket, nil, 0o600))
	p := newPlugin(t, socket)
	_, err := p.Admit(context.Background(), request("call-1"))
	require.EqualError(t, err, fmt.Sprintf(`cannot reach the plugin: %s is not a unix socket`, socket))
}

func TestNewRejects(t *testing.T) {
	for name, tc := range map[string]struct {
		cfg     configv1alpha1.PluginConfig
		wantErr string
	}{
		"Exec plugin": {
			cfg:     configv1alpha1.PluginConfig{Name: "p", Type: configv1alpha1.ExecPluginType},
			wantErr: `type is "Exec", not "GRPC"`,
		},
		"TCP endpoint": {
			cfg:     configv1alpha1.PluginConfig{Name: "p", Type: configv1alpha1.GRPCPluginType, Endpoint: "dns:///plugin.example:443"},
			wantErr: `endpoint "dns:///plugin.example:443": must be a unix socket: an absolute path or a unix:// URL`,
		},
		"relative path": {
			cfg:     configv1alpha1.PluginConfig{Name: "p", Type: configv1alpha1.GRPCPluginType, Endpoint: "unix://plugin.sock"},
			wantErr: `endpoint "unix://plugin.sock": must be a unix socket: an absolute path or a unix:// URL`,
		},
		"no endpoint": {
			cfg:     configv1alpha1.PluginConfig{Name: "p", Type: configv1alpha1.GRPCPluginType},
			wantErr: `endpoint "": must be a unix socket: an absolute path or a unix:// URL`,
		},
	} {
		t.Run(name, func(t *testing.T) {
			p, err := grpctransport.New(&tc.cfg)
			require.EqualError(t, err, tc.wantErr)
			assert.Nil(t, p)
		})
	}
}

func TestConcurrentCalls(t *testing.T) {
	socket := socketPath(t)
	startSDKServer(t, socket, func(_ context.Context, req *plugin.Request) (*plugin.Response, error) {
		return plugin.Deny("No", string(req.UID)), nil
	})
	p := newPlugin(t, socket)
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Go(func() {
			uid := types.UID(fmt.Sprintf("call-%d", i))
			resp, err := p.Admit(context.Background(), request(uid))
			if assert.NoError(t, err) {
				assert.Equal(t, uid, resp.UID)
				assert.Equal(t, string(uid), resp.Message)
			}
		})
	}
	wg.Wait()
}

func TestNothingRunsBeforeStartOrAfterClose(t *testing.T) {
	// Registered first, so it runs after the server's cleanup.
	ignoreEarlier := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignoreEarlier) })

	socket := socketPath(t)
	startSDKServer(t, socket, func(context.Context, *plugin.Request) (*plugin.Response, error) { return plugin.Allow(), nil })
	// The server's accept loop may start after its socket accepts
	// connections: it is the server's, not the transport's.
	serving := []goleak.Option{goleak.IgnoreCurrent(), goleak.IgnoreAnyFunction("google.golang.org/grpc.(*Server).Serve")}
	connected, err := grpctransport.New(&configv1alpha1.PluginConfig{Name: "p", Type: configv1alpha1.GRPCPluginType, Endpoint: socket})
	require.NoError(t, err)
	goleak.VerifyNone(t, serving...)
	_, err = connected.Admit(context.Background(), request("call-0"))
	require.EqualError(t, err, "not started")

	connected.Start(t.Context())
	connected.Start(t.Context())
	require.Equal(t, transport.Reevaluation{All: true}, nextReevaluation(t, connected))
	_, err = connected.Admit(context.Background(), request("call-1"))
	require.NoError(t, err)

	disconnected, err := grpctransport.New(&configv1alpha1.PluginConfig{Name: "q", Type: configv1alpha1.GRPCPluginType, Endpoint: socketPath(t)})
	require.NoError(t, err)
	disconnected.Start(t.Context())
	neverStarted, err := grpctransport.New(&configv1alpha1.PluginConfig{Name: "r", Type: configv1alpha1.GRPCPluginType, Endpoint: socketPath(t)})
	require.NoError(t, err)

	for _, p := range []*grpctransport.Plugin{connected, disconnected, neverStarted} {
		require.NoError(t, p.Close())
		require.NoError(t, p.Close(), "Close twice")
		_, open := <-p.Reevaluations()
		assert.False(t, open, "Reevaluations is closed")
		_, err := p.Admit(context.Background(), request("call-2"))
		require.EqualError(t, err, `closed`)
		p.Start(t.Context())
	}
	goleak.VerifyNone(t, serving...)
}

// TestTestPluginDaemon runs test/testplugin --serve as a process: flipping
// its decision file pushes a re-evaluation of the pods it denied, and
// killing it mid-call fails the call and is recovered from.
func TestTestPluginDaemon(t *testing.T) {
	socket := socketPath(t)
	decision := socket + ".decision"
	require.NoError(t, os.WriteFile(decision, []byte("deny NotYet wait for it\n"), 0o644))
	bin, err := build.Binary()
	require.NoError(t, err)
	daemon := exec.Command(bin, "--serve=unix://"+socket, "--decision-file="+decision)
	require.NoError(t, daemon.Start())
	t.Cleanup(func() {
		_ = daemon.Process.Kill()
		_ = daemon.Wait()
	})

	p := newPlugin(t, socket)
	require.Equal(t, transport.Reevaluation{All: true}, nextReevaluation(t, p))
	resp, err := p.Admit(context.Background(), request("call-1"))
	require.NoError(t, err)
	assert.Equal(t, "NotYet", resp.Reason)
	assert.Equal(t, "wait for it", resp.Message)

	// The plugin denied pod-uid-1; allowing now pushes exactly that pod.
	time.Sleep(200 * time.Millisecond) // let the WatchReevaluations stream open
	require.NoError(t, os.WriteFile(decision, []byte("allow\n"), 0o644))
	assert.Equal(t, transport.Reevaluation{PodUIDs: []types.UID{"pod-uid-1"}}, nextReevaluation(t, p))
	resp, err = p.Admit(context.Background(), request("call-2"))
	require.NoError(t, err)
	assert.True(t, resp.Allowed)
}

func TestTestPluginDaemonCrashMidCall(t *testing.T) {
	socket := socketPath(t)
	bin, err := build.Binary()
	require.NoError(t, err)
	daemon := exec.Command(bin, "--serve="+socket, "--mode=crash")
	require.NoError(t, daemon.Start())
	t.Cleanup(func() {
		_ = daemon.Process.Kill()
		_ = daemon.Wait()
	})
	p := newPlugin(t, socket)
	require.Equal(t, transport.Reevaluation{All: true}, nextReevaluation(t, p))

	_, err = p.Admit(context.Background(), request("call-1"))
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), fmt.Sprintf(`cannot reach unix://%s: `, socket)), "error: %v", err)
	var exitErr *exec.ExitError
	require.ErrorAs(t, daemon.Wait(), &exitErr)
	assert.Equal(t, 3, exitErr.ExitCode())
}

// Start's background work logs through the logger of the context it is
// given, with the plugin's endpoint.
func TestStartLogsThroughItsContextsLogger(t *testing.T) {
	socket := socketPath(t)
	startSDKServer(t, socket, func(context.Context, *plugin.Request) (*plugin.Response, error) { return plugin.Allow(), nil })
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true)))
	p, err := grpctransport.New(&configv1alpha1.PluginConfig{Name: "p", Type: configv1alpha1.GRPCPluginType, Endpoint: socket})
	require.NoError(t, err)
	defer p.Close()

	p.Start(klog.NewContext(t.Context(), logger))
	require.Equal(t, transport.Reevaluation{All: true}, nextReevaluation(t, p))
	logs := logger.GetSink().(ktesting.Underlier).GetBuffer().String()
	assert.Contains(t, logs, "Connected to pod admission plugin")
	assert.Contains(t, logs, `endpoint="unix://`+socket+`"`)
}
