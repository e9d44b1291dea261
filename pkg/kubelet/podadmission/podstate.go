package podadmission

import (
	"time"

	"k8s.io/kubernetes/pkg/kubelet/lifecycle"
)

const (
	// initialBackoff is the wait before the first re-evaluation of a
	// blocked pod; it doubles with every rejection in a row.
	initialBackoff = time.Second
	// maxBackoff caps the back-off: a blocked pod is evaluated at least
	// every two minutes, without flooding plugins with calls.
	maxBackoff = 2 * time.Minute
	// maxRetryAfter caps a plugin's retryAfterSeconds hint, so that a wrong
	// hint cannot park a pod for days. A GRPC plugin can still ask for an
	// earlier evaluation at any time.
	maxRetryAfter = 10 * time.Minute
)

// podState is what the Manager remembers about one pod it has seen in
// SoftAdmit, until the pod is gone from the kubelet.
type podState struct {
	// admitted is sticky: the pod is never evaluated again.
	admitted bool
	// terminal: the pod was rejected for good and the kubelet fails it.
	terminal bool
	// result is the decision for a blocked or terminal pod, returned
	// without calling plugins until nextEvaluation.
	result lifecycle.PodAdmitResult
	// blocked: the pod is held Pending by a soft rejection.
	blocked bool
	// blockedSince is the first soft rejection of this blocking spell;
	// maxBlockedDuration counts from it.
	blockedSince time.Time
	// blockedBy names the plugin whose rejection holds the pod.
	blockedBy string
	// rejections counts soft rejections in a row; the back-off grows with it.
	rejections int
	// nextEvaluation is when the back-off of a blocked pod expires.
	nextEvaluation time.Time
	// reevaluate asks for an evaluation before nextEvaluation: a plugin
	// pushed a re-evaluation or the configuration changed.
	reevaluate bool
	// attempts counts the calls to each plugin for this pod.
	attempts map[string]int32
	// lastSeen is the last SoftAdmit of the pod, so that garbage collection
	// never drops the state of a pod admitted after ActivePods was listed.
	lastSeen time.Time
}

// dueForEvaluation says whether a blocked pod's back-off has expired or a
// re-evaluation was asked for.
func (s *podState) dueForEvaluation(now time.Time) bool {
	return s.reevaluate || !now.Before(s.nextEvaluation)
}

// backoff is the wait after the n-th soft rejection in a row (n >= 1):
// initialBackoff doubling up to maxBackoff.
func backoff(n int) time.Duration {
	d := initialBackoff
	for i := 1; i < n && d < maxBackoff; i++ {
		d *= 2
	}
	return min(d, maxBackoff)
}

// retryDelay is the wait before the next evaluation after the n-th soft
// rejection in a row: the plugin's hint if it gave one, else the back-off.
func retryDelay(n int, retryAfter *time.Duration) time.Duration {
	if retryAfter != nil {
		return min(*retryAfter, maxRetryAfter)
	}
	return backoff(n)
}
