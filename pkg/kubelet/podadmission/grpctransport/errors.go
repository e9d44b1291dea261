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

package grpctransport

import (
	"context"
	"fmt"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/podadmission/podadmission/pkg/apis/config/validation"
	"github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1/protocol"
)

// callError turns the error of an Admit call into what went wrong, in terms
// of the plugin. When ctx ended the call, or the plugin reports that it ran
// out of the time the deadline gave it (the deadline travels to the plugin,
// which may give up a moment before the kubelet does), the error wraps
// context.DeadlineExceeded or context.Canceled: the chain says which
// timeout that was.
func (p *Plugin) callError(ctx context.Context, err error) error {
	st := status.Convert(err)
	untrusted := p.untrusted.Load()
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("call stopped: %w", ctx.Err())
	case st.Code() == codes.DeadlineExceeded:
		return fmt.Errorf("the plugin ran out of time (%s): %w", st.Message(), context.DeadlineExceeded)
	case st.Code() == codes.Unavailable && untrusted != nil:
		return untrusted
	case st.Code() == codes.Unavailable:
		if diagnosis := diagnoseSocket(p.socket); diagnosis != nil {
			return fmt.Errorf("cannot reach the plugin: %w", diagnosis)
		}
		return fmt.Errorf("cannot reach %s%s: %s", validation.UnixSocketScheme, p.socket, st.Message())
	case st.Code() == codes.ResourceExhausted && strings.Contains(st.Message(), "received message larger than max"):
		return fmt.Errorf("response larger than %s", protocol.SizeInMiB(protocol.MaxResponseSize))
	case st.Code() == codes.Unimplemented:
		return fmt.Errorf("%s does not serve the PodAdmissionPlugin service: %s", p.socket, st.Message())
	}
	return fmt.Errorf("call failed (%s): %s", st.Code(), st.Message())
}
