//go:build e2e_node

package framework

import (
	"context"
	"errors"
	"fmt"
	"net"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/cri-client/pkg/util"
)

// CRIClient talks to a CRI endpoint directly, for readiness checks, for
// the tests' view of the runtime and for removing what is left at teardown.
type CRIClient struct {
	Runtime runtimeapi.RuntimeServiceClient
	Images  runtimeapi.ImageServiceClient
	conn    *grpc.ClientConn
}

// DialCRI connects to endpoint (unix:///path); gRPC connects lazily, so it
// does not wait for the socket to exist.
func DialCRI(endpoint string) (*CRIClient, error) {
	addr, dialer, err := util.GetAddressAndDialer(endpoint)
	if err != nil {
		return nil, err
	}
	conn, err := grpc.NewClient(addr,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, target string) (net.Conn, error) { return dialer(ctx, target) }),
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
// network ready.
func (c *CRIClient) ready(ctx context.Context) error {
	resp, err := c.Runtime.Status(ctx, &runtimeapi.StatusRequest{})
	if err != nil {
		return err
	}
	for _, cond := range resp.GetStatus().GetConditions() {
		if !cond.Status {
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
