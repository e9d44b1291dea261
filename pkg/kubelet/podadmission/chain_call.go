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
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/klog/v2"

	configv1alpha1 "github.com/podadmission/podadmission/pkg/apis/config/v1alpha1"
	podadmissionv1alpha1 "github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/transport"
)

// Every call to a plugin goes through evaluate and call, whatever the
// transport: they are the only place that sets the request's envelope,
// bounds the call by the plugin's timeout and concurrency cap, says which
// plugin failed, logs the decision and records the metrics (see package
// transport for what is left to a transport).

// stopGrace is how long a call whose context ended waits for its transport
// to return, which a transport that honours ctx does at once (an Exec call
// kills its processes first): its error carries what is for the log, such
// as the end of the plugin's stderr. A transport that does not honour ctx
// holds the pod's worker no longer than that past the timeout.
const stopGrace = 250 * time.Millisecond

// errCallTimeout is the cause of a call's context when the plugin's
// timeout, rather than the caller, ended it.
var errCallTimeout = errors.New("the plugin's timeout expired")

// evaluate calls the plugin about req.Pod and fills in decision.
func (p *chainPlugin) evaluate(ctx context.Context, req EvaluationRequest, static bool, decision *PluginDecision) {
	request := &podadmissionv1alpha1.PodAdmissionRequest{
		TypeMeta: podadmissionv1alpha1.RequestTypeMeta(),
		UID:      uuid.NewUUID(),
		Pod:      req.Pod,
		Node:     req.Node,
		Static:   static,
		Attempt:  decision.Attempt,
	}
	if req.OldPod != nil {
		// A Create leaves the operation out (see its documentation).
		request.Operation, request.OldPod = podadmissionv1alpha1.OperationUpdate, req.OldPod
	}

	start := time.Now()
	resp, err := p.call(ctx, request)
	decision.Latency = time.Since(start)

	var result callResult
	switch {
	// A call cut short because the caller gave up is no plugin fault to
	// ignore: admitting a pod no plugin decided on would be sticky.
	case err != nil && ctx.Err() == nil && p.config.FailurePolicy == configv1alpha1.FailurePolicyIgnore:
		decision.Outcome, decision.Err, result = OutcomeFailureIgnored, err, callFailureIgnored
	case err != nil:
		decision.Outcome, decision.Err, result = OutcomeFailed, err, callFailed
	case resp.Allowed:
		decision.Outcome, result = OutcomeAllowed, callAllowed
	default:
		decision.Outcome, result = OutcomeRejected, callRejected
	}
	if resp != nil {
		decision.Reason, decision.Message = resp.Reason, resp.Message
		// 0, like no hint, means the kubelet's own back-off.
		if resp.RetryAfterSeconds != nil && *resp.RetryAfterSeconds > 0 {
			retryAfter := time.Duration(*resp.RetryAfterSeconds) * time.Second
			decision.RetryAfter = &retryAfter
		}
	}
	p.names.metrics.record(result, decision.Latency)
	logDecision(klog.FromContext(ctx), req.Pod, request, decision)
}

// call sends req and returns the plugin's response, or an error when the
// plugin did not answer validly within its timeout. The wait for a free call
// slot counts against the timeout. The transport runs on a goroutine of its
// own, which keeps its slot and its hold on the instance until the
// transport returns, so a transport that does not honour ctx cannot hold the
// pod's worker past the timeout (and stopGrace), the cap still counts it,
// and a reload cannot close it.
func (p *chainPlugin) call(ctx context.Context, req *podadmissionv1alpha1.PodAdmissionRequest) (*podadmissionv1alpha1.PodAdmissionResponse, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, p.timeout(), errCallTimeout)
	defer cancel()

	if err := p.names.slots.acquire(ctx, p.maxConcurrentCalls()); err != nil {
		if errors.Is(context.Cause(ctx), errCallTimeout) {
			return nil, fmt.Errorf("no free call slot within the timeout of %s (maxConcurrentCalls: %d)", p.timeout(), p.maxConcurrentCalls())
		}
		return nil, p.stopped(ctx, nil)
	}
	p.hold()

	answered := make(chan answer, 1)
	go p.admit(ctx, req, answered)

	select {
	case a := <-answered:
		switch {
		case a.err == nil && a.resp != nil:
			return a.resp, nil
		case a.err == nil:
			return nil, errors.New("the transport returned neither a response nor an error")
		// The transport stopped because ctx ended, or the plugin says it
		// ran out of the time ctx's deadline gave it.
		case ctx.Err() != nil || errors.Is(a.err, context.DeadlineExceeded):
			return nil, p.stopped(ctx, a.err)
		}
		return nil, a.err
	case <-ctx.Done():
		grace := time.NewTimer(stopGrace)
		defer grace.Stop()
		select {
		case a := <-answered:
			return nil, p.stopped(ctx, a.err)
		case <-grace.C:
			return nil, p.stopped(ctx, nil)
		}
	}
}

// answer is what a transport returned.
type answer struct {
	resp *podadmissionv1alpha1.PodAdmissionResponse
	err  error
}

// admit runs the transport's call and sends its answer; then it gives the
// call's slot and its hold on the instance back.
func (p *chainPlugin) admit(ctx context.Context, req *podadmissionv1alpha1.PodAdmissionRequest, answered chan<- answer) {
	defer func() {
		p.names.slots.release()
		if err := p.drop(); err != nil {
			klog.FromContext(ctx).Error(err, "Closing a pod admission plugin removed by a reload failed", "plugin", p.name())
		}
	}()
	resp, err := p.plugin.Admit(ctx, req)
	answered <- answer{resp, err}
}

// stopped is the error of a call that ctx ended, or that the plugin gave up
// on at ctx's deadline: the plugin's timeout, or the caller (the kubelet's
// pod worker, podadmctl) giving up. transportErr is what the transport
// returned, if it did: kept for the log (an Exec plugin's stderr), not
// shown.
func (p *chainPlugin) stopped(ctx context.Context, transportErr error) error {
	if err := ctx.Err(); err != nil && !errors.Is(context.Cause(ctx), errCallTimeout) {
		return &stoppedCall{msg: fmt.Sprintf("call canceled: %v", err), transportErr: transportErr}
	}
	return &stoppedCall{msg: fmt.Sprintf("no answer within the timeout of %s", p.timeout()), transportErr: transportErr}
}

// stoppedCall is a call ended by its timeout or its caller.
type stoppedCall struct {
	msg          string
	transportErr error
}

func (e *stoppedCall) Error() string { return e.msg }

func (e *stoppedCall) Unwrap() error { return e.transportErr }

// PluginStderr returns the end of the stderr of the plugin process whose
// call failed with err, as the Exec transport kept it, or "". It goes to
// the kubelet's log (and podadmctl's report), never to a pod's status: a
// plugin may write anything there, secrets included.
func PluginStderr(err error) string {
	return transport.Stderr(err)
}

// operation names what req is for in log lines.
func operation(req *podadmissionv1alpha1.PodAdmissionRequest) podadmissionv1alpha1.Operation {
	if req.Operation == "" {
		return podadmissionv1alpha1.OperationCreate
	}
	return req.Operation
}

// logDecision logs one call: failures as errors, the rest at V(4). A
// rejection that changes what holds a pod is logged at V(2) by the Manager
// (Manager.reject): a pod held for hours is evaluated again and again with
// the same answer, and a line at V(2) for each of those calls was a fifth
// of what a held pod cost the kubelet.
func logDecision(logger klog.Logger, pod *v1.Pod, req *podadmissionv1alpha1.PodAdmissionRequest, d *PluginDecision) {
	switch d.Outcome {
	case OutcomeFailed, OutcomeFailureIgnored:
		kv := []any{"pod", klog.KObj(pod), "podUID", pod.UID, "plugin", d.Plugin.Name, "requestUID", req.UID, "operation", operation(req),
			"failurePolicy", d.Plugin.FailurePolicy, "attempt", d.Attempt, "latency", d.Latency}
		// A stopped call's message is the chain's; what the transport
		// said of it is for the log.
		var stopped *stoppedCall
		if errors.As(d.Err, &stopped) && stopped.transportErr != nil {
			kv = append(kv, "transportError", stopped.transportErr.Error())
		}
		if stderr := PluginStderr(d.Err); stderr != "" {
			kv = append(kv, "stderr", stderr)
		}
		logger.Error(d.Err, "Pod admission plugin failed", kv...)
	case OutcomeRejected:
		// Checked first: the arguments cost allocations even when the
		// line is not written.
		if v := logger.V(4); v.Enabled() {
			v.Info("Pod admission plugin rejected pod", "pod", klog.KObj(pod), "podUID", pod.UID, "plugin", d.Plugin.Name, "requestUID", req.UID, "operation", operation(req),
				"reason", d.Reason, "message", d.Message, "attempt", d.Attempt, "latency", d.Latency)
		}
	default:
		if v := logger.V(4); v.Enabled() {
			v.Info("Pod admission plugin admitted pod", "pod", klog.KObj(pod), "podUID", pod.UID, "plugin", d.Plugin.Name, "requestUID", req.UID, "operation", operation(req),
				"attempt", d.Attempt, "latency", d.Latency)
		}
	}
}
