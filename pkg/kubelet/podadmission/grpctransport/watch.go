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
	"io"
	"math"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/status"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"

	pb "github.com/podadmission/podadmission/pkg/apis/podadmission/grpc/v1alpha1"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/transport"
)

// watchConnection keeps the connection up and sends Reevaluation{All: true}
// every time it becomes ready, until ctx is done.
func (p *Plugin) watchConnection(ctx context.Context, conn *grpc.ClientConn) {
	logger := klog.FromContext(ctx)
	conn.Connect()
	ready := false
	for {
		state := conn.GetState()
		switch {
		case state == connectivity.Ready && !ready:
			ready = true
			logger.Info("Connected to pod admission plugin")
			if !p.send(ctx, transport.Reevaluation{All: true}) {
				return
			}
		case state != connectivity.Ready && ready:
			ready = false
			logger.Info("Lost the connection to pod admission plugin; reconnecting", "state", state)
		}
		// An idle connection is not redialled by itself; reconnect now
		// (gRPC backs off between attempts) so the plugin is found as soon
		// as it serves.
		if state == connectivity.Idle {
			conn.Connect()
		}
		if !conn.WaitForStateChange(ctx, state) {
			return
		}
	}
}

// watchReevaluations keeps a WatchReevaluations stream open while the plugin
// is connected and forwards what it sends, until ctx is done.
func (p *Plugin) watchReevaluations(ctx context.Context) {
	logger := klog.FromContext(ctx)
	backoff := newStreamBackoff()
	warnedUnimplemented := false
	for ctx.Err() == nil {
		opened, err := p.streamReevaluations(ctx)
		if ctx.Err() != nil {
			return
		}
		if opened {
			backoff = newStreamBackoff()
		}
		switch {
		case status.Code(err) == codes.Unimplemented && !warnedUnimplemented:
			warnedUnimplemented = true
			logger.Info("Pod admission plugin does not serve WatchReevaluations; the pods it rejects are retried on back-off only", "err", err)
		default:
			logger.V(2).Info("WatchReevaluations stream ended; opening it again", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff.Step()):
		}
	}
}

// newStreamBackoff paces the reopening of a WatchReevaluations stream that
// keeps failing while the connection is up (a plugin that does not serve it).
func newStreamBackoff() wait.Backoff {
	return wait.Backoff{Duration: baseBackoffDelay, Factor: 2, Jitter: 0.2, Steps: math.MaxInt32, Cap: maxBackoffDelay}
}

// streamReevaluations opens one stream, waiting for the connection, and
// forwards its messages until it breaks. It reports whether the stream was
// opened.
func (p *Plugin) streamReevaluations(ctx context.Context) (bool, error) {
	stream, err := p.client.WatchReevaluations(ctx, &pb.WatchReevaluationsRequest{}, grpc.WaitForReady(true))
	if err != nil {
		return false, err
	}
	for {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return true, errors.New("closed by the plugin")
		}
		if err != nil {
			return true, err
		}
		r := transport.Reevaluation{All: msg.GetAll()}
		for _, uid := range msg.GetPodUids() {
			r.PodUIDs = append(r.PodUIDs, types.UID(uid))
		}
		if !r.All && len(r.PodUIDs) == 0 {
			continue
		}
		if !p.send(ctx, r) {
			return true, ctx.Err()
		}
	}
}

// send delivers r unless ctx is done first; it reports whether it did.
func (p *Plugin) send(ctx context.Context, r transport.Reevaluation) bool {
	select {
	case p.reevaluations <- r:
		return true
	case <-ctx.Done():
		return false
	}
}
