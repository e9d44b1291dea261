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

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// args are run.sh's arguments, in dir.
func args(dir string, extra ...string) []string {
	return append([]string{
		"-version", "3",
		"-config", filepath.Join(dir, "config.toml"),
		"-root", "/r/root", "-state", "/r/state", "-socket", "/run/containerd/containerd.sock",
		"-shim", "/b/containerd-shim-runc-v2", "-runc", "/b/runc", "-runc-root", "/r/runc",
		"-cni-conf-dir", dir, "-cdi-spec-dir", "/var/run/cdi", "-sandbox-image", "registry.k8s.io/pause:3.10.2",
		"-nri-socket", "/r/nri.sock", "-nri-plugin-dir", "/r/nri/plugins", "-nri-plugin-config-dir", "/r/nri/conf.d",
		"-cni-config", filepath.Join(dir, "10-upstream-e2e.conflist"), "-cni-name", "upstream-e2e",
		"-cni-bridge", "upstreame2e0", "-cni-subnet", "10.100.0.0/24", "-cni-ipam-dir", "/r/ipam",
	}, extra...)
}

func TestExtraRuntimeHandlers(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, run(args(dir, "-extra-runtime-handlers", "test-handler,second")))
	config, err := os.ReadFile(filepath.Join(dir, "config.toml"))
	require.NoError(t, err)
	for _, h := range []string{"runc", "test-handler", "second"} {
		assert.Contains(t, string(config), `[plugins."io.containerd.cri.v1.runtime".containerd.runtimes.`+h+`]`)
		assert.Contains(t, string(config), `[plugins."io.containerd.cri.v1.runtime".containerd.runtimes.`+h+`.options]`)
	}
	assert.Contains(t, string(config), `address = "/run/containerd/containerd.sock"`)

	require.NoError(t, run(args(dir, "-extra-runtime-handlers", "")))
	config, err = os.ReadFile(filepath.Join(dir, "config.toml"))
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(string(config), "runtime_type = "))
}

func TestExtraRuntimeHandlersRefusesABadName(t *testing.T) {
	dir := t.TempDir()
	for _, v := range []string{"test_handler", "test-handler,", "a, b", "runc"} {
		err := run(args(dir, "-extra-runtime-handlers", v))
		assert.ErrorContains(t, err, "runtime handler", v)
	}
	_, err := os.Stat(filepath.Join(dir, "config.toml"))
	assert.ErrorIs(t, err, os.ErrNotExist, "a refused configuration is not written")
}
