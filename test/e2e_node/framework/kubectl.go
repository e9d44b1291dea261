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
	"os"
	"os/exec"
	"strings"
)

// Kubectl runs kubectl, built from the same tree as the kubelet, against
// the cluster with the admin's credentials, and returns its output.
func (c *Cluster) Kubectl(ctx context.Context, args ...string) (string, error) {
	if _, err := os.Stat(c.Binaries.Kubectl); err != nil {
		return "", fmt.Errorf("kubectl (make test-e2e-node builds it): %w", err)
	}
	cmd := exec.CommandContext(ctx, c.Binaries.Kubectl, append([]string{"--kubeconfig=" + c.ControlPlane.AdminKubeconfig}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}
