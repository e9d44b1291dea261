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

// Command pod-security-plugin-grpc is pod-security-plugin's policy served
// as a GRPC pod admission plugin daemon on a unix socket: the same flags and
// the same decisions, without a process start per call.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"
	"k8s.io/component-base/cli"
	"k8s.io/component-base/version"
	"k8s.io/klog/v2"

	"github.com/podadmission/podadmission/cmd/pod-security-plugin/app"
	"github.com/podadmission/podadmission/pkg/plugin/grpcplugin"
)

func main() {
	os.Exit(cli.Run(newCommand()))
}

func newCommand() *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "pod-security-plugin-grpc",
		Short: "Enforce a Pod Security Standards level on the pods of a node, as a GRPC plugin daemon",
		Long: `pod-security-plugin-grpc is a GRPC pod admission plugin (a daemon on a unix socket).
It evaluates each pod against a Pod Security Standards level with the policy
evaluator of the API server's PodSecurity admission, as the Exec plugin
pod-security-plugin does with the same flags, and rejects a pod that violates it
with reason PodSecurity and the API server's message. It pays for the evaluator
once, at its start, where the Exec plugin pays at every call.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, os.Interrupt)
			defer stop()
			return run(klog.NewContext(ctx, klog.Background()), o)
		},
	}
	o.addFlags(cmd.Flags())
	return cmd
}

// run serves the policy until ctx is done.
func run(ctx context.Context, o *options) error {
	logger := klog.FromContext(ctx)
	logger.Info("Starting pod-security-plugin-grpc", "version", version.Get().GitVersion, "socket", o.socket,
		"level", o.policy.Level, "policyVersion", o.policy.Version, "exemptNamespaces", o.policy.ExemptNamespaces,
		"exemptRuntimeClasses", o.policy.ExemptRuntimeClasses, "exemptStaticPods", o.policy.ExemptStaticPods)
	p, err := app.NewPolicy(&o.policy)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(o.socketPath()), 0o755); err != nil {
		return fmt.Errorf("--socket %s: %w", o.socket, err)
	}
	logger.Info("Serving the kubelet", "socket", o.socket)
	// A decision depends on the pod alone, so nothing ever changes it: the
	// daemon never asks the kubelet to evaluate pods again.
	if err := grpcplugin.Serve(ctx, o.socket, p.Handle); err != nil {
		return fmt.Errorf("--socket %s: %w", o.socket, err)
	}
	logger.Info("Stopped serving the kubelet", "socket", o.socket)
	return nil
}
