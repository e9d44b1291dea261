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
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"sigs.k8s.io/yaml"

	configv1alpha1 "github.com/podadmission/podadmission/pkg/apis/config/v1alpha1"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission"
)

type validateOptions struct {
	binDir string
	output string
}

func newValidateCommand(s streams) *cobra.Command {
	o := &validateOptions{}
	cmd := &cobra.Command{
		Use:   "validate PATH",
		Short: "Load a pod admission configuration file or directory as the kubelet does and report every error",
		Long: `validate loads PATH, a configuration file or directory, with the kubelet's
own loader, as the kubelet does at start and on every reload: files ending in
.yaml, .yml or .json in lexical order, strict decoding, defaults, validation,
duplicate names across files, the trust checks (the files and every directory
on the way to them, through symlinks, root owned and not group or world
writable), and the checks of the Exec plugins' executables in --bin-dir (the
bin dir and each executable, after symlinks every directory on the way to it,
trusted; a regular executable file). It prints every error with its file and
field and exits 1 if there is one: the kubelet would refuse to start with the
configuration, or keep its last good one. Otherwise it lists the plugins in
evaluation order, with their defaults filled in.

An executable that is not installed yet is no error, as for the kubelet: it
holds the pods of its plugin until the executable is there. validate warns
about each one.`,
		Example: `  podadmctl validate /etc/kubernetes/pod-admission
  podadmctl validate /etc/kubernetes/pod-admission --bin-dir /opt/pod-admission/bin
  podadmctl validate examples/pod-admission/10-pod-security.yaml -o yaml`,
		Args: exactArgs(1, "PATH"),
		RunE: func(_ *cobra.Command, args []string) error {
			return o.run(s, args[0])
		},
	}
	cmd.Flags().StringVar(&o.binDir, "bin-dir", defaultBinDir, `the kubelet's --pod-admission-plugin-bin-dir, where the Exec plugins' executables are; "" for a kubelet without the flag`)
	cmd.Flags().StringVarP(&o.output, "output", "o", "text", "output format: text or yaml (the defaulted configuration, one document per file)")
	return cmd
}

func (o *validateOptions) run(s streams, path string) error {
	if o.output != "text" && o.output != "yaml" {
		return usageError(fmt.Errorf("--output %q: want text or yaml", o.output))
	}
	if o.binDir != "" && !filepath.IsAbs(o.binDir) {
		return usageError(fmt.Errorf("--bin-dir %q: must be an absolute path, as the kubelet's --pod-admission-plugin-bin-dir", o.binDir))
	}
	cfg, err := podadmission.LoadNodeConfig(path, o.binDir)
	if err != nil {
		n := printErrors(s, err)
		fmt.Fprintf(s.err, "%s: invalid pod admission configuration (%d %s)\n", path, n, plural(n, "error", "errors"))
		return silentExit(ExitRejected)
	}
	// Valid, so every executable the kubelet's check finds at fault is one
	// that is not installed yet.
	for _, missing := range podadmission.CheckExecutables(cfg, o.binDir) {
		fmt.Fprintf(s.err, "warning: %v: the kubelet holds the pods this plugin matches until it is installed\n", missing)
	}
	if o.output == "yaml" {
		return printConfigYAML(s, cfg)
	}
	printConfigTable(s, path, cfg)
	return nil
}

func printConfigTable(s streams, path string, cfg *podadmission.Config) {
	fmt.Fprintf(s.out, "%s: valid: %d %s in %d %s, in evaluation order\n", path,
		len(cfg.Plugins), plural(len(cfg.Plugins), "plugin", "plugins"), len(cfg.Files), plural(len(cfg.Files), "file", "files"))
	if len(cfg.Plugins) == 0 {
		fmt.Fprintln(s.out, "No plugins: the kubelet admits every pod.")
		return
	}
	w := tabwriter.NewWriter(s.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "#\tNAME\tTYPE\tFILE\tTIMEOUT\tFAILURE POLICY\tREJECTION MODE\tMATCH")
	for i, p := range cfg.Plugins {
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", i+1, p.Name, p.Type, p.File, p.Timeout.Duration,
			p.FailurePolicy, rejectionMode(&p.PluginConfig), describeMatch(p.Match))
	}
	_ = w.Flush()
}

func rejectionMode(p *configv1alpha1.PluginConfig) string {
	if p.MaxBlockedDuration != nil {
		return fmt.Sprintf("%s (Hard after %s)", p.RejectionMode, p.MaxBlockedDuration.Duration)
	}
	return string(p.RejectionMode)
}

// describeMatch summarises a match section in one cell.
func describeMatch(m *configv1alpha1.PodMatch) string {
	if m == nil {
		return "all pods"
	}
	var parts []string
	if m.PodSource != "" && m.PodSource != configv1alpha1.AllPodSources {
		parts = append(parts, "source="+string(m.PodSource))
	}
	if len(m.Namespaces) > 0 {
		parts = append(parts, "namespaces="+strings.Join(m.Namespaces, ","))
	}
	if len(m.ExcludeNamespaces) > 0 {
		parts = append(parts, "excludeNamespaces="+strings.Join(m.ExcludeNamespaces, ","))
	}
	if m.PodSelector != nil {
		parts = append(parts, "podSelector="+metav1.FormatLabelSelector(m.PodSelector))
	}
	if len(parts) == 0 {
		return "all pods"
	}
	return strings.Join(parts, " ")
}

// printConfigYAML prints the defaulted configuration of each file as one
// YAML document, preceded by a comment naming the file.
func printConfigYAML(s streams, cfg *podadmission.Config) error {
	byFile := map[string][]configv1alpha1.PluginConfig{}
	for _, p := range cfg.Plugins {
		byFile[p.File] = append(byFile[p.File], p.PluginConfig)
	}
	for i, file := range cfg.Files {
		doc := &configv1alpha1.PodAdmissionConfiguration{
			TypeMeta: metav1.TypeMeta{APIVersion: configv1alpha1.SchemeGroupVersion.String(), Kind: "PodAdmissionConfiguration"},
			// A file without plugins prints "plugins: []", as it may be written.
			Plugins: append([]configv1alpha1.PluginConfig{}, byFile[file]...),
		}
		data, err := yaml.Marshal(doc)
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		if i > 0 {
			fmt.Fprintln(s.out, "---")
		}
		fmt.Fprintf(s.out, "# %s\n%s", file, data)
	}
	return nil
}

// printErrors prints each error err holds on a line of its own, and returns
// how many there are.
func printErrors(s streams, err error) int {
	errs := []error{err}
	var agg utilerrors.Aggregate
	if errors.As(err, &agg) {
		errs = utilerrors.Flatten(agg).Errors()
	}
	for _, e := range errs {
		fmt.Fprintf(s.err, "error: %v\n", e)
	}
	return len(errs)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// exactArgs is cobra.ExactArgs with a message that names the argument and
// an exit code for usage errors.
func exactArgs(n int, names string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usageError(fmt.Errorf("%s needs %s, got %d %s", cmd.CommandPath(), names, len(args), plural(len(args), "argument", "arguments")))
		}
		return nil
	}
}
