//go:build !testplugin_exec

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
	"bytes"
	"context"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/podadmission/podadmission/pkg/plugin"
	"github.com/podadmission/podadmission/pkg/plugin/corev1"
	"github.com/podadmission/podadmission/pkg/plugin/grpcplugin"
)

// decisionFilePollInterval is how often the GRPC daemon looks at the
// decision file; tests flip it and expect the kubelet to react quickly.
const decisionFilePollInterval = 50 * time.Millisecond

// runGRPC serves the handler on --serve until SIGTERM or SIGINT.
func runGRPC(o *options) {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	d := &daemon{options: o, denied: map[corev1.UID]struct{}{}, heldSince: map[corev1.UID]time.Time{}}
	d.server = grpcplugin.NewServer(d.handle)
	if o.decisionFile != "" {
		go d.watchDecisionFile(ctx)
	}
	fmt.Fprintf(os.Stderr, "testplugin: serving on %s\n", o.serve)
	if err := d.server.Serve(ctx, o.serve); err != nil {
		fail(err)
	}
}

// daemon is the test plugin in GRPC mode. It remembers the pods it denied,
// to ask for exactly those to be evaluated again when the decision changes.
type daemon struct {
	*options
	server *grpcplugin.Server
	mu     sync.Mutex
	denied map[corev1.UID]struct{}
	// heldSince is when --hold first held each pod it has not admitted yet.
	heldSince map[corev1.UID]time.Time
}

func (d *daemon) handle(ctx context.Context, req *plugin.Request) (*plugin.Response, error) {
	if d.mode == modeCrash && d.decisionFile == "" {
		fmt.Fprintln(os.Stderr, "testplugin: crashing as asked")
		os.Exit(3)
	}
	if d.hold > 0 {
		return d.holdThenAdmit(req)
	}
	resp, err := d.handler(ctx, req)
	if err == nil && !resp.Allowed {
		d.mu.Lock()
		d.denied[req.Pod.UID] = struct{}{}
		d.mu.Unlock()
	}
	return resp, err
}

// holdThenAdmit denies a pod until d.hold after its first call, then
// admits it, also on every later call; the first call schedules the push
// that wakes it.
func (d *daemon) holdThenAdmit(req *plugin.Request) (*plugin.Response, error) {
	if err := d.logCall(req); err != nil {
		return nil, err
	}
	uid := req.Pod.UID
	d.mu.Lock()
	defer d.mu.Unlock()
	since, held := d.heldSince[uid]
	if !held {
		d.heldSince[uid] = time.Now()
		time.AfterFunc(d.hold, func() { d.server.Reevaluate(uid) })
		return d.deny(d.reason, d.message), nil
	}
	if time.Since(since) < d.hold {
		return d.deny(d.reason, d.message), nil
	}
	// Remembered: a pod is held once, later calls for it (another
	// plugin's hold, a kubelet restart) admit it at once.
	return plugin.Allow(), nil
}

// watchDecisionFile pushes re-evaluations whenever the decision file's
// content changes.
func (d *daemon) watchDecisionFile(ctx context.Context) {
	last, _ := os.ReadFile(d.decisionFile)
	ticker := time.NewTicker(decisionFilePollInterval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		current, _ := os.ReadFile(d.decisionFile)
		if bytes.Equal(current, last) {
			continue
		}
		last = current
		if d.push == pushAll {
			d.server.ReevaluateAll()
			continue
		}
		d.mu.Lock()
		uids := make([]corev1.UID, 0, len(d.denied))
		for uid := range d.denied {
			uids = append(uids, uid)
		}
		clear(d.denied)
		d.mu.Unlock()
		d.server.Reevaluate(uids...)
	}
}
