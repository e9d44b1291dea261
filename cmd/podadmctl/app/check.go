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

package app

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	v1 "k8s.io/api/core/v1"
	nodeutil "k8s.io/component-helpers/node/util"
	"k8s.io/klog/v2"

	configv1alpha1 "github.com/podadmission/podadmission/pkg/apis/config/v1alpha1"
	podadmissionv1alpha1 "github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission"
)

// The paths of the release's kubelet drop-in (build/release).
const (
	defaultConfigPath = "/etc/kubernetes/pod-admission"
	defaultBinDir     = "/usr/libexec/kubernetes/pod-admission"
)

type checkOptions struct {
	filename   string
	oldFile    string
	configPath string
	binDir     string
	static     bool
	nodeName   string
	nodeLabels map[string]string
	output     string
}

func newCheckCommand(s streams) *cobra.Command {
	o := &checkOptions{}
	cmd := &cobra.Command{
		Use:   "check -f POD.yaml",
		Short: "Run a pod manifest through the configured plugins as the kubelet would, and show every decision",
		Long: `check loads the configuration as the kubelet does, then sends the pod to every
plugin in order, with the kubelet's transports, timeouts, match sections and
failure policies, and prints each plugin's decision, reason, message and
latency. The verdict is the kubelet's: the first plugin that rejects the pod
decides. Plugins after it are called too, to show their decisions; the kubelet
would not call them.

The pod gets what the API server and the kubelet give it before plugins see
it: defaults, namespace "default" if none, a uid, spec.nodeName; with --static,
the name suffix, annotations and toleration of a static pod.

With --old, the request is an Update, as the kubelet sends it for a running
pod whose containers changed (an ephemeral container added, an image
replaced): -f is the pod as it would run, --old the pod as the plugins
admitted it.

Exit status: 0 admitted, 1 rejected (blocked or failed), 2 error.`,
		Example: `  podadmctl check -f pod.yaml
  podadmctl check -f pod.yaml --config examples/pod-admission --bin-dir _output/bin -o json
  kubectl get pod web -o yaml | podadmctl check -f -
  podadmctl check -f /etc/kubernetes/manifests/etcd.yaml --static
  kubectl debug web --profile=sysadmin --image=busybox -o yaml --dry-run=server | podadmctl check -f - --old web.yaml`,
		Args: exactArgs(0, "no arguments (the pod comes from -f)"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.run(cmd.Context(), s)
		},
	}
	flags := cmd.Flags()
	flags.StringVarP(&o.filename, "filename", "f", "", `pod manifest (YAML or JSON, one v1 Pod); "-" reads stdin`)
	flags.StringVar(&o.oldFile, "old", "", "the pod as the plugins admitted it (YAML or JSON): check sends an Update, with -f the pod as it would run")
	flags.StringVar(&o.configPath, "config", defaultConfigPath, "the kubelet's --pod-admission-plugin-config: a configuration file or directory")
	flags.StringVar(&o.binDir, "bin-dir", defaultBinDir, "the kubelet's --pod-admission-plugin-bin-dir: where the Exec plugins' executables are")
	flags.BoolVar(&o.static, "static", false, "evaluate the pod as a static pod (from --pod-manifest-path)")
	flags.StringVar(&o.nodeName, "node-name", "", "the node's name sent to plugins (default: this host's name, as the kubelet's default)")
	flags.StringToStringVar(&o.nodeLabels, "node-labels", nil, "the node's labels sent to plugins, key=value,...")
	flags.StringVarP(&o.output, "output", "o", "table", "output format: table or json")
	return cmd
}

func (o *checkOptions) run(ctx context.Context, s streams) error {
	if err := o.complete(); err != nil {
		return usageError(err)
	}
	pod, err := o.readPod(s)
	if err != nil {
		return usageError(err)
	}
	oldPod, err := o.readOldPod(pod)
	if err != nil {
		return usageError(err)
	}
	cfg, err := podadmission.LoadNodeConfig(o.configPath, o.binDir)
	if err != nil {
		printErrors(s, err)
		return &exitError{code: ExitError, err: fmt.Errorf("%s: invalid pod admission configuration", o.configPath)}
	}
	if err := o.checkBinDir(cfg); err != nil {
		return usageError(err)
	}
	chain, err := podadmission.NewChain(ctx, cfg, o.binDir)
	if err != nil {
		return usageError(err)
	}
	defer chain.Close()

	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The chain logs every decision, which the report shows anyway; the
	// logs are for -v.
	if !klog.V(1).Enabled() {
		ctx = klog.NewContext(ctx, logr.Discard())
	}
	result := chain.Evaluate(ctx, podadmission.EvaluationRequest{
		Pod:        pod,
		OldPod:     oldPod,
		Node:       podadmissionv1alpha1.NodeInfo{Name: o.nodeName, Labels: o.nodeLabels},
		AllPlugins: true,
	})
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("interrupted: %w", err)
	}

	report := newCheckReport(pod, o.static, oldPod != nil, &result)
	switch o.output {
	case "json":
		err = report.printJSON(s.out)
	default:
		err = report.printTable(s.out)
	}
	if err != nil {
		return err
	}
	if !report.Admitted {
		return silentExit(ExitRejected)
	}
	return nil
}

func (o *checkOptions) complete() error {
	if o.filename == "" {
		return fmt.Errorf("-f/--filename is required: the pod manifest to check")
	}
	if o.output != "table" && o.output != "json" {
		return fmt.Errorf("--output %q: want table or json", o.output)
	}
	if o.nodeName == "" {
		hostname, err := nodeutil.GetHostname("")
		if err != nil {
			return fmt.Errorf("cannot tell the node name, set --node-name: %w", err)
		}
		o.nodeName = hostname
	}
	if o.binDir != "" {
		abs, err := filepath.Abs(o.binDir)
		if err != nil {
			return fmt.Errorf("--bin-dir %q: %w", o.binDir, err)
		}
		o.binDir = abs
	}
	return nil
}

func (o *checkOptions) readPod(s streams) (*v1.Pod, error) {
	name, in := o.filename, s.in
	if o.filename != "-" {
		f, err := os.Open(o.filename)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		in = f
	} else {
		name = "<stdin>"
	}
	pod, err := readPod(name, in)
	if err != nil {
		return nil, err
	}
	return podAsNodeSees(name, pod, o.nodeName, o.static)
}

// readOldPod reads --old, the same pod as pod as the plugins admitted it;
// nil without --old.
func (o *checkOptions) readOldPod(pod *v1.Pod) (*v1.Pod, error) {
	if o.oldFile == "" {
		return nil, nil
	}
	f, err := os.Open(o.oldFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	old, err := readPod(o.oldFile, f)
	if err != nil {
		return nil, err
	}
	if old.UID == "" {
		old.UID = pod.UID
	}
	if old, err = podAsNodeSees(o.oldFile, old, o.nodeName, o.static); err != nil {
		return nil, err
	}
	if old.Namespace != pod.Namespace || old.Name != pod.Name || old.UID != pod.UID {
		return nil, fmt.Errorf("--old %s is pod %s/%s (uid %s), not the pod of -f, %s/%s (uid %s)",
			o.oldFile, old.Namespace, old.Name, old.UID, pod.Namespace, pod.Name, pod.UID)
	}
	return old, nil
}

// checkBinDir says which Exec plugins need the bin dir when it does not
// exist, rather than letting each of them fail the pod.
func (o *checkOptions) checkBinDir(cfg *podadmission.Config) error {
	var execPlugins []string
	for _, p := range cfg.Plugins {
		if p.Type == configv1alpha1.ExecPluginType {
			execPlugins = append(execPlugins, fmt.Sprintf("%q (%s)", p.Name, p.File))
		}
	}
	if len(execPlugins) == 0 {
		return nil
	}
	if info, err := os.Stat(o.binDir); err != nil || !info.IsDir() {
		return fmt.Errorf("--bin-dir %s is not a directory; it must hold the %s of the Exec %s %s",
			o.binDir, plural(len(execPlugins), "executable", "executables"), plural(len(execPlugins), "plugin", "plugins"), strings.Join(execPlugins, ", "))
	}
	return nil
}
