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
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// NRIPlugin is the NRI comparison's NRI plugin (test/e2e_node/nriplugin),
// registered with containerd 2.x's NRI as an external plugin.
type NRIPlugin struct {
	// Name is the plugin's NRI name (what required_plugins names).
	Name string
	// ReleaseDir releases a held pod with a file <namespace>.<name>.
	ReleaseDir string
	// LogPath has one JSON line per call.
	LogPath string
	process *Process
}

// NRICall is one line of the plugin's log.
type NRICall struct {
	Time      time.Time `json:"time"`
	Hook      string    `json:"hook"`
	Namespace string    `json:"namespace"`
	Name      string    `json:"name"`
	UID       string    `json:"uid"`
	Container string    `json:"container"`
	Decision  string    `json:"decision"`
}

// StartNRIPlugin starts the NRI plugin and waits until containerd has
// registered it (its Configure call). Teardown stops it.
func (c *Cluster) StartNRIPlugin(ctx context.Context, name string) (*NRIPlugin, error) {
	rt, ok := c.Runtime.(*containerdRuntime)
	if !ok || rt.NRISocket() == "" {
		return nil, fmt.Errorf("the %s runtime mode has no NRI: use %s", c.Runtime.Mode(), ContainerdMode)
	}
	p := &NRIPlugin{
		Name:       name,
		ReleaseDir: c.Layout.StatePath("nri-release"),
		LogPath:    c.Layout.ArtifactPath("nri-plugin-calls.jsonl"),
	}
	if err := os.MkdirAll(p.ReleaseDir, 0o755); err != nil {
		return nil, err
	}
	before, _ := p.Calls()
	proc, err := StartProcess(ProcessSpec{
		Name:    "nri-plugin",
		Binary:  c.Binaries.NRIPlugin,
		Args:    []string{"--socket=" + rt.NRISocket(), "--name=" + name, "--release-dir=" + p.ReleaseDir, "--log=" + p.LogPath},
		LogPath: c.Layout.LogPath("nri-plugin"),
	})
	if err != nil {
		return nil, err
	}
	p.process = proc
	// NRI closes a plugin that timed out, and the plugin exits: a test's
	// doing, not a component's failure.
	c.expendable = append(c.expendable, proc)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err = proc.WaitReady(ctx, func(context.Context) error {
		calls, err := p.Calls()
		if err != nil {
			return err
		}
		for _, call := range calls[len(before):] {
			if call.Hook == "configure" {
				return nil
			}
		}
		return errors.New("not registered with containerd's NRI yet")
	})
	return p, err
}

// Release lets the held pod namespace/name be created.
func (p *NRIPlugin) Release(namespace, name string) error {
	return os.WriteFile(filepath.Join(p.ReleaseDir, namespace+"."+name), nil, 0o644)
}

// Running says whether the plugin process is alive: containerd's NRI
// closes a plugin that timed out, and the plugin then exits.
func (p *NRIPlugin) Running() bool { return p.process.Running() }

// Stop stops the plugin: NRI then has it no more.
func (p *NRIPlugin) Stop() { p.process.Stop(5 * time.Second) }

// Calls reads the plugin's log.
func (p *NRIPlugin) Calls() ([]NRICall, error) {
	f, err := os.Open(p.LogPath)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	defer f.Close()
	var calls []NRICall
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		var call NRICall
		if err := json.Unmarshal(scanner.Bytes(), &call); err != nil {
			return nil, fmt.Errorf("%s: %w", p.LogPath, err)
		}
		calls = append(calls, call)
	}
	return calls, scanner.Err()
}
