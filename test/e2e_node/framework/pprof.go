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
	"io"
	"os"
	"time"
)

// KubeletCPUProfile records the kubelet's CPU profile for d (its
// /debug/pprof/profile handler, on by default) into the run's artifacts as
// name, and returns the file's path: `go tool pprof -top KUBELET FILE`
// tells where the kubelet spent its CPU in a benchmark's window.
func (c *Cluster) KubeletCPUProfile(ctx context.Context, d time.Duration, name string) (string, error) {
	seconds := int(d.Round(time.Second).Seconds())
	if seconds < 1 {
		return "", fmt.Errorf("a CPU profile of %s: want at least 1s", d)
	}
	body, err := c.kubeletGet(ctx, fmt.Sprintf("/debug/pprof/profile?seconds=%d", seconds), d+time.Minute)
	if err != nil {
		return "", fmt.Errorf("the kubelet's CPU profile: %w", err)
	}
	defer body.Close()
	path := c.Layout.ArtifactPath(name)
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(f, body); err != nil {
		f.Close()
		return "", fmt.Errorf("the kubelet's CPU profile: %w", err)
	}
	return path, f.Close()
}
