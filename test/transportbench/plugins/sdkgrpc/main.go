// Command sdkgrpc is sdkexec's policy served as a GRPC plugin daemon with
// the SDK, on the socket its first argument names.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/podadmission/podadmission/pkg/plugin"
	"github.com/podadmission/podadmission/pkg/plugin/grpcplugin"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := grpcplugin.Serve(ctx, os.Args[1], noHostNetwork); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func noHostNetwork(_ context.Context, req *plugin.Request) (*plugin.Response, error) {
	if req.Pod.Spec.HostNetwork {
		return plugin.Deny("HostNetwork", "pods on this node may not use the host network"), nil
	}
	return plugin.Allow(), nil
}
