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
	"time"
)

// StartGRPCPlugin starts the test plugin as a GRPC plugin daemon named
// name, serving on a unix socket in the run's socket directory, and waits
// for the socket. It returns the endpoint for the plugin's configuration.
// Teardown stops it with the rest of the cluster.
func (c *Cluster) StartGRPCPlugin(ctx context.Context, name string, args ...string) (string, error) {
	socket := c.Layout.SocketPath(name + ".sock")
	endpoint := "unix://" + socket
	_ = os.Remove(socket)
	p, err := StartProcess(ProcessSpec{
		Name:    "plugin-" + name,
		Binary:  c.Binaries.TestPlugin,
		Args:    append([]string{"--serve=" + endpoint}, args...),
		LogPath: c.Layout.LogPath("plugin-" + name),
	})
	if err != nil {
		return "", err
	}
	c.processes = append(c.processes, p)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err = p.WaitReady(ctx, func(context.Context) error {
		if _, err := os.Stat(socket); err != nil {
			return fmt.Errorf("no socket yet: %w", err)
		}
		return nil
	})
	return endpoint, err
}
