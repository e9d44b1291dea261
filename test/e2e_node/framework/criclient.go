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
	"errors"
	"fmt"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// CRIClient talks to a CRI endpoint directly, for readiness checks, for
// the tests' view of the runtime and for removing what is left at teardown.
type CRIClient struct {
	Runtime runtimeapi.RuntimeServiceClient
	Images  runtimeapi.ImageServiceClient
	conn    *grpc.ClientConn
}

// DialCRI connects to endpoint (unix:///path, which gRPC resolves
// itself); gRPC connects lazily, so it does not wait for the socket.
func DialCRI(endpoint string) (*CRIClient, error) {
	if !strings.HasPrefix(endpoint, "unix:///") {
		return nil, fmt.Errorf("CRI endpoint %q is not unix:///<path>", endpoint)
	}
	conn, err := grpc.NewClient(endpoint,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		// Readiness polls a socket that appears within a second or two;
		// the default back-off would wait a second after the first miss.
		grpc.WithConnectParams(grpc.ConnectParams{Backoff: backoff.Config{BaseDelay: 50 * time.Millisecond, Multiplier: 1.6, MaxDelay: time.Second}, MinConnectTimeout: time.Second}),
	)
	if err != nil {
		return nil, err
	}
	return &CRIClient{
		Runtime: runtimeapi.NewRuntimeServiceClient(conn),
		Images:  runtimeapi.NewImageServiceClient(conn),
		conn:    conn,
	}, nil
}

// Close closes the connection.
func (c *CRIClient) Close() error { return c.conn.Close() }

// ready passes when the runtime answers and reports itself and its
// network ready, the two conditions the kubelet requires; others
// (containerd 2.x's ContainerdHasNoDeprecationWarnings) are informative.
func (c *CRIClient) ready(ctx context.Context) error {
	resp, err := c.Runtime.Status(ctx, &runtimeapi.StatusRequest{})
	if err != nil {
		return err
	}
	for _, cond := range resp.GetStatus().GetConditions() {
		required := cond.Type == runtimeapi.RuntimeReady || cond.Type == runtimeapi.NetworkReady
		if required && !cond.Status {
			return fmt.Errorf("runtime condition %s is false: %s: %s", cond.Type, cond.Reason, cond.Message)
		}
	}
	return nil
}

// removeAllPods stops and removes every pod sandbox (and with them their
// containers), so the runtime releases mounts, network namespaces and
// cgroups before it is stopped.
func (c *CRIClient) removeAllPods(ctx context.Context) error {
	resp, err := c.Runtime.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		return err
	}
	var errs []error
	for _, s := range resp.GetItems() {
		if _, err := c.Runtime.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: s.Id}); err != nil {
			errs = append(errs, fmt.Errorf("stopping sandbox %s: %w", s.Id, err))
			continue
		}
		if _, err := c.Runtime.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: s.Id}); err != nil {
			errs = append(errs, fmt.Errorf("removing sandbox %s: %w", s.Id, err))
		}
	}
	return errors.Join(errs...)
}

// PodSandbox is what the runtime has of one sandbox of a pod.
type PodSandbox struct {
	ID    string
	Ready bool
	// IP is the pod's address from the CNI plugin; empty with host network.
	IP string
	// OwnNetwork says the sandbox has a network namespace of its own.
	OwnNetwork bool
}

// PodSandboxes lists the runtime's sandboxes of the pod with uid (the
// kubelet's io.kubernetes.pod.uid label), ready or not.
func (c *Cluster) PodSandboxes(ctx context.Context, uid string) ([]PodSandbox, error) {
	client, err := DialCRI(c.CRIEndpoint)
	if err != nil {
		return nil, err
	}
	defer client.Close()
	list, err := client.Runtime.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{
		Filter: &runtimeapi.PodSandboxFilter{LabelSelector: map[string]string{"io.kubernetes.pod.uid": uid}},
	})
	if err != nil {
		return nil, err
	}
	var sandboxes []PodSandbox
	for _, s := range list.GetItems() {
		status, err := client.Runtime.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: s.Id})
		if err != nil {
			return nil, err
		}
		st := status.GetStatus()
		sandboxes = append(sandboxes, PodSandbox{
			ID:         s.Id,
			Ready:      st.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY,
			IP:         st.GetNetwork().GetIp(),
			OwnNetwork: st.GetLinux().GetNamespaces().GetOptions().GetNetwork() == runtimeapi.NamespaceMode_POD,
		})
	}
	return sandboxes, nil
}
