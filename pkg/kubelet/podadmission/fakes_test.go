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
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"
	kubetypes "k8s.io/kubernetes/pkg/kubelet/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	configv1alpha1 "github.com/podadmission/podadmission/pkg/apis/config/v1alpha1"
	podadmissionv1alpha1 "github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/transport"
)

// decideFunc is a fake plugin's behaviour for one call.
type decideFunc func(ctx context.Context, req *podadmissionv1alpha1.PodAdmissionRequest) (*podadmissionv1alpha1.PodAdmissionResponse, error)

func allow() decideFunc {
	return func(_ context.Context, req *podadmissionv1alpha1.PodAdmissionRequest) (*podadmissionv1alpha1.PodAdmissionResponse, error) {
		return &podadmissionv1alpha1.PodAdmissionResponse{UID: req.UID, Allowed: true}, nil
	}
}

func deny(reason, message string) decideFunc {
	return func(_ context.Context, req *podadmissionv1alpha1.PodAdmissionRequest) (*podadmissionv1alpha1.PodAdmissionResponse, error) {
		return &podadmissionv1alpha1.PodAdmissionResponse{UID: req.UID, Reason: reason, Message: message}, nil
	}
}

func denyRetryAfter(reason string, seconds int32) decideFunc {
	return func(_ context.Context, req *podadmissionv1alpha1.PodAdmissionRequest) (*podadmissionv1alpha1.PodAdmissionResponse, error) {
		return &podadmissionv1alpha1.PodAdmissionResponse{UID: req.UID, Reason: reason, RetryAfterSeconds: ptr.To(seconds)}, nil
	}
}

func fail(msg string) decideFunc {
	return func(context.Context, *podadmissionv1alpha1.PodAdmissionRequest) (*podadmissionv1alpha1.PodAdmissionResponse, error) {
		return nil, errors.New(msg)
	}
}

// fakePlugin is an in-process Plugin (and Reevaluator) that records its calls.
type fakePlugin struct {
	name string

	mu          sync.Mutex
	decide      decideFunc
	requests    []*podadmissionv1alpha1.PodAdmissionRequest
	inFlight    int
	maxInFlight int
	closed      bool

	reevaluations chan transport.Reevaluation
}

func (p *fakePlugin) Admit(ctx context.Context, req *podadmissionv1alpha1.PodAdmissionRequest) (*podadmissionv1alpha1.PodAdmissionResponse, error) {
	p.mu.Lock()
	p.requests = append(p.requests, req)
	p.inFlight++
	p.maxInFlight = max(p.maxInFlight, p.inFlight)
	decide := p.decide
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.inFlight--
		p.mu.Unlock()
	}()
	return decide(ctx, req)
}

func (p *fakePlugin) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed {
		p.closed = true
		close(p.reevaluations)
	}
	return nil
}

func (p *fakePlugin) Reevaluations() <-chan transport.Reevaluation { return p.reevaluations }

func (p *fakePlugin) setDecide(d decideFunc) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.decide = d
}

func (p *fakePlugin) calls() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.requests)
}

func (p *fakePlugin) lastRequest() *podadmissionv1alpha1.PodAdmissionRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.requests) == 0 {
		return nil
	}
	return p.requests[len(p.requests)-1]
}

func (p *fakePlugin) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

// fakeFactory creates fakePlugins; a plugin's first behaviour comes from
// decisions (allow when unset). It keeps every plugin it created.
type fakeFactory struct {
	mu        sync.Mutex
	decisions map[string]decideFunc
	created   map[string][]*fakePlugin
	fail      map[string]error
}

func newFakeFactory() *fakeFactory {
	return &fakeFactory{decisions: map[string]decideFunc{}, created: map[string][]*fakePlugin{}, fail: map[string]error{}}
}

func (f *fakeFactory) New(cfg *configv1alpha1.PluginConfig, _ string) (transport.Plugin, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.fail[cfg.Name]; err != nil {
		return nil, err
	}
	decide := f.decisions[cfg.Name]
	if decide == nil {
		decide = allow()
	}
	p := &fakePlugin{name: cfg.Name, decide: decide, reevaluations: make(chan transport.Reevaluation, 10)}
	f.created[cfg.Name] = append(f.created[cfg.Name], p)
	return p, nil
}

func (f *fakeFactory) set(name string, d decideFunc) { f.decisions[name] = d }

// plugin returns the newest plugin created under name.
func (f *fakeFactory) plugin(t testing.TB, name string) *fakePlugin {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	created := f.created[name]
	require.NotEmpty(t, created, "plugin %q was never created", name)
	return created[len(created)-1]
}

func (f *fakeFactory) creations(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.created[name])
}

// testManager is a Manager on a fake clock with fake plugins, configured
// from one file in a trusted directory.
type testManager struct {
	*Manager
	factory  *fakeFactory
	clock    *clocktesting.FakeClock
	recorder *record.FakeRecorder
	dir      string
	file     string
	// cancelRun ends the Manager's runCtx, for a restart (restart).
	cancelRun func()
}

var testStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func writeConfig(t testing.TB, file, config string) {
	t.Helper()
	// Rename into place, as a careful installer would, so the manager
	// never reads a half-written file.
	tmp := filepath.Join(filepath.Dir(file), ".tmp-"+filepath.Base(file))
	require.NoError(t, os.WriteFile(tmp, []byte(config), 0o644))
	require.NoError(t, os.Rename(tmp, file))
}

// newTestManager creates a manager for config; setup may set plugin
// behaviours and options before it is created.
func newTestManager(t testing.TB, config string, setup func(*fakeFactory, *Options)) *testManager {
	t.Helper()
	resetMetrics()
	dir := configDir(t)
	file := filepath.Join(dir, "10-test.yaml")
	writeConfig(t, file, config)
	tm := &testManager{
		factory:  newFakeFactory(),
		clock:    clocktesting.NewFakeClock(testStart),
		recorder: record.NewFakeRecorder(100),
		dir:      dir,
		file:     file,
	}
	opts := Options{
		ConfigPath: dir,
		BinDir:     "/usr/libexec/kubernetes/pod-admission",
		NodeName:   "node-1",
		Recorder:   tm.recorder,
		newPlugin:  tm.factory.New,
		Clock:      tm.clock,
	}
	if setup != nil {
		setup(tm.factory, &opts)
	}
	m, err := NewManager(opts)
	require.NoError(t, err)
	t.Cleanup(m.Stop)
	tm.Manager = m
	return tm
}

// due says whether SoftAdmit would call the plugins for pod now: it was
// evaluated, is not decided, and its back-off expired or a re-evaluation
// was asked for.
func (tm *testManager) due(pod *v1.Pod) bool {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	st, ok := tm.pods[pod.UID]
	if !ok || st.admitted || st.terminal {
		return false
	}
	return st.reevaluate || st.blocked && st.dueForEvaluation(tm.clock.Now())
}

// admit calls SoftAdmit for pod.
func (tm *testManager) admit(pod *v1.Pod) (bool, string, string, bool) {
	result, terminal := tm.SoftAdmit(context.Background(), &lifecycle.PodAdmitAttributes{Pod: pod})
	return result.Admit, result.Reason, result.Message, terminal
}

func testPod(name string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name + "-uid")}}
}

func staticPod(name string) *v1.Pod {
	pod := testPod(name)
	pod.Namespace = "kube-system"
	pod.Annotations = map[string]string{kubetypes.ConfigSourceAnnotationKey: kubetypes.FileSource}
	return pod
}

func pluginsYAML(plugins ...string) string {
	s := configHeader + "plugins:\n"
	for _, p := range plugins {
		s += p
	}
	return s
}

// execPlugin renders one plugin entry; extra holds further indented fields.
func execPlugin(name string, extra ...string) string {
	s := "- name: " + name + "\n  type: Exec\n"
	for _, e := range extra {
		s += "  " + e + "\n"
	}
	return s
}
