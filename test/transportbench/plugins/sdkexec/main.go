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
