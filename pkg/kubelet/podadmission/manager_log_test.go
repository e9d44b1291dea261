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
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"

	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/transport"
)

// A pod held for hours is evaluated again and again with the same answer:
// at the kubelet's usual verbosity (2) the log says when a hold begins or
// its decision changes, not every call and every back-off wake.
func TestAnUnchangedHoldIsNotLoggedAtV2(t *testing.T) {
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true), ktesting.Verbosity(2)))
	ctx := klog.NewContext(t.Context(), logger)
	underlier, ok := logger.GetSink().(ktesting.Underlier)
	require.True(t, ok)
	logs := logBuffer{underlier}
	wakes := newWakeRecorder()
	tm := newTestManager(t, pluginsYAML(execPlugin("gate")), func(f *fakeFactory, opts *Options) {
		f.set("gate", deny("NotReady", "the network policy is not in place"))
		opts.WakePod = wakes.wake
	})
	tm.Start(ctx)
	plugin := tm.factory.plugin(t, "gate")
	pod := testPod("web")
	holds := func() int { return strings.Count(logs.String(), "Pod admission holds a pod Pending") }
	admit := func() bool {
		result, _ := tm.SoftAdmit(ctx, &lifecycle.PodAdmitAttributes{Pod: pod})
		return result.Admit
	}

	admitted := admit()
	require.False(t, admitted)
	assert.Equal(t, 1, holds(), "the hold's beginning is logged")
	assert.Contains(t, logs.String(), `rejected the pod: the network policy is not in place"`)

	for i := range 3 {
		tm.clock.Step(maxBackoff)
		require.Eventually(t, func() bool { return wakes.count(pod.UID) == i+1 }, 5*time.Second, time.Millisecond, "the back-off wakes the pod")
		require.True(t, tm.due(pod))
		admitted = admit()
		require.False(t, admitted)
	}
	assert.Equal(t, 4, plugin.calls(), "the plugin was called again at each expired back-off")
	assert.Equal(t, 1, holds(), "an unchanged decision is not logged at V(2)")
	assert.NotContains(t, logs.String(), "Pod admission plugin rejected pod", "a call's rejection is logged at V(4)")
	assert.NotContains(t, logs.String(), `cause="backoff"`, "a back-off wake is logged at V(4)")

	plugin.setDecide(deny("NotReady", "the network policy is being written"))
	tm.clock.Step(maxBackoff)
	require.Eventually(t, func() bool { return wakes.count(pod.UID) == 4 }, 5*time.Second, time.Millisecond)
	admitted = admit()
	require.False(t, admitted)
	assert.Equal(t, 2, holds(), "a changed message is logged at V(2)")
	assert.Contains(t, logs.String(), `rejected the pod: the network policy is being written"`)

	plugin.reevaluations <- transport.Reevaluation{PodUIDs: []types.UID{pod.UID}}
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), `cause="push"`) }, 5*time.Second, time.Millisecond,
		"a push's wake is logged at V(2)")
}
