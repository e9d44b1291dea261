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

package grpcplugin

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	pb "github.com/podadmission/podadmission/pkg/apis/podadmission/grpc/v1alpha1"
	"github.com/podadmission/podadmission/pkg/plugin"
	"github.com/podadmission/podadmission/pkg/plugin/corev1"
)

func socketPath(t *testing.T) string {
	dir, err := os.MkdirTemp("", "podadm")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, "plugin.sock")
}

// serve runs s on a fresh socket until the test ends and returns a client.
func serve(t *testing.T, s *Server) (pb.PodAdmissionPluginClient, string) {
	t.Helper()
	socket := socketPath(t)
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, "unix://"+socket) }()
	t.Cleanup(func() {
		stop()
		assert.NoError(t, <-served)
		_, err := os.Stat(socket)
		assert.True(t, os.IsNotExist(err), "Serve removes its socket")
	})
	require.Eventually(t, func() bool {
		conn, err := net.Dial("unix", socket)
		if err == nil {
			conn.Close()
		}
		return err == nil
	}, 10*time.Second, 10*time.Millisecond)
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	return pb.NewPodAdmissionPluginClient(conn), socket
}

func admitRequest() *pb.AdmitRequest {
	return &pb.AdmitRequest{Uid: "call-1", Pod: []byte(`{"metadata":{"name":"web","uid":"pod-1"}}`), Node: &pb.NodeInfo{Name: "node-a"}, Attempt: 1}
}

func TestServerAdmit(t *testing.T) {
	client, socket := serve(t, NewServer(func(_ context.Context, req *plugin.Request) (*plugin.Response, error) {
		return plugin.Deny("No", "pod "+req.Pod.Name), nil
	}))
	resp, err := client.Admit(context.Background(), admitRequest())
	require.NoError(t, err)
	assert.Equal(t, "call-1", resp.GetUid())
	assert.Equal(t, "No", resp.GetReason())
	assert.Equal(t, "pod web", resp.GetMessage())

	info, err := os.Stat(socket)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "only the socket's owner (root, like the kubelet) may call the plugin")
}

func TestServerAdmitFailures(t *testing.T) {
	for name, tc := range map[string]struct {
		h        plugin.Handler
		req      *pb.AdmitRequest
		wantCode codes.Code
		wantMsg  string
	}{
		"invalid request": {
			h:        func(context.Context, *plugin.Request) (*plugin.Response, error) { return plugin.Allow(), nil },
			req:      &pb.AdmitRequest{Uid: "call-1", Attempt: 1, Pod: []byte(`{"spec":{"unknown":1}}`)},
			wantCode: codes.InvalidArgument,
			wantMsg:  `invalid request: pod: unknown field "spec.unknown"`,
		},
		"invalid response": {
			h: func(context.Context, *plugin.Request) (*plugin.Response, error) {
				return plugin.Deny("no reason given", ""), nil
			},
			req:      admitRequest(),
			wantCode: codes.Internal,
			wantMsg:  `invalid response: reason: Invalid value: "no reason given": must be CamelCase: an upper-case letter followed by letters and digits, like "ImageNotSigned"`,
		},
		"handler error": {
			h: func(context.Context, *plugin.Request) (*plugin.Response, error) {
				return nil, fmt.Errorf("policy server unreachable")
			},
			req:      admitRequest(),
			wantCode: codes.Unknown,
			wantMsg:  "policy server unreachable",
		},
		"no response": {
			h:        func(context.Context, *plugin.Request) (*plugin.Response, error) { return nil, nil },
			req:      admitRequest(),
			wantCode: codes.Unknown,
			wantMsg:  "handler returned neither a response nor an error",
		},
	} {
		t.Run(name, func(t *testing.T) {
			client, _ := serve(t, NewServer(tc.h))
			_, err := client.Admit(context.Background(), tc.req)
			st := status.Convert(err)
			assert.Equal(t, tc.wantCode, st.Code())
			assert.Equal(t, tc.wantMsg, st.Message())
		})
	}
}

func TestServerHandlerOutlivedByTheDeadline(t *testing.T) {
	client, _ := serve(t, NewServer(func(ctx context.Context, _ *plugin.Request) (*plugin.Response, error) {
		<-ctx.Done()
		return nil, fmt.Errorf("gave up: %w", ctx.Err())
	}))
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := client.Admit(ctx, admitRequest())
	assert.Equal(t, codes.DeadlineExceeded, status.Code(err))
}

// watch opens a WatchReevaluations stream and waits until the server has
// registered it.
func watch(t *testing.T, s *Server, client pb.PodAdmissionPluginClient) grpc.ServerStreamingClient[pb.Reevaluation] {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	stream, err := client.WatchReevaluations(ctx, &pb.WatchReevaluationsRequest{})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(s.watchers) > 0
	}, 5*time.Second, time.Millisecond)
	return stream
}

func TestServerPushesReevaluations(t *testing.T) {
	s := NewServer(func(context.Context, *plugin.Request) (*plugin.Response, error) { return plugin.Allow(), nil })
	client, _ := serve(t, s)
	stream := watch(t, s, client)

	s.Reevaluate("pod-b", "pod-a", "pod-b")
	msg, err := stream.Recv()
	require.NoError(t, err)
	assert.Equal(t, []string{"pod-a", "pod-b"}, msg.GetPodUids())
	assert.False(t, msg.GetAll())

	s.ReevaluateAll()
	msg, err = stream.Recv()
	require.NoError(t, err)
	assert.True(t, msg.GetAll())
	assert.Empty(t, msg.GetPodUids())
}

func TestServerTurnsManyPodsIntoAll(t *testing.T) {
	s := NewServer(func(context.Context, *plugin.Request) (*plugin.Response, error) { return plugin.Allow(), nil })
	w := newWatcher()
	s.watch(w)
	uids := make([]corev1.UID, maxUIDsPerReevaluation+1)
	for i := range uids {
		uids[i] = corev1.UID(fmt.Sprintf("pod-%d", i))
	}
	s.Reevaluate(uids...)
	msg := w.take()
	assert.True(t, msg.GetAll(), "a message stays far below the kubelet's 1 MiB limit")
	assert.Empty(t, msg.GetPodUids())
}

func TestServerPushWithoutWatcherReachesTheNextOne(t *testing.T) {
	s := NewServer(func(context.Context, *plugin.Request) (*plugin.Response, error) { return plugin.Allow(), nil })
	s.Reevaluate("pod-a")
	w := newWatcher()
	s.watch(w)
	assert.True(t, w.take().GetAll(), "a kubelet that opens its stream after a push may have missed it")
	w2 := newWatcher()
	s.watch(w2)
	select {
	case <-w2.notify:
		t.Fatal("only the first watcher after the push gets it")
	default:
	}
}

func TestServeSocketHandling(t *testing.T) {
	allow := func(context.Context, *plugin.Request) (*plugin.Response, error) { return plugin.Allow(), nil }

	t.Run("stale socket is replaced", func(t *testing.T) {
		socket := socketPath(t)
		lis, err := net.Listen("unix", socket)
		require.NoError(t, err)
		lis.(*net.UnixListener).SetUnlinkOnClose(false)
		require.NoError(t, lis.Close())
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		require.NoError(t, Serve(ctx, socket, allow))
	})
	t.Run("live socket is not stolen", func(t *testing.T) {
		socket := socketPath(t)
		lis, err := net.Listen("unix", socket)
		require.NoError(t, err)
		defer lis.Close()
		err = Serve(context.Background(), socket, allow)
		require.EqualError(t, err, fmt.Sprintf("another process serves on %s", socket))
	})
	t.Run("other file is not replaced", func(t *testing.T) {
		socket := socketPath(t)
		require.NoError(t, os.WriteFile(socket, []byte("data"), 0o600))
		err := Serve(context.Background(), socket, allow)
		require.EqualError(t, err, fmt.Sprintf("refusing to replace %s: it is not a socket", socket))
	})
	t.Run("what the kubelet's configuration refuses", func(t *testing.T) {
		// One parser for the kubelet, the SDK and the shipped plugins: a
		// plugin never listens where no kubelet configuration can reach it.
		for socket, want := range map[string]string{
			"plugin.sock":              `socket "plugin.sock": must be a unix socket: an absolute path or a unix:// URL`,
			"unix://plugin.sock":       `socket "unix://plugin.sock": must be a unix socket: an absolute path or a unix:// URL`,
			"tcp:///run/plugin.sock":   `socket "tcp:///run/plugin.sock": must be a unix socket: an absolute path or a unix:// URL`,
			"/run/x/../plugin.sock":    `socket "/run/x/../plugin.sock": socket path must be clean (no //, ., .. or trailing /), like "/run/plugin.sock"`,
			"unix:///run//plugin.sock": `socket "unix:///run//plugin.sock": socket path must be clean (no //, ., .. or trailing /), like "/run/plugin.sock"`,
		} {
			require.EqualError(t, Serve(context.Background(), socket, allow), want, socket)
		}
	})
	t.Run("stopping ends watch streams", func(t *testing.T) {
		s := NewServer(allow)
		socket := socketPath(t)
		ctx, stop := context.WithCancel(context.Background())
		served := make(chan error, 1)
		go func() { served <- s.Serve(ctx, socket) }()
		require.Eventually(t, func() bool { _, err := os.Stat(socket); return err == nil }, 5*time.Second, 10*time.Millisecond)
		conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
		require.NoError(t, err)
		defer conn.Close()
		stream, err := pb.NewPodAdmissionPluginClient(conn).WatchReevaluations(context.Background(), &pb.WatchReevaluationsRequest{}, grpc.WaitForReady(true))
		require.NoError(t, err)
		require.Eventually(t, func() bool { s.mu.Lock(); defer s.mu.Unlock(); return len(s.watchers) == 1 }, 5*time.Second, time.Millisecond)

		start := time.Now()
		stop()
		require.NoError(t, <-served)
		assert.Less(t, time.Since(start), gracefulStopTimeout, "an open watch stream does not hold up the stop")
		_, err = stream.Recv()
		assert.True(t, strings.Contains(err.Error(), "the plugin is stopping"), "error: %v", err)
	})
}
