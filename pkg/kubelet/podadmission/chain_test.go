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
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	podadmissionv1alpha1 "github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1"
)

// newTestChain loads config from a file and creates its chain with factory.
func newTestChain(t *testing.T, config string, factory *fakeFactory) *Chain {
	t.Helper()
	file := filepath.Join(configDir(t), "config.yaml")
	writeConfig(t, file, config)
	cfg, err := LoadConfig(file)
	require.NoError(t, err)
	chain, err := newChain(cfg, factory.New, "/bin-dir")
	require.NoError(t, err)
	t.Cleanup(func() { _ = chain.Close() })
	return chain
}

func evaluate(chain *Chain, pod *v1.Pod) ChainResult {
	return chain.Evaluate(context.Background(), EvaluationRequest{Pod: pod, Node: podadmissionv1alpha1.NodeInfo{Name: "node-1"}})
}

func outcomes(result ChainResult) map[string]Outcome {
	out := map[string]Outcome{}
	for _, d := range result.Decisions {
		out[d.Plugin.Name] = d.Outcome
	}
	return out
}

func TestChainRunsInOrderAndFirstRejectionWins(t *testing.T) {
	factory := newFakeFactory()
	factory.set("b", deny("NotSigned", "image registry.example/app is not signed"))
	factory.set("c", deny("Other", "never asked"))
	chain := newTestChain(t, pluginsYAML(execPlugin("a"), execPlugin("b"), execPlugin("c")), factory)

	result := evaluate(chain, testPod("web"))
	require.False(t, result.Admitted())
	assert.Equal(t, "b", result.Rejection.Plugin.Name)
	assert.Equal(t, OutcomeRejected, result.Rejection.Outcome)
	assert.Equal(t, "NotSigned", result.Rejection.PodReason())
	assert.Equal(t, `Pod admission plugin "b" rejected the pod: image registry.example/app is not signed`, result.Rejection.PodMessage())
	assert.Equal(t, map[string]Outcome{"a": OutcomeAllowed, "b": OutcomeRejected}, outcomes(result))
	assert.Equal(t, 1, factory.plugin(t, "a").calls())
	assert.Equal(t, 1, factory.plugin(t, "b").calls())
	assert.Equal(t, 0, factory.plugin(t, "c").calls(), "a plugin after the first rejection is not called")
}

func TestChainAdmitsWhenAllAdmit(t *testing.T) {
	factory := newFakeFactory()
	chain := newTestChain(t, pluginsYAML(execPlugin("a"), execPlugin("b")), factory)
	result := evaluate(chain, testPod("web"))
	assert.True(t, result.Admitted())
	assert.Nil(t, result.Rejection)
	assert.Equal(t, map[string]Outcome{"a": OutcomeAllowed, "b": OutcomeAllowed}, outcomes(result))
}

func TestChainWithoutPluginsAdmits(t *testing.T) {
	result := evaluate(newTestChain(t, configHeader+"plugins: []\n", newFakeFactory()), testPod("web"))
	assert.True(t, result.Admitted())
	assert.Empty(t, result.Decisions)
}

func TestChainAllPluginsShowsEveryDecision(t *testing.T) {
	factory := newFakeFactory()
	factory.set("a", deny("First", ""))
	factory.set("b", deny("Second", ""))
	chain := newTestChain(t, pluginsYAML(execPlugin("a"), execPlugin("b"), execPlugin("c")), factory)
	result := chain.Evaluate(context.Background(), EvaluationRequest{Pod: testPod("web"), AllPlugins: true})
	assert.Equal(t, map[string]Outcome{"a": OutcomeRejected, "b": OutcomeRejected, "c": OutcomeAllowed}, outcomes(result))
	assert.Equal(t, "a", result.Rejection.Plugin.Name, "the first rejection still decides")
	assert.Equal(t, `Pod admission plugin "a" rejected the pod`, result.Rejection.PodMessage())
}

func TestChainRejectionWithoutReason(t *testing.T) {
	factory := newFakeFactory()
	factory.set("a", deny("", ""))
	result := evaluate(newTestChain(t, pluginsYAML(execPlugin("a")), factory), testPod("web"))
	assert.Equal(t, "PodAdmissionRejected", result.Rejection.PodReason())
}

func TestChainMatching(t *testing.T) {
	labelled := testPod("labelled")
	labelled.Labels = map[string]string{"app": "web", "tier": "front"}
	other := testPod("other")
	other.Namespace = "team-a"
	static := staticPod("etcd")

	for name, tc := range map[string]struct {
		match   []string
		matched map[string]bool // pod name -> called
	}{
		"no match section": {
			matched: map[string]bool{"labelled": true, "other": true, "etcd": true},
		},
		"namespaces": {
			match:   []string{"namespaces: [team-a, kube-system]"},
			matched: map[string]bool{"labelled": false, "other": true, "etcd": true},
		},
		"excludeNamespaces": {
			match:   []string{"excludeNamespaces: [kube-system]"},
			matched: map[string]bool{"labelled": true, "other": true, "etcd": false},
		},
		"podSelector matchLabels": {
			match:   []string{"podSelector: {matchLabels: {app: web}}"},
			matched: map[string]bool{"labelled": true, "other": false, "etcd": false},
		},
		"podSelector matchExpressions": {
			match:   []string{"podSelector: {matchExpressions: [{key: tier, operator: NotIn, values: [front]}]}"},
			matched: map[string]bool{"labelled": false, "other": true, "etcd": true},
		},
		"API pods only": {
			match:   []string{"podSource: API"},
			matched: map[string]bool{"labelled": true, "other": true, "etcd": false},
		},
		"static pods only": {
			match:   []string{"podSource: Static"},
			matched: map[string]bool{"labelled": false, "other": false, "etcd": true},
		},
		"every field must match": {
			match:   []string{"namespaces: [default, team-a]", "podSelector: {matchLabels: {app: web}}", "podSource: API"},
			matched: map[string]bool{"labelled": true, "other": false, "etcd": false},
		},
	} {
		t.Run(name, func(t *testing.T) {
			factory := newFakeFactory()
			factory.set("gate", deny("Gated", ""))
			extra := []string{}
			if len(tc.match) > 0 {
				extra = append(extra, "match:")
				for _, m := range tc.match {
					extra = append(extra, "  "+m)
				}
			}
			chain := newTestChain(t, pluginsYAML(execPlugin("gate", extra...)), factory)
			for _, pod := range []*v1.Pod{labelled, other, static} {
				result := evaluate(chain, pod)
				if tc.matched[pod.Name] {
					assert.False(t, result.Admitted(), "%s must be evaluated", pod.Name)
					assert.Equal(t, OutcomeRejected, outcomes(result)["gate"])
				} else {
					assert.True(t, result.Admitted(), "%s must not be evaluated", pod.Name)
					assert.Equal(t, OutcomeNotMatched, outcomes(result)["gate"])
				}
			}
			called := 0
			for _, matched := range tc.matched {
				if matched {
					called++
				}
			}
			assert.Equal(t, called, factory.plugin(t, "gate").calls())
		})
	}
}

func TestChainRequest(t *testing.T) {
	factory := newFakeFactory()
	chain := newTestChain(t, pluginsYAML(execPlugin("a")), factory)
	node := podadmissionv1alpha1.NodeInfo{Name: "node-1", Labels: map[string]string{"zone": "a"}}
	pod := staticPod("etcd")

	chain.Evaluate(context.Background(), EvaluationRequest{Pod: pod, Node: node, Attempt: func(plugin string) int32 {
		assert.Equal(t, "a", plugin)
		return 7
	}})
	first := factory.plugin(t, "a").lastRequest()
	assert.Equal(t, "podadmission.kubelet.k8s.io/v1alpha1", first.APIVersion)
	assert.Equal(t, "PodAdmissionRequest", first.Kind)
	assert.NotEmpty(t, first.UID)
	assert.Same(t, pod, first.Pod)
	assert.Equal(t, node, first.Node)
	assert.True(t, first.Static)
	assert.Equal(t, int32(7), first.Attempt)

	chain.Evaluate(context.Background(), EvaluationRequest{Pod: testPod("web"), Node: node})
	second := factory.plugin(t, "a").lastRequest()
	assert.False(t, second.Static)
	assert.Equal(t, int32(1), second.Attempt, "attempt defaults to 1")
	assert.NotEqual(t, first.UID, second.UID, "every call has its own uid")
}

func TestChainFailurePolicyFail(t *testing.T) {
	factory := newFakeFactory()
	factory.set("a", fail(`exec plugin "a": exit status 3: stderr: cannot read policy`))
	chain := newTestChain(t, pluginsYAML(execPlugin("a"), execPlugin("b")), factory)

	result := evaluate(chain, testPod("web"))
	require.False(t, result.Admitted())
	assert.Equal(t, OutcomeFailed, result.Rejection.Outcome)
	assert.Equal(t, "PodAdmissionPluginFailed", result.Rejection.PodReason())
	assert.Equal(t, `Pod admission plugin "a" failed (failurePolicy Fail): exec plugin "a": exit status 3: stderr: cannot read policy`, result.Rejection.PodMessage())
	assert.Equal(t, 0, factory.plugin(t, "b").calls())
}

func TestChainFailurePolicyIgnore(t *testing.T) {
	factory := newFakeFactory()
	factory.set("a", fail("socket gone"))
	chain := newTestChain(t, pluginsYAML(execPlugin("a", "failurePolicy: Ignore"), execPlugin("b")), factory)

	result := evaluate(chain, testPod("web"))
	assert.True(t, result.Admitted())
	assert.Equal(t, map[string]Outcome{"a": OutcomeFailureIgnored, "b": OutcomeAllowed}, outcomes(result))
	assert.EqualError(t, result.Decisions[0].Err, "socket gone")
	assert.Equal(t, 1, factory.plugin(t, "b").calls())
}

func TestChainNoResponseIsAFailure(t *testing.T) {
	factory := newFakeFactory()
	factory.set("a", func(context.Context, *podadmissionv1alpha1.PodAdmissionRequest) (*podadmissionv1alpha1.PodAdmissionResponse, error) {
		return nil, nil
	})
	result := evaluate(newTestChain(t, pluginsYAML(execPlugin("a")), factory), testPod("web"))
	assert.Equal(t, `Pod admission plugin "a" failed (failurePolicy Fail): the transport returned neither a response nor an error`, result.Rejection.PodMessage())
}

// hang returns a behaviour that ignores ctx and blocks until release is
// closed, like a transport that does not honour its deadline.
func hang(release <-chan struct{}) decideFunc {
	return func(_ context.Context, req *podadmissionv1alpha1.PodAdmissionRequest) (*podadmissionv1alpha1.PodAdmissionResponse, error) {
		<-release
		return &podadmissionv1alpha1.PodAdmissionResponse{UID: req.UID, Allowed: true}, nil
	}
}

func TestChainTimeoutBoundsAPluginThatIgnoresItsDeadline(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	factory := newFakeFactory()
	factory.set("slow", hang(release))
	chain := newTestChain(t, pluginsYAML(execPlugin("slow", "timeout: 100ms")), factory)

	start := time.Now()
	result := evaluate(chain, testPod("web"))
	elapsed := time.Since(start)
	require.False(t, result.Admitted())
	assert.Equal(t, `Pod admission plugin "slow" failed (failurePolicy Fail): no answer within the timeout of 100ms`, result.Rejection.PodMessage())
	assert.GreaterOrEqual(t, elapsed, 100*time.Millisecond)
	assert.Less(t, elapsed, 2*time.Second)
}

func TestChainTimeoutOfATransportThatHonoursItsDeadline(t *testing.T) {
	factory := newFakeFactory()
	factory.set("slow", func(ctx context.Context, _ *podadmissionv1alpha1.PodAdmissionRequest) (*podadmissionv1alpha1.PodAdmissionResponse, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	result := evaluate(newTestChain(t, pluginsYAML(execPlugin("slow", "timeout: 50ms")), factory), testPod("web"))
	// Whether the transport returns first or the chain's deadline fires
	// first, the chain says why, in its words.
	assert.Equal(t, `Pod admission plugin "slow" failed (failurePolicy Fail): no answer within the timeout of 50ms`, result.Rejection.PodMessage())
}

// A plugin that reports running out of time before the chain's deadline
// (the deadline travels to a GRPC plugin) timed out too.
func TestChainTimeoutReportedByThePlugin(t *testing.T) {
	factory := newFakeFactory()
	factory.set("slow", func(context.Context, *podadmissionv1alpha1.PodAdmissionRequest) (*podadmissionv1alpha1.PodAdmissionResponse, error) {
		return nil, fmt.Errorf("the plugin ran out of time (busy): %w", context.DeadlineExceeded)
	})
	result := evaluate(newTestChain(t, pluginsYAML(execPlugin("slow", "timeout: 2s")), factory), testPod("web"))
	assert.Equal(t, `Pod admission plugin "slow" failed (failurePolicy Fail): no answer within the timeout of 2s`, result.Rejection.PodMessage())
}

// The message of a timed-out call is the chain's; what the transport kept
// for the log (an Exec plugin's stderr) is still there.
func TestChainTimeoutKeepsTheTransportsStderr(t *testing.T) {
	factory := newFakeFactory()
	factory.set("slow", func(ctx context.Context, _ *podadmissionv1alpha1.PodAdmissionRequest) (*podadmissionv1alpha1.PodAdmissionResponse, error) {
		<-ctx.Done()
		return nil, &stderrError{msg: "stopped", stderr: `"still thinking"`}
	})
	result := evaluate(newTestChain(t, pluginsYAML(execPlugin("slow", "timeout: 50ms")), factory), testPod("web"))
	assert.Equal(t, `Pod admission plugin "slow" failed (failurePolicy Fail): no answer within the timeout of 50ms`, result.Rejection.PodMessage())
	assert.Equal(t, `"still thinking"`, PluginStderr(result.Rejection.Err))
}

// The log line of a stopped call keeps what the transport said and the
// plugin's stderr, which its message, the chain's, leaves out.
func TestChainLogsWhatAStoppedTransportSaid(t *testing.T) {
	factory := newFakeFactory()
	factory.set("slow", func(context.Context, *podadmissionv1alpha1.PodAdmissionRequest) (*podadmissionv1alpha1.PodAdmissionResponse, error) {
		return nil, &stderrError{msg: fmt.Sprintf("the plugin ran out of time (busy): %v", context.DeadlineExceeded), stderr: `"still thinking"`, cause: context.DeadlineExceeded}
	})
	chain := newTestChain(t, pluginsYAML(execPlugin("slow", "timeout: 2s")), factory)
	var lines []string
	logger := funcr.New(func(prefix, args string) { lines = append(lines, args) }, funcr.Options{})
	result := chain.Evaluate(klog.NewContext(context.Background(), logger), EvaluationRequest{Pod: testPod("web")})
	require.Equal(t, `Pod admission plugin "slow" failed (failurePolicy Fail): no answer within the timeout of 2s`, result.Rejection.PodMessage())
	require.Len(t, lines, 1)
	assert.Contains(t, lines[0], `"msg"="Pod admission plugin failed" "error"="no answer within the timeout of 2s"`)
	assert.Contains(t, lines[0], `"transportError"="the plugin ran out of time (busy): context deadline exceeded" "stderr"="\"still thinking\""`)
}

type stderrError struct {
	msg, stderr string
	cause       error
}

func (e *stderrError) Unwrap() error { return e.cause }

func (e *stderrError) Error() string  { return e.msg }
func (e *stderrError) Stderr() string { return e.stderr }

func TestChainCancelledCall(t *testing.T) {
	factory := newFakeFactory()
	chain := newTestChain(t, pluginsYAML(execPlugin("a")), factory)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	factory.plugin(t, "a").setDecide(func(ctx context.Context, _ *podadmissionv1alpha1.PodAdmissionRequest) (*podadmissionv1alpha1.PodAdmissionResponse, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	result := chain.Evaluate(ctx, EvaluationRequest{Pod: testPod("web")})
	require.False(t, result.Admitted())
	assert.Equal(t, `Pod admission plugin "a" failed (failurePolicy Fail): call canceled: context canceled`, result.Rejection.PodMessage())
}

func TestChainConcurrencyCap(t *testing.T) {
	release := make(chan struct{})
	factory := newFakeFactory()
	factory.set("capped", hang(release))
	chain := newTestChain(t, pluginsYAML(execPlugin("capped", "maxConcurrentCalls: 2", "timeout: 30s")), factory)
	plugin := factory.plugin(t, "capped")

	var wg sync.WaitGroup
	results := make([]ChainResult, 5)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = evaluate(chain, testPod("web"))
		}()
	}
	require.Eventually(t, func() bool { return plugin.calls() == 2 }, 5*time.Second, time.Millisecond)
	// The others wait for a slot; give them time to (wrongly) get in.
	time.Sleep(100 * time.Millisecond)
	assert.Equal(t, 2, plugin.calls())
	close(release)
	wg.Wait()
	for _, r := range results {
		assert.True(t, r.Admitted())
	}
	assert.Equal(t, 5, plugin.calls())
	plugin.mu.Lock()
	defer plugin.mu.Unlock()
	assert.Equal(t, 2, plugin.maxInFlight)
}

func TestChainWaitForACallSlotCountsAgainstTheTimeout(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	factory := newFakeFactory()
	factory.set("capped", hang(release))
	chain := newTestChain(t, pluginsYAML(execPlugin("capped", "maxConcurrentCalls: 1", "timeout: 200ms")), factory)

	go evaluate(chain, testPod("holder"))
	require.Eventually(t, func() bool { return factory.plugin(t, "capped").calls() == 1 }, 5*time.Second, time.Millisecond)

	start := time.Now()
	result := evaluate(chain, testPod("waiter"))
	assert.Less(t, time.Since(start), 2*time.Second)
	require.False(t, result.Admitted())
	assert.Equal(t, `Pod admission plugin "capped" failed (failurePolicy Fail): no free call slot within the timeout of 200ms (maxConcurrentCalls: 1)`, result.Rejection.PodMessage())
	assert.Equal(t, 1, factory.plugin(t, "capped").calls(), "the waiting call never reached the plugin")
}

func TestNewChainClosesCreatedPluginsOnError(t *testing.T) {
	factory := newFakeFactory()
	factory.fail["b"] = assert.AnError
	file := filepath.Join(configDir(t), "config.yaml")
	writeConfig(t, file, pluginsYAML(execPlugin("a"), execPlugin("b")))
	cfg, err := LoadConfig(file)
	require.NoError(t, err)

	_, err = newChain(cfg, factory.New, "/bin-dir")
	require.EqualError(t, err, file+`: plugins[1]: plugin "b": `+assert.AnError.Error())
	assert.True(t, factory.plugin(t, "a").isClosed())
}
