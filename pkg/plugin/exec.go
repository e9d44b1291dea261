package plugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	podadmissionv1alpha1 "github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1"
)

// maxRequestSize bounds what HandleExec reads from stdin; the kubelet sends
// one pod, which the API server already caps far below this.
const maxRequestSize = 16 << 20

var errNoResponse = errors.New("handler returned neither a response nor an error")

// RunExec runs h as an Exec plugin: it reads one request from stdin, calls h
// and writes the response to stdout, then exits 0. When anything fails (an
// invalid request, an error from h, an invalid response) it writes the error
// to stderr and exits 1; the kubelet reports that error, with the plugin's
// name, as the reason the pod is blocked. ctx given to h is canceled on
// SIGTERM or SIGINT.
func RunExec(h Handler) {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	err := HandleExec(ctx, h, os.Stdin, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// HandleExec is RunExec without the process around it: it reads one request
// from r, calls h and writes the response to w. It is what tests of a plugin
// call.
func HandleExec(ctx context.Context, h Handler, r io.Reader, w io.Writer) error {
	data, err := io.ReadAll(io.LimitReader(r, maxRequestSize+1))
	if err != nil {
		return fmt.Errorf("cannot read the request: %w", err)
	}
	if len(data) > maxRequestSize {
		return fmt.Errorf("invalid request: larger than %d MiB", maxRequestSize>>20)
	}
	req, err := podadmissionv1alpha1.DecodeRequest(data)
	if err != nil {
		return err
	}
	resp, err := answer(ctx, h, req)
	if err != nil {
		return err
	}
	out, err := podadmissionv1alpha1.EncodeResponse(resp, req)
	if err != nil {
		return err
	}
	if _, err := w.Write(append(out, '\n')); err != nil {
		return fmt.Errorf("cannot write the response: %w", err)
	}
	return nil
}
