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

// Command sdkquantity is an SDK Exec plugin that does arithmetic on the
// pod's quantities: it parses the SDK's Quantity text with apimachinery's
// resource.ParseQuantity, the cheap way to arithmetic (package corepod is
// the dear one). build/bench-instructions.sh counts it next to sdkexec.
package main

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/podadmission/podadmission/pkg/plugin"
	"github.com/podadmission/podadmission/pkg/plugin/corev1"
)

// maxCPU is the most CPU a container may request.
var maxCPU = resource.MustParse("4")

func main() {
	plugin.RunExec(limitCPU)
}

func limitCPU(_ context.Context, req *plugin.Request) (*plugin.Response, error) {
	for _, c := range req.Pod.Spec.Containers {
		text, ok := c.Resources.Requests[corev1.ResourceCPU]
		if !ok {
			continue
		}
		cpu, err := resource.ParseQuantity(text.String())
		if err != nil {
			return nil, fmt.Errorf("container %s: %w", c.Name, err)
		}
		if cpu.Cmp(maxCPU) > 0 {
			return plugin.Deny("TooMuchCPU", fmt.Sprintf("container %s requests %s CPUs, more than %s", c.Name, &cpu, &maxCPU)), nil
		}
	}
	return plugin.Allow(), nil
}
