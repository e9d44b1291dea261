package podadmission

import (
	"context"

	"k8s.io/apimachinery/pkg/types"

	podadmissionv1alpha1 "github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1"
)

// Plugin is one configured plugin as the manager calls it. The exec and grpc
// packages implement it; the manager adds everything that is the same for
// every transport (matching, timeouts, the concurrency cap, failure policy,
// metrics), so a transport only moves a request and a response.
type Plugin interface {
	// Admit sends one request and returns the plugin's response. It returns
	// an error, never a response, when the plugin could not answer: the call
	// timed out, the process failed, the socket is gone, or the response is
	// not a valid PodAdmissionResponse for this request. Errors name the
	// plugin and the fault, they end up in pod status messages.
	Admit(ctx context.Context, req *podadmissionv1alpha1.PodAdmissionRequest) (*podadmissionv1alpha1.PodAdmissionResponse, error)

	// Close releases the plugin's resources (connections, goroutines).
	Close() error
}

// Reevaluator is implemented by plugins that can ask the kubelet to evaluate
// pods again before their back-off expires (GRPC plugins, through
// WatchReevaluations).
type Reevaluator interface {
	// Reevaluations delivers the plugin's requests to evaluate pods again
	// now. The channel is closed when the plugin is closed.
	Reevaluations() <-chan Reevaluation
}

// Reevaluation asks for blocked pods to be evaluated again now.
type Reevaluation struct {
	// PodUIDs are the pods to evaluate again.
	PodUIDs []types.UID
	// All asks for every pod this plugin blocks to be evaluated again, for
	// example when a plugin daemon (re)connects after the kubelet started.
	All bool
}
