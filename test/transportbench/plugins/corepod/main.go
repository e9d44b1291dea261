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

// Command corepod is sdkexec's policy decided on k8s.io/api/core/v1's Pod,
// which it gets from the SDK's package corepod: what an Exec plugin that
// hands pods to Kubernetes libraries pays for them (the conversion
// pod-security-plugin runs), next to sdkexec, which reads the SDK's own
// Pod.
package main

import (
	"context"

	"github.com/podadmission/podadmission/pkg/plugin"
	"github.com/podadmission/podadmission/pkg/plugin/corepod"
)

func main() {
	plugin.RunExec(noHostNetwork)
}

func noHostNetwork(_ context.Context, req *plugin.Request) (*plugin.Response, error) {
	pod, err := corepod.Pod(req)
	if err != nil {
		return nil, err
	}
	if pod.Spec.HostNetwork {
		return plugin.Deny("HostNetwork", "pods on this node may not use the host network"), nil
	}
	return plugin.Allow(), nil
}
