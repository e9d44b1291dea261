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

// Package app implements the podadmctl commands.
package app

import (
	"io"

	"github.com/spf13/cobra"
	"k8s.io/component-base/cli"
	"k8s.io/klog/v2"
)

// streams are the standard streams of one podadmctl run.
type streams struct {
	in       io.Reader
	out, err io.Writer
}

// Run runs podadmctl with args (without the program name) and returns its
// exit code.
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	s := streams{in: stdin, out: stdout, err: stderr}
	cmd := newRootCommand(s)
	cmd.SetArgs(args)
	cmd.SetIn(stdin)
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	// cli adds the logging flags (-v, --logging-format) and initialises
	// logging the way the Kubernetes commands do.
	return exitCode(cli.RunNoErrOutput(cmd), stderr)
}

func newRootCommand(s streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "podadmctl",
		Short: "Validate a node's pod admission plugin configuration and dry-run pods through its plugins",
		Long: `podadmctl works with the pod admission plugins of the kubelet's PodAdmissionPlugin
feature: the configuration named by --pod-admission-plugin-config and the Exec
plugins in --pod-admission-plugin-bin-dir.

It loads the configuration and runs plugins with the kubelet's own code, so its
verdict on a pod is the kubelet's.`,
		SilenceUsage: true,
		// The subcommands take the arguments; a bare "podadmctl" prints help.
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
		// cli.Run turns contextual logging off, as in the Kubernetes
		// components; check needs it to keep the chain's decision logs
		// (which its report shows) out of stderr unless -v asks for them.
		PersistentPreRun: func(*cobra.Command, []string) { klog.EnableContextualLogging(true) },
	}
	cmd.AddCommand(newValidateCommand(s), newCheckCommand(s), newVersionCommand(s))
	return cmd
}

// usageError is a mistake in how podadmctl was called.
func usageError(err error) error { return &exitError{code: ExitError, err: err} }
