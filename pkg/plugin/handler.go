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
	"errors"
)

// Handler decides on one request. It returns a Response, or an error when it
// cannot decide; the error is reported to the kubelet, which applies the
// plugin's failurePolicy. ctx ends when the kubelet gives up on the call.
// A GRPC plugin calls its handler concurrently.
type Handler = func(ctx context.Context, req *Request) (*Response, error)

var errNoResponse = errors.New("handler returned neither a response nor an error")

// Respond runs h on req and returns its response, or its error, or an
// error when it returned neither. RunExec answers with it, and so does the
// GRPC server of package grpcplugin, after Validate.
func Respond(ctx context.Context, h Handler, req *Request) (*Response, error) {
	resp, err := h(ctx, req)
	if err != nil {
		return nil, err
	}
	if resp == nil {
		return nil, errNoResponse
	}
	return resp, nil
}
