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

package podadmission

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/kubernetes/pkg/kubelet/checkpointmanager/checksum"
	kubecontainer "k8s.io/kubernetes/pkg/kubelet/container"
)

// TestGarbageCheckpointFailsClosed: a checkpoint the kubelet cannot use
// is logged, and every pod counts as having no record: what the runtime
// started is admitted, an ephemeral container that never ran goes to the
// plugins. The kubelet neither crashes nor refuses to start.
func TestGarbageCheckpointFailsClosed(t *testing.T) {
	for name, tc := range map[string]struct {
		content string
		wantLog string
	}{
		"not JSON":          {content: "\x00\x01garbage", wantLog: "invalid character"},
		"truncated":         {content: `{"data":"{\"pods\":{\"web-uid\":{\"app\":\"reg`, wantLog: "unexpected end of JSON input"},
		"checksum mismatch": {content: `{"data":"{\"pods\":{\"web-uid\":{\"debug\":\"busybox\"}}}","checksum":1}`, wantLog: "checkpoint is corrupted"},
		"unknown field":     {content: `{"data":"{}","checksum":1,"extra":true}`, wantLog: `unknown field \"extra\"`},
		"bad entry":         {content: checkpointOf(t, `{"pods":{"web-uid":null}}`), wantLog: "an entry without a pod UID or containers"},
		"unknown data":      {content: checkpointOf(t, `{"pods":{},"admitted":true}`), wantLog: `data: unknown field \"admitted\"`},
	} {
		t.Run(name, func(t *testing.T) {
			state := stateDir(t)
			require.NoError(t, os.MkdirAll(state, 0o700))
			path := filepath.Join(state, AdmittedCheckpointName)
			require.NoError(t, os.WriteFile(path, []byte(tc.content), 0o600))

			logs := captureLogs(t)
			tm := newTestManager(t, pluginsYAML(execPlugin("policy")), func(f *fakeFactory, opts *Options) {
				opts.StateDir = state
				f.set("policy", deny("No", "no"))
			})
			assert.Contains(t, logs.String(), "Pod admission cannot use its checkpoint of admitted containers")
			assert.Contains(t, logs.String(), path)
			assert.Contains(t, logs.String(), tc.wantLog)

			pod := withEphemeral(appPod("web"), "debug", "busybox")
			runnable, held := tm.AdmitContainers(context.Background(), pod, runtimeStatus(pod, "app", "sidecar"))
			require.Len(t, held, 1, "the ephemeral container is not taken for admitted")
			assert.Equal(t, "debug", held[0].Name)
			assert.Equal(t, pod.Spec.Containers, runnable.Spec.Containers, "what runs keeps running")

			// The next write replaces the garbage.
			_, held = tm.AdmitContainers(context.Background(), appPod("other"), &kubecontainer.PodStatus{})
			require.Empty(t, held)
			pods, err := newAdmittedStore(openState(t, state)).load()
			require.NoError(t, err)
			assert.Contains(t, pods, appPod("other").UID)
		})
	}
}

// checkpointOf is a checkpoint with a valid checksum of data.
func checkpointOf(t *testing.T, data string) string {
	t.Helper()
	cp := &stateCheckpoint{Data: data}
	cp.Checksum = checksum.New(data)
	blob, err := cp.MarshalCheckpoint()
	require.NoError(t, err)
	return string(blob)
}

func TestCheckpointInAnUntrustedPlaceIsNotUsed(t *testing.T) {
	state := stateDir(t)
	require.NoError(t, os.MkdirAll(state, 0o700))
	path := filepath.Join(state, AdmittedCheckpointName)
	require.NoError(t, os.WriteFile(path, []byte(checkpointOf(t, `{"pods":{"web-uid":{"debug":"busybox"}}}`)), 0o600))
	require.NoError(t, os.Chmod(path, 0o666))

	_, err := newAdmittedStore(openState(t, state)).load()
	require.ErrorContains(t, err, path)
	assert.ErrorContains(t, err, "writable")

	require.NoError(t, os.Chmod(state, 0o777))
	_, err = NewManager(Options{ConfigPath: configDir(t), NodeName: "node-1", StateDir: state, newPlugin: newFakeFactory().New})
	require.ErrorContains(t, err, "pod admission: state directory: ")
	assert.ErrorContains(t, err, state)
}

// openState opens the state directory dir.
func openState(t *testing.T, dir string) *stateDirectory {
	t.Helper()
	state, err := openStateDir(dir)
	require.NoError(t, err)
	return state
}

// captureLogs sends klog's global logger to a buffer until t ends.
func captureLogs(t *testing.T) fmt.Stringer {
	t.Helper()
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true), ktesting.Verbosity(2)))
	klog.SetLoggerWithOptions(logger)
	t.Cleanup(klog.ClearLogger)
	underlier, ok := logger.GetSink().(ktesting.Underlier)
	require.True(t, ok)
	return logBuffer{underlier}
}

type logBuffer struct{ underlier ktesting.Underlier }

func (b logBuffer) String() string { return b.underlier.GetBuffer().String() }
