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

package framework

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

// DevicePlugin is a device plugin served by the test process on the
// kubelet's device plugin directory, as a vendor's daemon would: it
// registers with the kubelet's device manager and advertises its devices
// as healthy, and records every Allocate the kubelet asks of it (the
// kubelet allocates devices to a pod when it admits the pod). Its devices
// are nothing: Allocate returns an environment variable naming them.
type DevicePlugin struct {
	pluginapi.UnimplementedDevicePluginServer

	// ResourceName is the extended resource the devices are, e.g.
	// e2e.podadmission.io/widget.
	ResourceName string
	socket       string
	devices      []*pluginapi.Device
	server       *grpc.Server
	stopped      chan struct{}

	mu          sync.Mutex
	allocations []time.Time
}

// StartDevicePlugin serves a device plugin with n healthy devices of
// resourceName, registers it with the kubelet and waits until the node's
// allocatable shows them. Stop ends it.
func (c *Cluster) StartDevicePlugin(ctx context.Context, resourceName string, n int) (*DevicePlugin, error) {
	name := strings.NewReplacer("/", "-", ".", "-").Replace(resourceName)
	p := &DevicePlugin{
		ResourceName: resourceName,
		socket:       filepath.Join(pluginapi.DevicePluginPath, "e2e-"+name+".sock"),
		stopped:      make(chan struct{}),
	}
	for i := range n {
		p.devices = append(p.devices, &pluginapi.Device{ID: fmt.Sprintf("%s-%d", name, i), Health: pluginapi.Healthy})
	}
	_ = os.Remove(p.socket)
	listener, err := net.Listen("unix", p.socket)
	if err != nil {
		return nil, fmt.Errorf("device plugin %s: %w", resourceName, err)
	}
	p.server = grpc.NewServer()
	pluginapi.RegisterDevicePluginServer(p.server, p)
	go func() { _ = p.server.Serve(listener) }()

	if err := p.register(ctx); err != nil {
		p.Stop()
		return nil, err
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		node, err := c.Client.CoreV1().Nodes().Get(ctx, c.Options.NodeName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		q := node.Status.Allocatable[corev1.ResourceName(resourceName)]
		return q.Value() == int64(n), nil
	})
	if err != nil {
		p.Stop()
		return nil, fmt.Errorf("device plugin %s registered, but the node's allocatable does not show its %d devices: %w", resourceName, n, err)
	}
	return p, nil
}

// register tells the kubelet's device manager about the plugin.
func (p *DevicePlugin) register(ctx context.Context) error {
	conn, err := grpc.NewClient("unix://"+pluginapi.KubeletSocket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err = pluginapi.NewRegistrationClient(conn).Register(ctx, &pluginapi.RegisterRequest{
		Version:      pluginapi.Version,
		Endpoint:     filepath.Base(p.socket),
		ResourceName: p.ResourceName,
		Options:      &pluginapi.DevicePluginOptions{},
	})
	if err != nil {
		return fmt.Errorf("registering device plugin %s with the kubelet at %s: %w", p.ResourceName, pluginapi.KubeletSocket, err)
	}
	return nil
}

// Allocations are the times the kubelet asked for devices, one per
// container it allocated devices to.
func (p *DevicePlugin) Allocations() []time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]time.Time(nil), p.allocations...)
}

// Stop stops serving; the kubelet then sees the devices go.
func (p *DevicePlugin) Stop() {
	select {
	case <-p.stopped:
		return
	default:
	}
	close(p.stopped)
	p.server.Stop()
	_ = os.Remove(p.socket)
}

// GetDevicePluginOptions implements pluginapi.DevicePluginServer.
func (p *DevicePlugin) GetDevicePluginOptions(context.Context, *pluginapi.Empty) (*pluginapi.DevicePluginOptions, error) {
	return &pluginapi.DevicePluginOptions{}, nil
}

// ListAndWatch sends the devices once, all healthy, and keeps the stream
// open until the plugin stops.
func (p *DevicePlugin) ListAndWatch(_ *pluginapi.Empty, stream grpc.ServerStreamingServer[pluginapi.ListAndWatchResponse]) error {
	if err := stream.Send(&pluginapi.ListAndWatchResponse{Devices: p.devices}); err != nil {
		return err
	}
	select {
	case <-p.stopped:
	case <-stream.Context().Done():
	}
	return nil
}

// Allocate records the request and answers with the device IDs in the
// environment.
func (p *DevicePlugin) Allocate(_ context.Context, req *pluginapi.AllocateRequest) (*pluginapi.AllocateResponse, error) {
	resp := &pluginapi.AllocateResponse{}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range req.ContainerRequests {
		p.allocations = append(p.allocations, time.Now())
		resp.ContainerResponses = append(resp.ContainerResponses, &pluginapi.ContainerAllocateResponse{
			Envs: map[string]string{"E2E_DEVICES": strings.Join(c.DevicesIds, ",")},
		})
	}
	return resp, nil
}
