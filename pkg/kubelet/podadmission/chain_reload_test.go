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
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/utils/ptr"

	podadmissionv1alpha1 "github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1"
	"github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1/protocol"
)

// loadTestConfig loads config from a new file.
func loadTestConfig(t *testing.T, config string) *Config {
	t.Helper()
	file := filepath.Join(configDir(t), "config.yaml")
	writeConfig(t, file, config)
	cfg, err := LoadConfig(file)
	require.NoError(t, err)
	return cfg
}

// inFlightCounter counts the calls in flight to every plugin it is the
// behaviour of, whatever instance they go to, until release is closed.
type inFlightCounter struct {
	now, max atomic.Int32
	release  chan struct{}
}

func (c *inFlightCounter) decide(_ context.Context, req *podadmissionv1alpha1.PodAdmissionRequest) (*podadmissionv1alpha1.PodAdmissionResponse, error) {
	n := c.now.Add(1)
	defer c.now.Add(-1)
	for old := c.max.Load(); n > old && !c.max.CompareAndSwap(old, n); old = c.max.Load() {
	}
	<-c.release
	return &podadmissionv1alpha1.PodAdmissionResponse{UID: req.UID, Allowed: true}, nil
}

// startEvaluations evaluates n pods on chain in the background, as the
// Manager does (acquire, evaluate, release).
func startEvaluations(chain *Chain, n int, wg *sync.WaitGroup) {
	for range n {
		wg.Go(func() {
			if chain.acquire() {
				defer chain.release()
				evaluate(chain, testPod("web"))
			}
		})
	}
}

// Case 6 of issue 12: the concurrency cap restarted with every reload, so
// that reload churn let twice the cap of calls through.
func TestConcurrencyCapIsPerPluginNameAcrossReloads(t *testing.T) {
	counter := &inFlightCounter{release: make(chan struct{})}
	factory := newFakeFactory()
	factory.set("capped", counter.decide)
	first, err := newChain(loadTestConfig(t, pluginsYAML(execPlugin("capped", "maxConcurrentCalls: 4", "timeout: 30s"))), factory.New, "/bin-dir")
	require.NoError(t, err)
	var wg sync.WaitGroup
	startEvaluations(first, 6, &wg)
	require.Eventually(t, func() bool { return counter.now.Load() == 4 }, 5*time.Second, time.Millisecond)

	// A reload changes the plugin (a new instance) and raises its cap to 6;
	// another lowers it to 2. Calls of every configuration share the slots.
	second, err := newChainReusing(loadTestConfig(t, pluginsYAML(execPlugin("capped", "maxConcurrentCalls: 6", "timeout: 29s"))), first, factory.New, "/bin-dir", nil)
	require.NoError(t, err)
	startEvaluations(second, 6, &wg)
	third, err := newChainReusing(loadTestConfig(t, pluginsYAML(execPlugin("capped", "maxConcurrentCalls: 2", "timeout: 28s"))), second, factory.New, "/bin-dir", nil)
	require.NoError(t, err)
	startEvaluations(third, 6, &wg)
	require.Eventually(t, func() bool { return counter.now.Load() == 6 }, 5*time.Second, time.Millisecond)
	time.Sleep(100 * time.Millisecond) // time for calls to (wrongly) get past the cap
	assert.Equal(t, int32(6), counter.max.Load(), "never more calls in flight than the largest cap in use")

	close(counter.release)
	wg.Wait()
	assert.Equal(t, int32(6), counter.max.Load())
	for _, c := range []*Chain{first, second, third} {
		require.NoError(t, c.Close())
	}
}

// Case 6 of issue 12: a reload closed a plugin an evaluation of an older
// configuration was still using.
func TestPluginIsClosedOnlyWhenNoEvaluationUsesIt(t *testing.T) {
	release := make(chan struct{})
	factory := newFakeFactory()
	factory.set("kept", hang(release))
	config := pluginsYAML(execPlugin("kept", "timeout: 30s"))
	first, err := newChain(loadTestConfig(t, config), factory.New, "/bin-dir")
	require.NoError(t, err)
	plugin := factory.plugin(t, "kept")
	var wg sync.WaitGroup
	startEvaluations(first, 1, &wg)
	require.Eventually(t, func() bool { return plugin.calls() == 1 }, 5*time.Second, time.Millisecond)

	// A reload that keeps the plugin, then one that drops it, each retiring
	// the chain before, as Manager.reload does.
	second, err := newChainReusing(loadTestConfig(t, config), first, factory.New, "/bin-dir", nil)
	require.NoError(t, err)
	firstRetired := make(chan error, 1)
	go func() { firstRetired <- first.Close() }()
	third, err := newChainReusing(loadTestConfig(t, pluginsYAML(execPlugin("other"))), second, factory.New, "/bin-dir", nil)
	require.NoError(t, err)
	require.NoError(t, second.Close())
	assert.False(t, plugin.isClosed(), "the evaluation of the first configuration still uses the plugin")

	close(release)
	wg.Wait()
	require.NoError(t, <-firstRetired)
	assert.True(t, plugin.isClosed(), "closed once no evaluation uses it")
	assert.Equal(t, 1, factory.creations("kept"), "the unchanged plugin was kept, not created again")
	require.NoError(t, third.Close())
}

// A chain made outside a Manager (podadmctl's) is closed as the Manager
// closes its chains: a plugin with a call in flight is closed once the
// call ends, not under it.
func TestClosingAChainWaitsForTheCallsInFlight(t *testing.T) {
	release := make(chan struct{})
	factory := newFakeFactory()
	factory.set("slow", hang(release))
	chain, err := newChain(loadTestConfig(t, pluginsYAML(execPlugin("slow", "timeout: 30s"))), factory.New, "/bin-dir")
	require.NoError(t, err)
	plugin := factory.plugin(t, "slow")
	var wg sync.WaitGroup
	wg.Go(func() { evaluate(chain, testPod("web")) }) // as podadmctl evaluates
	require.Eventually(t, func() bool { return plugin.calls() == 1 }, 5*time.Second, time.Millisecond)

	require.NoError(t, chain.Close())
	assert.False(t, plugin.isClosed(), "a call is in flight")
	close(release)
	wg.Wait()
	assert.True(t, plugin.isClosed(), "closed once its call ended")
	require.NoError(t, chain.Close(), "a second Close is a no-op")
}

// Case 5 of issue 12: retryAfterSeconds 0 meant "evaluate at every sync".
func TestRetryAfterZeroMeansTheKubeletsBackoff(t *testing.T) {
	for seconds, want := range map[int32]*time.Duration{
		0:  nil,
		30: ptr.To(30 * time.Second),
	} {
		factory := newFakeFactory()
		factory.set("a", denyRetryAfter("Later", seconds))
		result := evaluate(newTestChain(t, pluginsYAML(execPlugin("a")), factory), testPod("web"))
		assert.Equal(t, want, result.Rejection.RetryAfter, "retryAfterSeconds %d", seconds)
	}
}

// Case 7 of issue 12: plugin text went into status.message verbatim.
func TestPodMessageIsSanitizedAndCapped(t *testing.T) {
	factory := newFakeFactory()
	factory.set("noisy", deny("Noisy", "\x1b[31mred\x1b[0m line one\nline two\r\n\ttabbed\x07 \u202eevil"))
	result := evaluate(newTestChain(t, pluginsYAML(execPlugin("noisy")), factory), testPod("web"))
	assert.Equal(t, `Pod admission plugin "noisy" rejected the pod: red line one line two tabbed evil`, result.Rejection.PodMessage())

	factory.set("long", deny("Long", strings.Repeat("é", protocol.MaxMessageLength/2)))
	result = evaluate(newTestChain(t, pluginsYAML(execPlugin("long")), factory), testPod("web"))
	message := result.Rejection.PodMessage()
	assert.LessOrEqual(t, len(message), protocol.MaxMessageLength)
	assert.True(t, strings.HasSuffix(message, "é (...)"), "cut on a character boundary and marked: %q", message[len(message)-10:])

	factory.set("failing", fail("dial: \x1b]0;title\x07connection refused\n"))
	result = evaluate(newTestChain(t, pluginsYAML(execPlugin("failing")), factory), testPod("web"))
	assert.Equal(t, `Pod admission plugin "failing" failed (failurePolicy Fail): dial: connection refused`, result.Rejection.PodMessage())
}
