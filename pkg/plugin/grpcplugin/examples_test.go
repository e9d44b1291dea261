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

package grpcplugin_test

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/podadmission/podadmission/pkg/plugin"
	"github.com/podadmission/podadmission/pkg/plugin/grpcplugin"
)

// denyHostNetwork rejects pods that use the host network.
func denyHostNetwork(_ context.Context, req *plugin.Request) (*plugin.Response, error) {
	if req.Pod.Spec.HostNetwork {
		return plugin.Deny("HostNetwork", "pods on this node may not use the host network"), nil
	}
	return plugin.Allow(), nil
}

// A GRPC plugin daemon serves a handler on a unix socket until it is
// told to stop.
func ExampleServe() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := grpcplugin.Serve(ctx, "/run/podadmission/no-host-network.sock", denyHostNetwork); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// A GRPC plugin whose policy changes tells the kubelet to evaluate again the
// pods it blocks, instead of letting them wait for their back-off.
func ExampleServer_ReevaluateAll() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()

	var allowed atomic.Bool // the policy: flipped by some watch of the world
	server := grpcplugin.NewServer(func(context.Context, *plugin.Request) (*plugin.Response, error) {
		if allowed.Load() {
			return plugin.Allow(), nil
		}
		return plugin.Deny("MaintenanceWindow", "the node is in a maintenance window"), nil
	})
	go func() {
		time.Sleep(10 * time.Minute) // the maintenance window ends
		allowed.Store(true)
		server.ReevaluateAll()
	}()
	if err := server.Serve(ctx, "unix:///run/podadmission/maintenance.sock"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
