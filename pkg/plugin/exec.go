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
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1/protocol"
	"github.com/podadmission/podadmission/pkg/plugin/corev1"
)

// RunExec runs h as an Exec plugin: it reads one request from stdin, calls h
// and writes the response to stdout, then exits 0. When anything fails (an
// invalid request, an error from h, an invalid response) it writes the error
// to stderr and exits 1; the kubelet logs that stderr and holds the pod with
// the reason that the plugin exited with code 1.
//
// ctx given to h is canceled on SIGTERM or SIGINT once h has run for
// signalWatchDelay (20 ms); before that either signal ends the process as
// it ends any program. Watching for signals from the start would cost
// every call a signal-handling thread, about a tenth of an Exec plugin's
// whole run, and a handler that answers sooner than that has nothing to
// stop. The kubelet itself sends neither: it ends a call that outlives its
// timeout with SIGKILL.
func RunExec(h Handler) {
	ctx, cancel := context.WithCancel(context.Background())
	watch := time.AfterFunc(signalWatchDelay, func() { cancelOnSignals(cancel) })
	err := HandleExec(ctx, h, os.Stdin, os.Stdout)
	watch.Stop()
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// signalWatchDelay is how long an Exec plugin's handler runs before SIGTERM
// and SIGINT cancel its context instead of ending the process.
const signalWatchDelay = 20 * time.Millisecond

// cancelOnSignals calls cancel on the first SIGTERM or SIGINT.
func cancelOnSignals(cancel context.CancelFunc) {
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, os.Interrupt)
	go func() {
		<-signals
		cancel()
	}()
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
	req, err := DecodeRequest(data)
	if err != nil {
		return err
	}
	resp, err := Respond(ctx, h, req)
	if err != nil {
		return err
	}
	if err := resp.Validate(); err != nil {
		return err
	}
	out, err := encodeResponse(resp, req.UID)
	if err != nil {
		return err
	}
	if _, err := w.Write(append(out, '\n')); err != nil {
		return fmt.Errorf("cannot write the response: %w", err)
	}
	return nil
}

// encodeResponse returns resp, the answer to the request uid, in the
// protocol's JSON form, its fields in the order of the kubelet's
// PodAdmissionResponse. It is written out rather than marshalled from a
// struct: the first reflection-based encoding of a struct type in a
// process builds its field table, which would cost an Exec plugin (a new
// process per call) about a third of what decoding the whole request
// does. The strings are encoding/json's.
func encodeResponse(resp *Response, uid corev1.UID) ([]byte, error) {
	b := make([]byte, 0, 256+len(resp.Message))
	b = append(b, `{"kind":"`+protocol.ResponseKind+`","apiVersion":"`+protocol.APIVersion+`","uid":`...)
	var err error
	if b, err = appendString(b, string(uid)); err != nil {
		return nil, err
	}
	b = append(b, `,"allowed":`...)
	b = strconv.AppendBool(b, resp.Allowed)
	if resp.Reason != "" {
		b = append(b, `,"reason":`...)
		if b, err = appendString(b, resp.Reason); err != nil {
			return nil, err
		}
	}
	if resp.Message != "" {
		b = append(b, `,"message":`...)
		if b, err = appendString(b, resp.Message); err != nil {
			return nil, err
		}
	}
	if resp.RetryAfterSeconds != nil {
		b = append(b, `,"retryAfterSeconds":`...)
		b = strconv.AppendInt(b, int64(*resp.RetryAfterSeconds), 10)
	}
	return append(b, '}'), nil
}

// appendString appends s as encoding/json writes a string.
func appendString(b []byte, s string) ([]byte, error) {
	quoted, err := json.Marshal(s)
	return append(b, quoted...), err
}
