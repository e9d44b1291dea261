// Command sdkexec is an Exec plugin as a plugin author writes it with the
// SDK (the README's example): it rejects host-network pods and admits the
// rest.
package main

import (
	"context"

	"github.com/podadmission/podadmission/pkg/plugin"
)

func main() {
	plugin.RunExec(noHostNetwork)
}

func noHostNetwork(_ context.Context, req *plugin.Request) (*plugin.Response, error) {
	if req.Pod.Spec.HostNetwork {
		return plugin.Deny("HostNetwork", "pods on this node may not use the host network"), nil
	}
	return plugin.Allow(), nil
}
