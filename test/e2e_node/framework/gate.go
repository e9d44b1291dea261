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
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	configv1alpha1 "github.com/podadmission/podadmission/pkg/apis/config/v1alpha1"
	"github.com/podadmission/podadmission/test/e2e_node/crirecord"
)

// Gate is the test plugin as a GRPC daemon (Cluster.StartGRPCPlugin with
// --decision-file, --retry-after and --log-file, and the default
// --push=pods): it holds the pods labelled for it while its decision file
// denies, and when the file changes it pushes a re-evaluation of the pods
// it denied since the last change.
//
// Where the time from a push to Running goes, as the kubelet's log (it
// runs with --v=2) shows it; PushSample has each part:
//
//   - Delivery: the plugin polls its decision file every 50 ms, then sends
//     the Reevaluation on its WatchReevaluations stream; the kubelet marks
//     the pod due ("Pod admission plugin asked for re-evaluation").
//   - Wake: the push wakes the held pod's worker at once ("Pod admission
//     woke a held pod", cause=push), not at the kubelet's 1 s sync tick;
//     its sync runs the plugins again, which admit the pod ("Pod
//     admission plugins admitted a blocked pod"), and then the kubelet's
//     own admission.
//   - Start: the pod is set up as upstream sets up an admitted pod: its
//     volumes (the sync waits for the volume manager, which it polls every
//     300 ms, podAttachAndMountRetryInterval, when the pod has any), the
//     sandbox and the containers; the PLEG relist the sync requests sees
//     them started, the next sync computes the Running status and the
//     status manager writes it to the API server, whose watch event ends
//     the measurement. A pod created with no plugin goes through the same
//     start (StartAlone is that reference).
//
// So the push costs the delivery and the plugin call; the rest is starting
// a pod.
type Gate struct {
	// Plugin is the plugin's name, which the pods it sees carry as their
	// PluginLabel.
	Plugin string
	// DecisionFile is the plugin's --decision-file.
	DecisionFile string
	// Reason and Message are what the closed gate denies with.
	Reason, Message string
	// LogFile is the plugin's --log-file: one line per call.
	LogFile string
	// RetryAfter is the plugin's --retry-after: the kubelet evaluates a pod
	// the plugin held again only after this long, unless the plugin pushes.
	RetryAfter time.Duration
}

// decisionSettle is how long Close waits after writing the decision file:
// the plugin polls it every 50 ms and pushes on any change, so a pod it
// denied between the write and its next poll would be pushed by the
// closing itself and evaluated a second time. The same pause comes before
// every sample of StartAlone, so that both kinds of sample start from a
// node on which nothing is going on.
const decisionSettle = 200 * time.Millisecond

// pushJitter spreads the instants of the pushes over one sync tick of the
// kubelet (1 s): a loop of samples that each wait for the previous pod to
// run would otherwise push at about the same phase of the tick every time,
// and hide a wait for the tick behind that phase. A push from a plugin
// comes at any time.
const pushJitter = time.Second

// heldTimeout bounds the wait for a new pod to be held.
const heldTimeout = 30 * time.Second

// StartGate starts g's plugin daemon with its gate closed and returns the
// plugin's entry for the kubelet's configuration. Teardown stops it.
func (c *Cluster) StartGate(ctx context.Context, g Gate) (configv1alpha1.PluginConfig, error) {
	if err := g.Close(); err != nil {
		return configv1alpha1.PluginConfig{}, err
	}
	endpoint, err := c.StartGRPCPlugin(ctx, g.Plugin, "--decision-file="+g.DecisionFile, "--log-file="+g.LogFile, "--retry-after="+g.RetryAfter.String())
	if err != nil {
		return configv1alpha1.PluginConfig{}, err
	}
	return configv1alpha1.PluginConfig{
		Name:     g.Plugin,
		Type:     configv1alpha1.GRPCPluginType,
		Endpoint: endpoint,
		Match:    MatchPluginLabel(g.Plugin),
	}, nil
}

// PushToRunningP99Goal is issue 11's goal for the time from a push to
// Running, one pod at a time, in runtime mode (a pod created with no
// plugin reaches Running in about 0.17 s with containerd).
func PushToRunningP99Goal(mode string) time.Duration {
	if mode == FakeMode {
		return 250 * time.Millisecond
	}
	return 450 * time.Millisecond
}

// Close makes the gate deny and waits until the plugin has seen it.
func (g Gate) Close() error {
	message := g.Message
	if message == "" {
		message = "the gate is closed"
	}
	if err := SetDecision(g.DecisionFile, "deny "+g.Reason+" "+message); err != nil {
		return err
	}
	time.Sleep(decisionSettle)
	return nil
}

// Open makes the gate allow: the plugin pushes a re-evaluation of the pods
// it denied when it sees the change. It returns the time just before the
// write, which the push cannot precede. The test plugin does not log its
// pushes; the kubelet's log says when a push arrived (AddKubeletTimes).
func (g Gate) Open() (time.Time, error) {
	at := time.Now()
	return at, SetDecision(g.DecisionFile, "allow")
}

// PushSample is one pod a gate held, and let go with a push.
type PushSample struct {
	// Pod is namespace/name.
	Pod string
	UID types.UID
	// Created is when the pod was created (just before the call).
	Created time.Time
	// Held is when the watch showed it held with the gate's reason.
	Held time.Time
	// Opened is when the gate opened (Gate.Open).
	Opened time.Time
	// PushReceived is when the kubelet logged the plugin's re-evaluation
	// request, Woken when it logged that the push woke the pod, and
	// Admitted when it logged that the plugins admitted the pod
	// (AddKubeletTimes).
	PushReceived, Woken, Admitted time.Time
	// Running is when the watch showed the pod Running.
	Running time.Time
}

// PushToRunning is the time from the gate opening to the pod Running.
func (s PushSample) PushToRunning() time.Duration { return s.Running.Sub(s.Opened) }

// Delivery is the time from the gate opening to the kubelet receiving the
// push: the plugin's poll of its decision file and the gRPC stream.
func (s PushSample) Delivery() time.Duration { return s.PushReceived.Sub(s.Opened) }

// Wake is the time from the kubelet receiving the push to the plugins
// admitting the pod: waking the pod's worker and the plugin call.
func (s PushSample) Wake() time.Duration { return s.Admitted.Sub(s.PushReceived) }

// Start is the time from the kubelet admitting the pod to the watch
// showing it Running: starting the pod.
func (s PushSample) Start() time.Duration { return s.Running.Sub(s.Admitted) }

// HoldThenPush measures one pod on its own: it closes the gate, creates a
// pod of newPod labelled for it in namespace, waits until the pod is held,
// opens the gate at a random instant within the next second (pushJitter)
// and waits until the pod runs, at most bound after the gate opened.
// counter watches namespace. The caller makes sure that no other pod
// starts meanwhile.
func (c *Cluster) HoldThenPush(ctx context.Context, counter *PodCounter, g Gate, newPod PodMaker, namespace, name string, bound time.Duration) (PushSample, error) {
	s := PushSample{Pod: namespace + "/" + name}
	if err := g.Close(); err != nil {
		return s, err
	}
	s.Created = time.Now()
	pod, err := c.Client.CoreV1().Pods(namespace).Create(ctx, newPod(namespace, name, PluginLabels(g.Plugin)), metav1.CreateOptions{})
	if err != nil {
		return s, err
	}
	s.UID = pod.UID
	var last *corev1.Pod
	err = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, heldTimeout, true, func(context.Context) (bool, error) {
		last, _ = counter.Pod(pod.UID)
		return last != nil && last.Status.Reason == g.Reason, nil
	})
	if err != nil {
		return s, fmt.Errorf("pod %s should be held by %s with reason %s: %w; last seen: %s", s.Pod, g.Plugin, g.Reason, err, DescribePod(last))
	}
	s.Held = time.Now()

	time.Sleep(rand.N(pushJitter))
	if s.Opened, err = g.Open(); err != nil {
		return s, err
	}
	err = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, bound, true, func(context.Context) (bool, error) {
		_, ok := counter.RunningAt(pod.UID)
		return ok, nil
	})
	if err != nil {
		last, _ = counter.Pod(pod.UID)
		return s, fmt.Errorf("pod %s should run within %s of the push (the plugin asked for a retry after %s): %w; last seen: %s",
			s.Pod, bound, g.RetryAfter, err, DescribePod(last))
	}
	s.Running, _ = counter.RunningAt(pod.UID)
	return s, nil
}

// StartAlone is the reference for HoldThenPush: after the same pause, it
// creates a pod of newPod that no plugin looks at in namespace and returns
// the time from just before the create call to the watch of counter
// showing it Running.
func (c *Cluster) StartAlone(ctx context.Context, counter *PodCounter, newPod PodMaker, namespace, name string, timeout time.Duration) (time.Duration, error) {
	time.Sleep(decisionSettle)
	created := time.Now()
	pod, err := c.Client.CoreV1().Pods(namespace).Create(ctx, newPod(namespace, name, nil), metav1.CreateOptions{})
	if err != nil {
		return 0, err
	}
	err = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		_, ok := counter.RunningAt(pod.UID)
		return ok, nil
	})
	if err != nil {
		last, _ := counter.Pod(pod.UID)
		return 0, fmt.Errorf("pod %s/%s should run: %w; last seen: %s", namespace, name, err, DescribePod(last))
	}
	running, _ := counter.RunningAt(pod.UID)
	return running.Sub(created), nil
}

// AddKubeletTimes fills in PushReceived, Woken and Admitted of samples
// from the kubelet's log (it runs with --v=2): the first re-evaluation
// request of g's plugin that marked a pod, at or after the sample's gate
// opening (or the wake, if the kubelet logged that first); the line that
// says the push woke the sample's pod (cause=push); and the line that says
// the plugins admitted it. Samples whose gates opened at once share the
// push.
func (c *Cluster) AddKubeletTimes(samples []PushSample, g Gate) error {
	pushes, err := c.KubeletLogLines(`"Pod admission plugin asked for re-evaluation"`, `plugin="`+g.Plugin+`"`)
	if err != nil {
		return err
	}
	wakes, err := c.KubeletLogLines(`"Pod admission woke a held pod"`, `cause="push"`)
	if err != nil {
		return err
	}
	admissions, err := c.KubeletLogLines(`"Pod admission plugins admitted a blocked pod"`)
	if err != nil {
		return err
	}
	forPod := func(lines []KubeletLogLine, s *PushSample) time.Time {
		for _, l := range lines {
			if !l.Time.Before(s.Opened) && strings.Contains(l.Text, ` pod="`+s.Pod+`" `) {
				return l.Time
			}
		}
		return time.Time{}
	}
	var errs []error
	for i := range samples {
		s := &samples[i]
		for _, l := range pushes {
			if !l.Time.Before(s.Opened) && !strings.HasSuffix(l.Text, " marked=0") {
				s.PushReceived = l.Time
				break
			}
		}
		s.Woken = forPod(wakes, s)
		s.Admitted = forPod(admissions, s)
		// The kubelet logs the request after it queued the wake, so the
		// wake's line can come first: the push arrived by then.
		if !s.Woken.IsZero() && s.Woken.Before(s.PushReceived) {
			s.PushReceived = s.Woken
		}
		switch {
		case s.PushReceived.IsZero():
			errs = append(errs, fmt.Errorf("%s: the kubelet log has no re-evaluation request from %s after %s", s.Pod, g.Plugin, s.Opened.Format(time.StampMicro)))
		case s.Woken.IsZero():
			errs = append(errs, fmt.Errorf(`%s: the kubelet log does not say the push woke the pod ("Pod admission woke a held pod" with cause="push" after %s)`, s.Pod, s.Opened.Format(time.StampMicro)))
		case s.Admitted.IsZero():
			errs = append(errs, fmt.Errorf("%s: the kubelet log does not say it admitted the pod", s.Pod))
		case s.Admitted.Before(s.Woken) || s.Running.Before(s.Admitted):
			errs = append(errs, fmt.Errorf("%s: out of order: gate opened %s, push received %s, woken %s, admitted %s, Running %s", s.Pod,
				s.Opened.Format(time.StampMicro), s.PushReceived.Format(time.StampMicro), s.Woken.Format(time.StampMicro),
				s.Admitted.Format(time.StampMicro), s.Running.Format(time.StampMicro)))
		}
	}
	return errors.Join(errs...)
}

// CheckPushed returns an error for every sample whose pod was not admitted
// by the push: it must have run within bound of the gate opening and
// before the kubelet would have evaluated it again on the plugin's
// retryAfter; the plugin must have been called for it exactly twice (the
// rejection that held it, the re-evaluation the push asked for); and the
// runtime must have created its one sandbox after the gate opened.
func (c *Cluster) CheckPushed(samples []PushSample, g Gate, bound time.Duration) error {
	calls, err := ReadPluginLog(g.LogFile)
	if err != nil {
		return err
	}
	journal, err := crirecord.ReadJournal(c.CRIJournal())
	if err != nil {
		return err
	}
	var errs []error
	for _, s := range samples {
		if d := s.PushToRunning(); d > bound {
			errs = append(errs, fmt.Errorf("%s: Running %s after the gate opened, more than %s", s.Pod, d, bound))
		}
		if !s.Running.Before(s.Created.Add(g.RetryAfter)) {
			errs = append(errs, fmt.Errorf("%s: Running %s after it was created, not before the plugin's retry after %s", s.Pod, s.Running.Sub(s.Created), g.RetryAfter))
		}
		if n := len(CallsFor(calls, string(s.UID))); n != 2 {
			errs = append(errs, fmt.Errorf("%s: the plugin was called %d times for it, want 2 (the rejection, the re-evaluation the push asked for)", s.Pod, n))
		}
		sandboxes := crirecord.Filter(journal, "RunPodSandbox", string(s.UID))
		if len(sandboxes) != 1 {
			errs = append(errs, fmt.Errorf("%s: %d sandboxes created, want 1", s.Pod, len(sandboxes)))
		} else if sandboxes[0].Time.Before(s.Opened) {
			errs = append(errs, fmt.Errorf("%s: sandbox created at %s, before the gate opened at %s", s.Pod,
				sandboxes[0].Time.Format(time.StampMicro), s.Opened.Format(time.StampMicro)))
		}
	}
	return errors.Join(errs...)
}

// MeasurePushes takes n samples of HoldThenPush, each followed by a
// sample of StartAlone so that drift on a shared machine hits both alike,
// with pods of newPod in namespace, which counter watches. It then checks
// every push sample with CheckPushed and breaks it down with
// AddKubeletTimes.
func (c *Cluster) MeasurePushes(ctx context.Context, counter *PodCounter, g Gate, newPod PodMaker, namespace string, n int, bound time.Duration) ([]PushSample, []time.Duration, error) {
	samples := make([]PushSample, 0, n)
	reference := make([]time.Duration, 0, n)
	for i := range n {
		s, err := c.HoldThenPush(ctx, counter, g, newPod, namespace, fmt.Sprintf("pushed-%02d", i), bound)
		if err != nil {
			return nil, nil, err
		}
		samples = append(samples, s)
		d, err := c.StartAlone(ctx, counter, newPod, namespace, fmt.Sprintf("alone-%02d", i), bound)
		if err != nil {
			return nil, nil, err
		}
		reference = append(reference, d)
	}
	if err := c.CheckPushed(samples, g, bound); err != nil {
		return nil, nil, err
	}
	if err := c.AddKubeletTimes(samples, g); err != nil {
		return nil, nil, err
	}
	return samples, reference, nil
}

// PushFigures records the figures of MeasurePushes, named after what
// (e.g. "one pod", "one pod with volumes"): push to Running, its parts,
// and the same start with no plugin.
func (s *Suite) PushFigures(t testing.TB, what string, samples []PushSample, reference []time.Duration) {
	t.Helper()
	part := func(f func(PushSample) time.Duration) []time.Duration {
		ds := make([]time.Duration, 0, len(samples))
		for _, sample := range samples {
			ds = append(ds, f(sample))
		}
		return ds
	}
	pushToRunning := part(PushSample.PushToRunning)
	s.Figure(t, what+", one at a time", float64(len(samples)), "pods")
	s.Duration(t, what+": push to Running p50", Percentile(pushToRunning, 50))
	s.Duration(t, what+": push to Running p99", Percentile(pushToRunning, 99))
	s.Duration(t, what+": push delivery p50 (plugin to kubelet)", Percentile(part(PushSample.Delivery), 50))
	s.Duration(t, what+": wake p50 (push to admitted)", Percentile(part(PushSample.Wake), 50))
	s.Duration(t, what+": wake p99 (push to admitted)", Percentile(part(PushSample.Wake), 99))
	s.Duration(t, what+": admitted to Running p50", Percentile(part(PushSample.Start), 50))
	s.Duration(t, what+": admitted to Running p99", Percentile(part(PushSample.Start), 99))
	s.Duration(t, what+", reference: create to Running p50, no plugin", Percentile(reference, 50))
	s.Duration(t, what+", reference: create to Running p99, no plugin", Percentile(reference, 99))
}
