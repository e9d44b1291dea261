// Package echo is a gRPC service with one unary method that answers with
// the bytes it is sent: the benchmark's bare gRPC reference, with nothing of
// the pod admission protocol or the kubelet around a call.
package echo

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// Method is the full name of the echo method.
const Method = "/transportbench.Echo/Echo"

// Register registers the echo service on s.
func Register(s *grpc.Server) {
	s.RegisterService(&grpc.ServiceDesc{
		ServiceName: "transportbench.Echo",
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{{
			MethodName: "Echo",
			Handler: func(_ any, _ context.Context, decode func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
				in := &wrapperspb.BytesValue{}
				if err := decode(in); err != nil {
					return nil, err
				}
				return in, nil
			},
		}},
	}, struct{}{})
}
