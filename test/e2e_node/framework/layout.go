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
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Machine-wide locations: only one node e2e cluster runs per machine
// (the kubelet writes fixed host paths), so they are fixed too.
const (
	// StateRoot holds the data of the running cluster (etcd, kubelet root,
	// containerd root, plugin configuration); removed by teardown.
	StateRoot = "/var/lib/podadmission-e2e"
	// SocketRoot holds the unix sockets, in a short path because a socket
	// path is limited to 107 bytes.
	SocketRoot = "/run/podadmission-e2e"
	// lockPath is held for the life of a run.
	lockPath = "/run/podadmission-e2e.lock"
)

// Layout is where one run keeps things.
type Layout struct {
	// RunID names the run: its start time and runtime mode.
	RunID string
	// Artifacts is <artifacts root>/<RunID>: logs, configuration copies,
	// the CRI journal and dumps; kept after the run.
	Artifacts string
	Logs      string
	State     string
	PKI       string
	Sockets   string
}

func newLayout(artifactsRoot, mode string) (Layout, error) {
	runID := fmt.Sprintf("%s-%s", time.Now().Format("20060102-150405"), mode)
	artifacts, err := filepath.Abs(filepath.Join(artifactsRoot, runID))
	if err != nil {
		return Layout{}, err
	}
	l := Layout{
		RunID:     runID,
		Artifacts: artifacts,
		Logs:      filepath.Join(artifacts, "logs"),
		State:     StateRoot,
		PKI:       filepath.Join(StateRoot, "pki"),
		Sockets:   SocketRoot,
	}
	for _, dir := range []string{l.Logs, l.State, l.PKI, l.Sockets} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return Layout{}, err
		}
	}
	return l, nil
}

// StatePath is a path inside the state directory.
func (l Layout) StatePath(elem ...string) string {
	return filepath.Join(append([]string{l.State}, elem...)...)
}

// SocketPath is a path inside the socket directory.
func (l Layout) SocketPath(name string) string {
	return filepath.Join(l.Sockets, name)
}

// LogPath is the log file of a component.
func (l Layout) LogPath(component string) string {
	return filepath.Join(l.Logs, component+".log")
}

// ArtifactPath is a path inside the run's artifacts directory.
func (l Layout) ArtifactPath(name string) string {
	return filepath.Join(l.Artifacts, name)
}
