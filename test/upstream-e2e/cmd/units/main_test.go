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
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A keeper whose process ended after the unit was started again leaves the
// new process's state alone: the suite's "systemctl kill" then "systemctl
// start" of the kubelet raced that way, and list-units found no kubelet.
func TestRecordExitKeepsTheNextProcessState(t *testing.T) {
	t.Setenv("UNITS_STATE_DIR", t.TempDir())
	const name = "kubelet-1.service"
	require.NoError(t, os.WriteFile(statePath(name, "pid"), []byte("200"), 0o644))

	require.NoError(t, recordExit(name, 100, "0"))

	data, err := os.ReadFile(statePath(name, "pid"))
	require.NoError(t, err)
	assert.Equal(t, "200", string(data), "the new process's pid file")
	assert.NoFileExists(t, statePath(name, "exit"))
}

func TestRecordExitOfTheCurrentProcess(t *testing.T) {
	t.Setenv("UNITS_STATE_DIR", t.TempDir())
	const name = "kubelet-1.service"
	require.NoError(t, os.WriteFile(statePath(name, "pid"), []byte("100"), 0o644))

	require.NoError(t, recordExit(name, 100, "signal: terminated"))

	assert.NoFileExists(t, statePath(name, "pid"))
	data, err := os.ReadFile(statePath(name, "exit"))
	require.NoError(t, err)
	assert.Equal(t, "signal: terminated\n", string(data))
}

// start waits for the previous keeper to record its process's end before
// it starts another, and says so when it never does.
func TestStartWaitsForThePreviousKeeper(t *testing.T) {
	t.Setenv("UNITS_STATE_DIR", t.TempDir())
	const name = "kubelet-1.service"
	require.NoError(t, os.WriteFile(statePath(name, "pid"), []byte("100"), 0o644))

	err := start(name)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the keeper of its previous process did not record its end")
}
