package grpc

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// callError turns the error of an Admit call into what went wrong, in terms
// of the plugin: budget is how long the call had.
func (p *Plugin) callError(ctx context.Context, err error, budget time.Duration) error {
	st := status.Convert(err)
	untrusted := p.untrusted.Load()
	switch {
	// The deadline travels to the plugin, which may give up a moment
	// before the kubelet does: its DeadlineExceeded is a timeout too.
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || st.Code() == codes.DeadlineExceeded:
		return fmt.Errorf("timed out after %s", budget)
	case ctx.Err() != nil:
		return fmt.Errorf("call canceled (%v)", context.Cause(ctx))
	case st.Code() == codes.Unavailable && untrusted != nil:
		return untrusted
	case st.Code() == codes.Unavailable:
		if diagnosis := diagnoseSocket(p.socket); diagnosis != nil {
			return fmt.Errorf("cannot reach the plugin: %w", diagnosis)
		}
		return fmt.Errorf("cannot reach %s%s: %s", unixScheme, p.socket, st.Message())
	case st.Code() == codes.ResourceExhausted && strings.Contains(st.Message(), "received message larger than max"):
		return errors.New("response larger than 1 MiB")
	case st.Code() == codes.Unimplemented:
		return fmt.Errorf("%s does not serve the PodAdmissionPlugin service: %s", p.socket, st.Message())
	}
	return fmt.Errorf("call failed (%s): %s", st.Code(), st.Message())
}
