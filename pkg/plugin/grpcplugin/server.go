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

// Package grpcplugin serves a pod admission Handler (package plugin) as a
// GRPC plugin daemon on a unix socket, and pushes re-evaluations to the
// kubelets that watch it.
package grpcplugin

import (
	"context"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/podadmission/podadmission/pkg/apis/config/validation"
	pb "github.com/podadmission/podadmission/pkg/apis/podadmission/grpc/v1alpha1"
	"github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1/protocol"
	"github.com/podadmission/podadmission/pkg/plugin"
	"github.com/podadmission/podadmission/pkg/plugin/corev1"
)

const (
	// gracefulStopTimeout bounds how long Serve waits for calls in flight
	// when its context is done; the kubelet's deadlines bound them anyway.
	gracefulStopTimeout = 5 * time.Second
)

// Serve serves h as a GRPC plugin on socketPath until ctx is done. It is
// NewServer(h).Serve(ctx, socketPath); use a Server to push re-evaluations.
func Serve(ctx context.Context, socketPath string, h plugin.Handler) error {
	return NewServer(h).Serve(ctx, socketPath)
}

// Server serves a Handler as a GRPC plugin, and pushes re-evaluations to the
// kubelets that watch it. Its methods are safe for concurrent use.
type Server struct {
	handler  plugin.Handler
	mu       sync.Mutex
	watchers map[*watcher]struct{}
	// missed records a push made while no kubelet watched: the next one
	// to watch gets "all", since it may have connected just before the
	// push and opened its stream just after.
	missed bool
}

// NewServer returns a Server for h. Call Serve to serve it.
func NewServer(h plugin.Handler) *Server {
	return &Server{handler: h, watchers: map[*watcher]struct{}{}}
}

// Serve listens on the unix socket socketPath (an absolute path or a
// unix:// URL of one, as the kubelet's configuration accepts it) and
// serves until ctx is done, then stops and removes the socket. It returns nil
// when ctx ended it. A socket file left behind by a previous run is
// replaced; a socket another process still serves on is an error.
func (s *Server) Serve(ctx context.Context, socketPath string) error {
	path, err := validation.SocketPath(socketPath)
	if err != nil {
		return fmt.Errorf("socket %q: %w", socketPath, err)
	}
	lis, err := listenUnix(path)
	if err != nil {
		return err
	}
	gs := grpc.NewServer(grpc.MaxRecvMsgSize(protocol.MaxRequestSize))
	stopping := make(chan struct{})
	pb.RegisterPodAdmissionPluginServer(gs, &service{server: s, stopping: stopping})

	served := make(chan error, 1)
	go func() { served <- gs.Serve(lis) }()
	select {
	case err := <-served:
		return fmt.Errorf("serve on %s: %w", path, err)
	case <-ctx.Done():
	}
	// Watch streams last as long as the connection; end them first so that
	// a graceful stop only waits for Admit calls.
	close(stopping)
	stopped := make(chan struct{})
	go func() {
		gs.GracefulStop()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-time.After(gracefulStopTimeout):
		gs.Stop()
		<-stopped
	}
	<-served
	return nil
}

// listenUnix listens on path, readable and writable by its owner only: the
// kubelet runs as root, and nobody else has any business asking the plugin.
func listenUnix(path string) (net.Listener, error) {
	if info, err := os.Lstat(path); err == nil {
		if info.Mode().Type() != os.ModeSocket {
			return nil, fmt.Errorf("refusing to replace %s: it is not a socket", path)
		}
		if conn, err := net.DialTimeout("unix", path, time.Second); err == nil {
			conn.Close()
			return nil, fmt.Errorf("another process serves on %s", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("remove the stale socket %s: %w", path, err)
		}
	}
	lis, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		lis.Close()
		return nil, err
	}
	return lis, nil
}

// Reevaluate asks the connected kubelets to evaluate the pods with these
// uids (metadata.uid) again now, if this plugin blocks them. It does not
// block; re-evaluations not sent yet are merged.
func (s *Server) Reevaluate(uids ...corev1.UID) {
	s.push(func(w *watcher) { w.add(uids) })
}

// ReevaluateAll asks the connected kubelets to evaluate every pod this
// plugin blocks again now, for example after the plugin's policy changed.
func (s *Server) ReevaluateAll() {
	s.push(func(w *watcher) { w.addAll() })
}

func (s *Server) push(f func(*watcher)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.watchers) == 0 {
		s.missed = true
	}
	for w := range s.watchers {
		f(w)
	}
}

func (s *Server) watch(w *watcher) func() {
	s.mu.Lock()
	s.watchers[w] = struct{}{}
	if s.missed {
		s.missed = false
		w.addAll()
	}
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		delete(s.watchers, w)
		s.mu.Unlock()
	}
}

// service is the PodAdmissionPlugin service of one Serve call.
type service struct {
	pb.UnimplementedPodAdmissionPluginServer
	server   *Server
	stopping <-chan struct{}
}

func (svc *service) Admit(ctx context.Context, in *pb.AdmitRequest) (*pb.AdmitResponse, error) {
	req, err := requestFromProto(in)
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	resp, err := plugin.Respond(ctx, svc.server.handler, req)
	if err != nil {
		// The kubelet gave up: say so in its terms, whatever the handler
		// made of it.
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, status.FromContextError(ctxErr).Err()
		}
		// A status error from the handler keeps its code; any other error
		// is Unknown.
		return nil, status.Convert(err).Err()
	}
	if err := resp.Validate(); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	return &pb.AdmitResponse{
		Uid:               string(req.UID),
		Allowed:           resp.Allowed,
		Reason:            resp.Reason,
		Message:           resp.Message,
		RetryAfterSeconds: resp.RetryAfterSeconds,
	}, nil
}

func (svc *service) WatchReevaluations(_ *pb.WatchReevaluationsRequest, stream grpc.ServerStreamingServer[pb.Reevaluation]) error {
	w := newWatcher()
	unwatch := svc.server.watch(w)
	defer unwatch()
	for {
		select {
		case <-stream.Context().Done():
			return nil
		case <-svc.stopping:
			return status.Error(codes.Unavailable, "the plugin is stopping")
		case <-w.notify:
			msg := w.take()
			if !msg.All && len(msg.PodUids) == 0 {
				continue
			}
			if err := stream.Send(msg); err != nil {
				return err
			}
		}
	}
}
