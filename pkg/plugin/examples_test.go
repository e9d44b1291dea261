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

package plugin_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/podadmission/podadmission/pkg/plugin"
)

// noHostNetwork is a complete policy: pods may not use the host network,
// except in kube-system.
func noHostNetwork(_ context.Context, req *plugin.Request) (*plugin.Response, error) {
	if req.Pod.Spec.HostNetwork && req.Pod.Namespace != "kube-system" {
		return plugin.Deny("HostNetwork", "pods on this node may not use the host network"), nil
	}
	return plugin.Allow(), nil
}

// An Exec plugin's main function is one call.
func ExampleRunExec() {
	plugin.RunExec(noHostNetwork)
}

// HandleExec is RunExec without the process: this is what the kubelet sends
// and what the plugin answers.
func ExampleHandleExec() {
	request := `{
		"apiVersion": "podadmission.kubelet.k8s.io/v1alpha1",
		"kind": "PodAdmissionRequest",
		"uid": "7d2c1b44-0d9f-4c4e-9f5e-3c1f3c0e2a10",
		"pod": {"metadata": {"namespace": "team-a", "name": "web"}, "spec": {"hostNetwork": true}},
		"node": {"name": "node-a"},
		"static": false,
		"attempt": 1
	}`
	if err := plugin.HandleExec(context.Background(), noHostNetwork, strings.NewReader(request), os.Stdout); err != nil {
		fmt.Println(err)
	}
	// Output:
	// {"kind":"PodAdmissionResponse","apiVersion":"podadmission.kubelet.k8s.io/v1alpha1","uid":"7d2c1b44-0d9f-4c4e-9f5e-3c1f3c0e2a10","allowed":false,"reason":"HostNetwork","message":"pods on this node may not use the host network"}
}

func ExampleDenyRetryAfter() {
	resp := plugin.DenyRetryAfter("QuotaExhausted", "the node's GPU quota for team-a is used up", 90*time.Second)
	fmt.Println(resp.Reason, *resp.RetryAfterSeconds)
	// Output:
	// QuotaExhausted 90
}
