package plugin

import (
	"context"
	"io"

	"github.com/podadmission/podadmission/pkg/plugin/execplugin"
)

// RunExec runs h as an Exec plugin: it reads one request from stdin, calls h
// and writes the response to stdout, then exits 0. When anything fails (an
// invalid request, an error from h, an invalid response) it writes the error
// to stderr and exits 1; the kubelet reports that error, with the plugin's
// name, as the reason the pod is blocked. ctx given to h is canceled on
// SIGTERM or SIGINT. (Package execplugin does the same without linking the
// GRPC server, for Exec plugins that want to start faster.)
func RunExec(h Handler) {
	execplugin.Run(h)
}

// HandleExec is RunExec without the process around it: it reads one request
// from r, calls h and writes the response to w. It is what tests of a plugin
// call.
func HandleExec(ctx context.Context, h Handler, r io.Reader, w io.Writer) error {
	return execplugin.Handle(ctx, h, r, w)
}
