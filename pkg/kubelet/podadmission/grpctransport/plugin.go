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

package grpctransport

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"
	"k8s.io/klog/v2"

	configv1alpha1 "github.com/podadmission/podadmission/pkg/apis/config/v1alpha1"
	"github.com/podadmission/podadmission/pkg/apis/config/validation"
	pb "github.com/podadmission/podadmission/pkg/apis/podadmission/grpc/v1alpha1"
	podadmissionv1alpha1 "github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1"
	"github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1/protocol"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/transport"
)

var (
	_ transport.Plugin      = (*Plugin)(nil)
	_ transport.Starter     = (*Plugin)(nil)
	_ transport.Reevaluator = (*Plugin)(nil)
)

const (
	// Reconnection back-off, as the kubelet's CRI client does it: a plugin
	// daemon that starts or restarts is found within a few seconds.
	baseBackoffDelay  = 100 * time.Millisecond
	maxBackoffDelay   = 3 * time.Second
	minConnectTimeout = 5 * time.Second

	// reevaluationBuffer is how many re-evaluations may wait for the
	// manager before the stream from the plugin is slowed down.
	reevaluationBuffer = 64
)

var (
	errNotStarted = errors.New("not started")
	errClosed     = errors.New("closed")
)

// Plugin calls one GRPC plugin. It is safe for concurrent use; calls share
// one connection, made by Start.
type Plugin struct {
	socket string
	// serverUID is the uid the plugin daemon must run as (peer.go).
	serverUID uint32
	// untrusted is why the last connection attempt was refused, until one
	// passes the checks.
	untrusted atomic.Pointer[untrustedSocketError]

	// conn is set by Start, and client with it.
	conn   atomic.Pointer[grpc.ClientConn]
	client pb.PodAdmissionPluginClient

	reevaluations chan transport.Reevaluation

	mu      sync.Mutex
	started bool
	closed  atomic.Bool
	stop    context.CancelFunc
	done    sync.WaitGroup
}

// New returns the GRPC plugin cfg describes. It starts nothing: Start
// connects.
func New(cfg *configv1alpha1.PluginConfig) (*Plugin, error) {
	if cfg.Type != configv1alpha1.GRPCPluginType {
		return nil, fmt.Errorf("type is %q, not %q", cfg.Type, configv1alpha1.GRPCPluginType)
	}
	// The kubelet's configuration was validated with the same parser;
	// a plugin is reachable only through the node's own file system,
	// guarded by its permissions.
	socket, err := validation.SocketPath(cfg.Endpoint)
	if err != nil {
		return nil, fmt.Errorf("endpoint %q: %w", cfg.Endpoint, err)
	}
	p := &Plugin{
		socket:        socket,
		reevaluations: make(chan transport.Reevaluation, reevaluationBuffer),
	}
	if cfg.ServerUID != nil {
		p.serverUID = uint32(*cfg.ServerUID)
	}
	return p, nil
}

// Start connects to the socket in the background and keeps the connection
// and a WatchReevaluations stream up until Close, logging through ctx's
// logger; the watch of the connection and the stream also end when ctx is
// done. It does not wait for the plugin, which may
// not be running yet. A second Start, or a Start after Close, does nothing.
func (p *Plugin) Start(ctx context.Context) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.started || p.closed.Load() {
		return
	}
	p.started = true
	logger := klog.FromContext(ctx).WithValues("endpoint", validation.UnixSocketScheme+p.socket)
	connectParams := grpc.ConnectParams{Backoff: backoff.DefaultConfig, MinConnectTimeout: minConnectTimeout}
	connectParams.Backoff.BaseDelay = baseBackoffDelay
	connectParams.Backoff.MaxDelay = maxBackoffDelay
	conn, err := grpc.NewClient(validation.UnixSocketScheme+p.socket,
		grpc.WithContextDialer(p.dialChecked),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithAuthority("localhost"),
		grpc.WithConnectParams(connectParams),
		grpc.WithDefaultCallOptions(
			grpc.MaxCallRecvMsgSize(protocol.MaxResponseSize),
			grpc.MaxCallSendMsgSize(protocol.MaxRequestSize)),
	)
	if err != nil {
		// Only options that are wrong in this code fail NewClient; calls
		// fail closed until the plugin is configured again.
		logger.Error(err, "Cannot create the connection of a GRPC pod admission plugin")
		return
	}
	p.client = pb.NewPodAdmissionPluginClient(conn)
	p.conn.Store(conn)
	ctx, stop := context.WithCancel(klog.NewContext(ctx, logger))
	p.stop = stop
	p.done.Add(2)
	go func() {
		defer p.done.Done()
		p.watchConnection(ctx, conn)
	}()
	go func() {
		defer p.done.Done()
		p.watchReevaluations(ctx)
	}()
}

// Admit asks the plugin about req. Until the first connection attempt ends
// it waits for it; while the plugin is not connected after that, it fails at
// once (no WaitForReady), so a plugin that is down blocks pods at once
// instead of holding a pod worker until the deadline.
func (p *Plugin) Admit(ctx context.Context, req *podadmissionv1alpha1.PodAdmissionRequest) (*podadmissionv1alpha1.PodAdmissionResponse, error) {
	switch {
	case p.closed.Load():
		return nil, errClosed
	case p.conn.Load() == nil:
		return nil, errNotStarted
	}
	in, err := pb.RequestToProto(req)
	if err != nil {
		return nil, err
	}
	out, err := p.client.Admit(ctx, in)
	if err != nil {
		return nil, p.callError(ctx, err)
	}
	return pb.ResponseFromProto(out, req)
}

// Reevaluations delivers the plugin's requests to evaluate pods again, and
// Reevaluation{All: true} every time the connection becomes ready. It is
// closed by Close.
func (p *Plugin) Reevaluations() <-chan transport.Reevaluation {
	return p.reevaluations
}

// Close stops reconnecting and watching, closes the connection, then closes
// Reevaluations. Calls in flight fail. It is safe to call more than once.
func (p *Plugin) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed.Swap(true) {
		return nil
	}
	var err error
	if conn := p.conn.Load(); conn != nil {
		p.stop()
		p.done.Wait()
		err = conn.Close()
	}
	close(p.reevaluations)
	return err
}
