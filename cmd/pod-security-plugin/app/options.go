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
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"
	psaapi "k8s.io/pod-security-admission/api"
)

// Options are the policy's flags, set in the PodAdmissionConfiguration's
// args of the Exec plugin, or on the GRPC daemon's command line.
type Options struct {
	Level                string
	Version              string
	ExemptNamespaces     []string
	ExemptRuntimeClasses []string
	ExemptStaticPods     bool
}

// AddFlags adds the policy's flags, with their defaults, to fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Level, "level", string(psaapi.LevelBaseline), "Pod Security Standards level to enforce: baseline or restricted")
	fs.StringVar(&o.Version, "version", "latest", `Pod Security Standards version: "latest" or a Kubernetes minor such as "v1.37"`)
	fs.StringSliceVar(&o.ExemptNamespaces, "exempt-namespaces", nil, "namespaces whose pods are admitted without checks (comma-separated)")
	fs.StringSliceVar(&o.ExemptRuntimeClasses, "exempt-runtime-classes", nil, "runtimeClassNames whose pods are admitted without checks (comma-separated)")
	fs.BoolVar(&o.ExemptStaticPods, "exempt-static-pods", false, "admit static pods (from the node's manifest directory) without checks")
}

// Validate checks the flags, as NewPolicy does; every error names its flag.
func (o *Options) Validate() error {
	_, err := o.levelVersion()
	return err
}

// levelVersion returns the level and version to enforce; errors name the
// flag.
func (o *Options) levelVersion() (psaapi.LevelVersion, error) {
	var errs []error
	level, err := psaapi.ParseLevel(o.Level)
	switch {
	case err != nil:
		errs = append(errs, fmt.Errorf("--level %q: must be %s or %s", o.Level, psaapi.LevelBaseline, psaapi.LevelRestricted))
	case level == psaapi.LevelPrivileged:
		errs = append(errs, fmt.Errorf("--level %q: must be %s or %s (privileged admits every pod: remove the plugin instead)", o.Level, psaapi.LevelBaseline, psaapi.LevelRestricted))
	}
	version, err := psaapi.ParseVersion(o.Version)
	if err != nil {
		errs = append(errs, fmt.Errorf("--version %q: %v", o.Version, err))
	}
	for _, ns := range o.ExemptNamespaces {
		if problems := validation.IsDNS1123Label(ns); len(problems) > 0 {
			errs = append(errs, fmt.Errorf("--exempt-namespaces: %q is not a namespace name: %s", ns, strings.Join(problems, "; ")))
		}
	}
	for _, rc := range o.ExemptRuntimeClasses {
		if problems := validation.IsDNS1123Subdomain(rc); len(problems) > 0 {
			errs = append(errs, fmt.Errorf("--exempt-runtime-classes: %q is not a runtime class name: %s", rc, strings.Join(problems, "; ")))
		}
	}
	if len(errs) > 0 {
		// One line: the kubelet quotes the plugin's stderr in the pod's
		// status message.
		return psaapi.LevelVersion{}, errors.New(joinErrors(errs))
	}
	return psaapi.LevelVersion{Level: level, Version: version}, nil
}

func joinErrors(errs []error) string {
	msgs := make([]string, len(errs))
	for i, err := range errs {
		msgs[i] = err.Error()
	}
	return strings.Join(msgs, "; ")
}
