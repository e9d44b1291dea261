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

// Command netpol-gate-plugin is a GRPC pod admission plugin that holds a
// pod Pending until the NetworkPolicies that select it are in force on the
// node: acknowledged by the node's network policy agent in a status
// directory, or known for a settle time when there is none.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/component-base/cli"
	"k8s.io/component-base/version"
	"k8s.io/klog/v2"

	"github.com/podadmission/podadmission/pkg/plugin"
	"github.com/podadmission/podadmission/pkg/plugin/grpcplugin"
)

func main() {
	os.Exit(cli.Run(newCommand()))
}

func newCommand() *cobra.Command {
	o := newOptions()
	cmd := &cobra.Command{
		Use:   "netpol-gate-plugin",
		Short: "Hold pods Pending until the NetworkPolicies that select them are in force on the node",
		Long: `netpol-gate-plugin is a GRPC pod admission plugin (a daemon on a unix socket).
It watches NetworkPolicies and Namespaces with its own kubeconfig and holds a pod
until its caches are synced and every NetworkPolicy that selects the pod has been
acknowledged by the node's network policy agent in --ack-dir (a file named
<policy uid>.<generation>), or, without --ack-dir, has been known for
--settle-time. It asks the kubelet to evaluate the pod again the moment the last
acknowledgement arrives. Pods no policy selects start at once; host-network pods
are exempt by default.`,
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

func run(ctx context.Context, o *options) error {
	logger := klog.FromContext(ctx)
	logger.Info("Starting netpol-gate-plugin", "version", version.Get().GitVersion, "socket", o.socket, "ackDir", o.ackDir, "ackWriterUID", o.ackWriterUID, "settleTime", o.settleTime,
		"exemptHostNetwork", o.exemptHostNetwork, "exemptNamespaceSelector", o.exemptNamespaceSelector)

	restConfig, err := clientcmd.BuildConfigFromFlags("", o.kubeconfig)
	if err != nil {
		return fmt.Errorf("--kubeconfig %q: %w", o.kubeconfig, err)
	}
	restConfig.UserAgent = "netpol-gate-plugin/" + version.Get().GitVersion
	client, err := kubernetes.NewForConfig(restConfig)
	if err != nil {
		return fmt.Errorf("--kubeconfig %q: %w", o.kubeconfig, err)
	}
	selector, err := o.namespaceSelector()
	if err != nil {
		return err
	}

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	var g *gate
	server := grpcplugin.NewServer(func(ctx context.Context, req *plugin.Request) (*plugin.Response, error) {
		return g.admit(ctx, req), nil
	})
	cfg := gateConfig{settleTime: o.settleTime, exemptHostNetwork: o.exemptHostNetwork, exemptNamespaces: selector}
	var acks *ackWatcher
	if o.ackDir != "" {
		acks, err = newAckWatcher(logger, o.ackDir, uint32(o.ackWriterUID), func() { g.requestRecheck() })
		if err != nil {
			return err
		}
		cfg.acks, cfg.ackDir = acks.current, o.ackDir
	}
	factory := informers.NewSharedInformerFactory(client, o.resyncPeriod)
	g, cluster, err := newGateWithInformers(cfg, client, factory, server)
	if err != nil {
		return err
	}

	cluster.start(ctx, g)
	go g.runRechecks(ctx)
	if acks != nil {
		go func() {
			if err := acks.run(ctx); err != nil {
				cancel(err)
			}
		}()
	}
	if err := os.MkdirAll(filepath.Dir(o.socketPath()), 0o755); err != nil {
		return fmt.Errorf("--socket %s: %w", o.socket, err)
	}
	logger.Info("Serving the kubelet", "socket", o.socket)
	if err := server.Serve(ctx, o.socket); err != nil {
		return fmt.Errorf("--socket %s: %w", o.socket, err)
	}
	factory.Shutdown()
	// The acknowledgement watch failing ends the gate with its error; a
	// signal ends it cleanly.
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}
