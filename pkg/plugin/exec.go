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

package plugin

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	podadmissionv1alpha1 "github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1"
	"github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1/protocol"
)

// RunExec runs h as an Exec plugin: it reads one request from stdin, calls h
// and writes the response to stdout, then exits 0. When anything fails (an
// invalid request, an error from h, an invalid response) it writes the error
// to stderr and exits 1; the kubelet logs that stderr and holds the pod with
// the reason that the plugin exited with code 1. ctx given to h is canceled
// on SIGTERM or SIGINT.
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
	data, err := io.ReadAll(io.LimitReader(r, protocol.MaxRequestSize+1))
	if err != nil {
		return fmt.Errorf("cannot read the request: %w", err)
	}
	if len(data) > protocol.MaxRequestSize {
		return fmt.Errorf("invalid request: larger than %s", protocol.SizeInMiB(protocol.MaxRequestSize))
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
