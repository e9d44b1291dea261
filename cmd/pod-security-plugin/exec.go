package main

import (
	"fmt"
	"io"

	podadmissionv1alpha1 "github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1"
)

// maxRequestSize bounds what is read from stdin: one pod, which the API
// server caps far below this.
const maxRequestSize = 16 << 20

// handleExec answers one Exec call: a PodAdmissionRequest on in, the
// response on out. It is the SDK's plugin.HandleExec without the SDK's
// package, which also holds the GRPC server: its init work would be paid on
// every call of this per-call process (see README: latency).
func handleExec(admit func(*podadmissionv1alpha1.PodAdmissionRequest) *podadmissionv1alpha1.PodAdmissionResponse, in io.Reader, out io.Writer) error {
	data, err := io.ReadAll(io.LimitReader(in, maxRequestSize+1))
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
	resp := admit(req)
	resp.UID = req.UID
	encoded, err := podadmissionv1alpha1.EncodeResponse(resp, req)
	if err != nil {
		return err
	}
	if _, err := out.Write(append(encoded, '\n')); err != nil {
		return fmt.Errorf("cannot write the response: %w", err)
	}
	return nil
}
