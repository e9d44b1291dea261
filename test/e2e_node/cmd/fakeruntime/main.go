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

// Command fakeruntime serves k8s.io/cri-client/pkg/fake on a unix socket as
// the node e2e cluster's fast container runtime. It fixes the two gaps that
// keep the stock fake from running real pods: images report a non-zero size
// (size 0 leaves pods in ImageInspectError) and containers report an
// absolute log path (with an empty one the kubelet's container log cleanup
// globs "*" in its working directory).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/cri-client/pkg/fake"
	"k8s.io/cri-client/pkg/util"
	"k8s.io/klog/v2"
)

// fakeImageSize is what every image reports; any non-zero size works.
const fakeImageSize = 4 << 20

func main() {
	listen := flag.String("listen", "", "unix socket to serve the CRI on, as unix:///path (required)")
	imageFsMountpoint := flag.String("image-fs", "/", "mount point reported as the image and container filesystem")
	klog.InitFlags(nil)
	flag.Parse()

	if err := run(*listen, *imageFsMountpoint); err != nil {
		klog.ErrorS(err, "fake runtime failed")
		os.Exit(1)
	}
}

func run(endpoint, imageFsMountpoint string) error {
	if endpoint == "" {
		return errors.New("--listen is required")
	}
	runtime := newRuntime(imageFsMountpoint)

	listener, err := util.CreateListener(endpoint)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", endpoint, err)
	}
	server := grpc.NewServer()
	runtimeapi.RegisterRuntimeServiceServer(server, runtime)
	runtimeapi.RegisterImageServiceServer(server, runtime)

	served := make(chan error, 1)
	go func() { served <- server.Serve(listener) }()
	klog.InfoS("fake runtime serving", "endpoint", endpoint)

	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	select {
	case sig := <-signals:
		klog.InfoS("stopping fake runtime", "signal", sig)
		server.Stop()
		return nil
	case err := <-served:
		return fmt.Errorf("serving: %w", err)
	}
}

// runtime is the stock fake with the fixes above layered over it.
type runtime struct {
	*fake.RemoteRuntime
}

func newRuntime(imageFsMountpoint string) *runtime {
	f := fake.NewFakeRemoteRuntime()
	// Start would serve f on its own gRPC server, without the overrides
	// below; set the state it would set instead.
	f.RuntimeService.FakeStatus = &runtimeapi.RuntimeStatus{
		Conditions: []*runtimeapi.RuntimeCondition{
			{Type: runtimeapi.RuntimeReady, Status: true},
			{Type: runtimeapi.NetworkReady, Status: true},
		},
	}
	f.ImageService.SetFakeImageSize(fakeImageSize)
	usage := []*runtimeapi.FilesystemUsage{{
		Timestamp:  time.Now().UnixNano(),
		FsId:       &runtimeapi.FilesystemIdentifier{Mountpoint: imageFsMountpoint},
		UsedBytes:  &runtimeapi.UInt64Value{Value: fakeImageSize},
		InodesUsed: &runtimeapi.UInt64Value{Value: 1},
	}}
	f.ImageService.SetFakeFilesystemUsage(usage)
	f.ImageService.SetFakeContainerFilesystemUsage(usage)
	return &runtime{RemoteRuntime: f}
}

// CreateContainer gives the container the absolute log path the kubelet
// asked for, and creates the file, as a real runtime does.
func (r *runtime) CreateContainer(ctx context.Context, req *runtimeapi.CreateContainerRequest) (*runtimeapi.CreateContainerResponse, error) {
	resp, err := r.RemoteRuntime.CreateContainer(ctx, req)
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(req.GetSandboxConfig().GetLogDirectory(), req.GetConfig().GetLogPath())
	if !filepath.IsAbs(logPath) {
		return nil, fmt.Errorf("container %q: log path %q is not absolute", req.GetConfig().GetMetadata().GetName(), logPath)
	}
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(logPath, nil, 0o640); err != nil {
		return nil, err
	}

	r.RuntimeService.Lock()
	defer r.RuntimeService.Unlock()
	if c, ok := r.RuntimeService.Containers[resp.ContainerId]; ok {
		c.LogPath = logPath
	}
	return resp, nil
}
