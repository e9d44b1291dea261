//go:build e2e_node

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

// Package crirecord is a CRI proxy that sits between the kubelet and the
// container runtime and records every pod lifecycle call (sandbox and
// container create, start, stop, remove, image pull) in a JSON-lines
// journal. The node e2e tests read the journal to prove what the kubelet
// did not do, for example that it never created a sandbox for a pod a
// plugin rejected, in the fake and the containerd runtime mode alike.
package crirecord

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"k8s.io/cri-client/pkg/util"
)

// maxMessageSize matches the kubelet's CRI client limit.
const maxMessageSize = 16 << 20

// Proxy forwards CRI calls to a backend runtime and records them.
type Proxy struct {
	server   *grpc.Server
	backend  *grpc.ClientConn
	recorder *recorder
	journal  *journalWriter
}

// NewProxy connects to the runtime at backendEndpoint (unix:///path) and
// prepares to record into journalPath.
func NewProxy(backendEndpoint, journalPath string) (*Proxy, error) {
	if !strings.HasPrefix(backendEndpoint, "unix:///") {
		return nil, fmt.Errorf("backend endpoint %q is not unix:///<path>", backendEndpoint)
	}
	// gRPC resolves unix:///path itself.
	backend, err := grpc.NewClient(backendEndpoint,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMessageSize), grpc.MaxCallSendMsgSize(maxMessageSize)),
	)
	if err != nil {
		return nil, fmt.Errorf("connecting to the runtime: %w", err)
	}
	journal, err := openJournalWriter(journalPath)
	if err != nil {
		backend.Close()
		return nil, err
	}
	p := &Proxy{backend: backend, journal: journal, recorder: newRecorder(journal)}
	p.server = grpc.NewServer(
		grpc.ForceServerCodec(rawCodec{}),
		grpc.UnknownServiceHandler(p.forward),
		grpc.MaxRecvMsgSize(maxMessageSize),
		grpc.MaxSendMsgSize(maxMessageSize),
	)
	return p, nil
}

// Serve serves the CRI on listenEndpoint (unix:///path) until Stop.
func (p *Proxy) Serve(listenEndpoint string) error {
	listener, err := util.CreateListener(listenEndpoint)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", listenEndpoint, err)
	}
	return p.server.Serve(listener)
}

// Stop stops serving and closes the backend connection and the journal.
func (p *Proxy) Stop() {
	p.server.Stop()
	p.backend.Close()
	p.journal.close()
}

// forward relays one call, of any CRI method and streaming shape, to the
// backend and records it once it is done.
func (p *Proxy) forward(_ any, in grpc.ServerStream) error {
	method, ok := grpc.MethodFromServerStream(in)
	if !ok {
		return errors.New("crirecord: no method in stream")
	}
	started := time.Now()
	ctx, cancel := context.WithCancel(in.Context())
	defer cancel()
	md, _ := metadata.FromIncomingContext(ctx)
	out, err := p.backend.NewStream(metadata.NewOutgoingContext(ctx, md.Copy()),
		&grpc.StreamDesc{ServerStreams: true, ClientStreams: true}, method, grpc.ForceCodec(rawCodec{}))
	if err != nil {
		p.recorder.record(method, started, nil, nil, err)
		return err
	}

	// Requests flow kubelet -> runtime in the background; the first one is
	// kept for the journal.
	firstRequest := make(chan []byte, 1)
	requestsDone := make(chan error, 1)
	go func() {
		first := true
		for {
			f := &frame{}
			if err := in.RecvMsg(f); err != nil {
				if first {
					firstRequest <- nil
				}
				if errors.Is(err, io.EOF) {
					requestsDone <- out.CloseSend()
				} else {
					requestsDone <- err
				}
				return
			}
			if first {
				firstRequest <- f.payload
				first = false
			}
			if err := out.SendMsg(f); err != nil {
				requestsDone <- err
				return
			}
		}
	}()

	// Responses flow runtime -> kubelet here.
	var firstResponse []byte
	header, headerErr := out.Header()
	if headerErr == nil {
		if err := in.SendHeader(header); err != nil {
			return err
		}
	}
	var callErr error
	for n := 0; ; n++ {
		f := &frame{}
		if err := out.RecvMsg(f); err != nil {
			if !errors.Is(err, io.EOF) {
				callErr = err
			}
			break
		}
		if n == 0 {
			firstResponse = f.payload
		}
		if err := in.SendMsg(f); err != nil {
			callErr = err
			break
		}
	}
	in.SetTrailer(out.Trailer())
	request := <-firstRequest
	p.recorder.record(method, started, request, firstResponse, callErr)
	return callErr
}
