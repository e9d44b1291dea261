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
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"

	pb "github.com/podadmission/podadmission/pkg/apis/podadmission/grpc/v1alpha1"
	"github.com/podadmission/podadmission/pkg/plugin"
	"github.com/podadmission/podadmission/pkg/plugin/grpcplugin"
)

// socketPath returns a socket path in a fresh directory. t.TempDir() paths
// carry the test name and can exceed the 108 bytes a socket path may have.
func socketPath(t *testing.T) string {
	dir, err := os.MkdirTemp("", "podadm")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, "plugin.sock")
}

// sdkServer serves h with the SDK on socket until stopped or the test ends.
type sdkServer struct {
	*grpcplugin.Server
	stop   context.CancelFunc
	served chan error
}

func startSDKServer(t *testing.T, socket string, h plugin.Handler) *sdkServer {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	s := &sdkServer{Server: grpcplugin.NewServer(h), stop: stop, served: make(chan error, 1)}
	go func() { s.served <- s.Serve(ctx, socket) }()
	waitServing(t, socket)
	t.Cleanup(s.shutdown)
	return s
}

// waitServing waits until something accepts connections on socket: the
// socket file appears (bind) a moment before connections are accepted
// (listen).
func waitServing(t *testing.T, socket string) {
	t.Helper()
	require.Eventually(t, func() bool {
		conn, err := net.Dial("unix", socket)
		if err != nil {
			return false
		}
		conn.Close()
		return true
	}, 10*time.Second, 10*time.Millisecond, "nothing serves on %s", socket)
}

// shutdown stops the server and waits until it has removed its socket.
func (s *sdkServer) shutdown() {
	s.stop()
	<-s.served
	s.served <- nil
}

// rawServer serves a hand-written PodAdmissionPlugin implementation, to
// send what the SDK refuses to send.
func startRawServer(t *testing.T, socket string, impl pb.PodAdmissionPluginServer) {
	t.Helper()
	lis, err := net.Listen("unix", socket)
	require.NoError(t, err)
	gs := grpc.NewServer()
	pb.RegisterPodAdmissionPluginServer(gs, impl)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = gs.Serve(lis)
	}()
	waitServing(t, socket)
	t.Cleanup(func() {
		gs.Stop()
		<-done
	})
}

// answering is a raw server whose Admit returns resp.
type answering struct {
	pb.UnimplementedPodAdmissionPluginServer
	resp *pb.AdmitResponse
}

func (a *answering) Admit(context.Context, *pb.AdmitRequest) (*pb.AdmitResponse, error) {
	return a.resp, nil
}

// unimplemented serves neither Admit nor WatchReevaluations.
type unimplemented struct {
	pb.UnimplementedPodAdmissionPluginServer
}

// failing is a raw server whose Admit fails with err.
type failing struct {
	pb.UnimplementedPodAdmissionPluginServer
	err error
}

func (f *failing) Admit(context.Context, *pb.AdmitRequest) (*pb.AdmitResponse, error) {
	return nil, f.err
}
