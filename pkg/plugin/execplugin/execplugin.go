// Package execplugin runs a pod admission handler as an Exec plugin: one
// process per call, a PodAdmissionRequest on stdin, the response on stdout.
//
// It is the part of the SDK (package plugin) that does not link the GRPC
// server. An Exec plugin pays its process start-up on every pod it judges,
// and package initialisation of grpc adds about a millisecond to that; a
// plugin that wants to start fast imports this package instead of plugin.
package execplugin

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

// Handler decides on one request. It returns a response, or an error when it
// cannot decide; the error is reported to the kubelet, which applies the
// plugin's failurePolicy. ctx ends when the kubelet gives up on the call.
type Handler = func(ctx context.Context, req *podadmissionv1alpha1.PodAdmissionRequest) (*podadmissionv1alpha1.PodAdmissionResponse, error)

// MaxRequestSize bounds what Handle reads from stdin; the kubelet sends one
// pod, which the API server already caps far below this.
const MaxRequestSize = 16 << 20

var errNoResponse = errors.New("handler returned neither a response nor an error")

// Run runs h as an Exec plugin: it reads one request from stdin, calls h and
// writes the response to stdout, then exits 0. When anything fails (an
// invalid request, an error from h, an invalid response) it writes the error
// to stderr and exits 1; the kubelet reports that error, with the plugin's
// name, as the reason the pod is held. ctx given to h is canceled on SIGTERM
// or SIGINT.
func Run(h Handler) {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	err := Handle(ctx, h, os.Stdin, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// Handle is Run without the process around it: it reads one request from r,
// calls h and writes the response to w. It is what tests of a plugin call.
func Handle(ctx context.Context, h Handler, r io.Reader, w io.Writer) error {
	data, err := io.ReadAll(io.LimitReader(r, MaxRequestSize+1))
	if err != nil {
		return fmt.Errorf("cannot read the request: %w", err)
	}
	if len(data) > MaxRequestSize {
		return fmt.Errorf("invalid request: larger than %d MiB", MaxRequestSize>>20)
	}
	req, err := podadmissionv1alpha1.DecodeRequest(data)
	if err != nil {
		return err
	}
	resp, err := Respond(ctx, h, req)
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

// Respond runs h on req and returns its response ready to send: a copy with
// the envelope (apiVersion, kind, uid) filled in from req. The GRPC server
// of package plugin answers with it too.
func Respond(ctx context.Context, h Handler, req *podadmissionv1alpha1.PodAdmissionRequest) (*podadmissionv1alpha1.PodAdmissionResponse, error) {
	resp, err := h(ctx, req)
	if err != nil {
		return nil, err
	}
	if resp == nil {
		return nil, errNoResponse
	}
	r := *resp
	r.APIVersion = req.APIVersion
	r.Kind = podadmissionv1alpha1.PodAdmissionResponseKind
	r.UID = req.UID
	return &r, nil
}
