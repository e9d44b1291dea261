// Package grpctransport is the GRPC transport of the pod admission plugin
// manager: it calls a long-running plugin daemon that serves
// PodAdmissionPlugin (pkg/apis/podadmission/grpc/v1alpha1) on a unix socket.
// It implements the contract of package transport: the manager's chain owns
// the call's timeout (a deadline on ctx, which travels to the plugin), names
// the plugin and logs the decision.
//
// Start makes the connection, in the background, and remakes it with
// back-off for as long as the plugin is configured, so a plugin daemon may
// start after the kubelet, or restart. While it is not connected, calls fail
// at once with an error that names the socket (the manager then applies the
// plugin's failurePolicy). While it is connected, the plugin's WatchReevaluations
// stream is forwarded to Reevaluations, and every time the connection
// becomes ready a Reevaluation{All: true} is sent, so pods blocked while the
// plugin was unreachable are evaluated again at once.
package grpctransport
