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

// Package validation checks a defaulted PodAdmissionConfiguration. Errors are
// field.ErrorList entries whose paths start at the file's root, so callers
// prefix them with the file name and nothing else.
package validation

import (
	"fmt"
	"path/filepath"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	configv1alpha1 "github.com/podadmission/podadmission/pkg/apis/config/v1alpha1"
)

// UnixSocketScheme is the URL scheme a GRPC endpoint may use.
const UnixSocketScheme = "unix://"

// maxUnixSocketPathLen is the longest path a unix socket can have on Linux:
// sun_path holds 108 bytes including the terminating NUL.
const maxUnixSocketPathLen = 107

var (
	supportedPluginTypes   = []configv1alpha1.PluginType{configv1alpha1.ExecPluginType, configv1alpha1.GRPCPluginType}
	supportedFailurePolicy = []configv1alpha1.FailurePolicy{configv1alpha1.FailurePolicyFail, configv1alpha1.FailurePolicyIgnore}
	supportedRejectionMode = []configv1alpha1.RejectionMode{configv1alpha1.RejectionModeSoft, configv1alpha1.RejectionModeHard}
	supportedPodSources    = []configv1alpha1.PodSource{configv1alpha1.AllPodSources, configv1alpha1.APIPodSource, configv1alpha1.StaticPodSource}
)

// ValidatePodAdmissionConfiguration checks one defaulted configuration file.
// Plugin names must also be unique across files; the loader checks that.
func ValidatePodAdmissionConfiguration(cfg *configv1alpha1.PodAdmissionConfiguration) field.ErrorList {
	var errs field.ErrorList
	pluginsPath := field.NewPath("plugins")
	if cfg.Plugins == nil {
		// A half-written file reads as "plugins:" or as apiVersion and kind
		// alone; an explicit empty list is the only way to list none.
		errs = append(errs, field.Required(pluginsPath, `must be a list of plugins; write "plugins: []" for none`))
	}
	seen := sets.New[string]()
	for i := range cfg.Plugins {
		path := pluginsPath.Index(i)
		plugin := &cfg.Plugins[i]
		errs = append(errs, ValidatePluginConfig(plugin, path)...)
		if plugin.Name != "" {
			if seen.Has(plugin.Name) {
				errs = append(errs, field.Duplicate(path.Child("name"), plugin.Name))
			}
			seen.Insert(plugin.Name)
		}
	}
	return errs
}

// ValidatePluginConfig checks one defaulted plugin at path.
func ValidatePluginConfig(p *configv1alpha1.PluginConfig, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if p.Name == "" {
		errs = append(errs, field.Required(path.Child("name"), ""))
	} else {
		for _, msg := range validation.IsDNS1123Label(p.Name) {
			errs = append(errs, field.Invalid(path.Child("name"), p.Name, msg))
		}
	}

	switch p.Type {
	case configv1alpha1.ExecPluginType:
		if p.Endpoint != "" {
			errs = append(errs, field.Forbidden(path.Child("endpoint"), "only GRPC plugins have an endpoint; an Exec plugin is the executable named like the plugin in the plugin bin dir"))
		}
		if p.ServerUID != nil {
			errs = append(errs, field.Forbidden(path.Child("serverUID"), "only GRPC plugins have a server"))
		}
		errs = append(errs, validateArgs(p.Args, path.Child("args"))...)
		errs = append(errs, validateEnv(p.Env, path.Child("env"))...)
	case configv1alpha1.GRPCPluginType:
		errs = append(errs, validateEndpoint(p.Endpoint, path.Child("endpoint"))...)
		if uid := p.ServerUID; uid != nil && (*uid < 0 || *uid > configv1alpha1.MaxServerUID) {
			errs = append(errs, field.Invalid(path.Child("serverUID"), *uid, fmt.Sprintf("must be a user id between 0 and %d", configv1alpha1.MaxServerUID)))
		}
		if len(p.Args) > 0 {
			errs = append(errs, field.Forbidden(path.Child("args"), "only Exec plugins take args"))
		}
		if len(p.Env) > 0 {
			errs = append(errs, field.Forbidden(path.Child("env"), "only Exec plugins take env"))
		}
	case "":
		errs = append(errs, field.Required(path.Child("type"), "must be "+quoteAlternatives(supportedPluginTypes)))
	default:
		errs = append(errs, field.NotSupported(path.Child("type"), p.Type, supportedPluginTypes))
	}

	errs = append(errs, validateTimeout(p.Timeout, path.Child("timeout"))...)
	if p.MaxConcurrentCalls == nil {
		errs = append(errs, field.Required(path.Child("maxConcurrentCalls"), ""))
	} else if n := *p.MaxConcurrentCalls; n < 1 || n > configv1alpha1.MaxConcurrentCallsLimit {
		errs = append(errs, field.Invalid(path.Child("maxConcurrentCalls"), n, fmt.Sprintf("must be between 1 and %d", configv1alpha1.MaxConcurrentCallsLimit)))
	}
	errs = append(errs, validateEnum(p.FailurePolicy, supportedFailurePolicy, path.Child("failurePolicy"))...)
	errs = append(errs, validateEnum(p.RejectionMode, supportedRejectionMode, path.Child("rejectionMode"))...)

	if d := p.MaxBlockedDuration; d != nil {
		if d.Duration <= 0 {
			errs = append(errs, field.Invalid(path.Child("maxBlockedDuration"), d.Duration.String(), "must be greater than 0"))
		}
		if p.RejectionMode == configv1alpha1.RejectionModeHard {
			errs = append(errs, field.Forbidden(path.Child("maxBlockedDuration"), "only applies to rejectionMode Soft: a Hard rejection fails the pod at once"))
		}
	}

	if p.Match != nil {
		errs = append(errs, validateMatch(p.Match, path.Child("match"))...)
	}
	return errs
}

func validateTimeout(d *metav1.Duration, path *field.Path) field.ErrorList {
	switch {
	case d == nil:
		return field.ErrorList{field.Required(path, "")}
	case d.Duration <= 0:
		return field.ErrorList{field.Invalid(path, d.Duration.String(), "must be greater than 0")}
	case d.Duration > configv1alpha1.MaxTimeout:
		return field.ErrorList{field.Invalid(path, d.Duration.String(), fmt.Sprintf("must be at most %s", configv1alpha1.MaxTimeout))}
	}
	return nil
}

func validateEnum[T ~string](value T, supported []T, path *field.Path) field.ErrorList {
	if value == "" {
		return field.ErrorList{field.Required(path, "must be "+quoteAlternatives(supported))}
	}
	for _, s := range supported {
		if value == s {
			return nil
		}
	}
	return field.ErrorList{field.NotSupported(path, value, supported)}
}

// validateEndpoint accepts an absolute socket path, bare or as a unix:// URL.
func validateEndpoint(endpoint string, path *field.Path) field.ErrorList {
	if endpoint == "" {
		return field.ErrorList{field.Required(path, "a GRPC plugin needs the unix socket it serves on")}
	}
	socket, err := SocketPath(endpoint)
	if err != nil {
		return field.ErrorList{field.Invalid(path, endpoint, err.Error())}
	}
	if len(socket) > maxUnixSocketPathLen {
		return field.ErrorList{field.Invalid(path, endpoint, fmt.Sprintf("socket path must be at most %d bytes long", maxUnixSocketPathLen))}
	}
	return nil
}

// SocketPath returns the file system path of a GRPC endpoint: an absolute
// path, or a unix:// URL of one.
func SocketPath(endpoint string) (string, error) {
	socket := endpoint
	if rest, ok := strings.CutPrefix(endpoint, UnixSocketScheme); ok {
		socket = rest
	} else if strings.Contains(endpoint, "://") {
		return "", fmt.Errorf("must be a unix socket: an absolute path or a %s URL", UnixSocketScheme)
	}
	if !filepath.IsAbs(socket) {
		return "", fmt.Errorf("must be a unix socket: an absolute path or a %s URL", UnixSocketScheme)
	}
	if filepath.Clean(socket) != socket {
		return "", fmt.Errorf("socket path must be clean (no //, ., .. or trailing /), like %q", filepath.Clean(socket))
	}
	return socket, nil
}

func validateArgs(args []string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, arg := range args {
		if strings.ContainsRune(arg, 0) {
			errs = append(errs, field.Invalid(path.Index(i), arg, "must not contain a NUL byte"))
		}
	}
	return errs
}

func validateEnv(env []configv1alpha1.ExecEnvVar, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, v := range env {
		namePath := path.Index(i).Child("name")
		if v.Name == "" {
			errs = append(errs, field.Required(namePath, ""))
		} else {
			for _, msg := range validation.IsEnvVarName(v.Name) {
				errs = append(errs, field.Invalid(namePath, v.Name, msg))
			}
		}
		if seen.Has(v.Name) {
			errs = append(errs, field.Duplicate(namePath, v.Name))
		}
		seen.Insert(v.Name)
		if strings.ContainsRune(v.Value, 0) {
			errs = append(errs, field.Invalid(path.Index(i).Child("value"), v.Value, "must not contain a NUL byte"))
		}
	}
	return errs
}

func validateMatch(m *configv1alpha1.PodMatch, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	included := sets.New[string]()
	errs = append(errs, validateNamespaces(m.Namespaces, path.Child("namespaces"), included)...)
	excluded := sets.New[string]()
	errs = append(errs, validateNamespaces(m.ExcludeNamespaces, path.Child("excludeNamespaces"), excluded)...)
	for i, ns := range m.ExcludeNamespaces {
		if included.Has(ns) {
			errs = append(errs, field.Invalid(path.Child("excludeNamespaces").Index(i), ns, "must not also be listed in namespaces"))
		}
	}
	if m.PodSelector != nil {
		selectorPath := path.Child("podSelector")
		selectorErrs := metav1validation.ValidateLabelSelector(m.PodSelector, metav1validation.LabelSelectorValidationOptions{}, selectorPath)
		errs = append(errs, selectorErrs...)
		if len(selectorErrs) == 0 {
			if _, err := metav1.LabelSelectorAsSelector(m.PodSelector); err != nil {
				errs = append(errs, field.Invalid(selectorPath, m.PodSelector, err.Error()))
			}
		}
	}
	errs = append(errs, validateEnum(m.PodSource, supportedPodSources, path.Child("podSource"))...)
	return errs
}

// validateNamespaces checks namespace names and collects them into seen.
func validateNamespaces(namespaces []string, path *field.Path, seen sets.Set[string]) field.ErrorList {
	var errs field.ErrorList
	for i, ns := range namespaces {
		for _, msg := range validation.IsDNS1123Label(ns) {
			errs = append(errs, field.Invalid(path.Index(i), ns, msg))
		}
		if seen.Has(ns) {
			errs = append(errs, field.Duplicate(path.Index(i), ns))
		}
		seen.Insert(ns)
	}
	return errs
}

// quoteAlternatives renders ["A", "B", "C"] as `"A", "B" or "C"`.
func quoteAlternatives[T ~string](values []T) string {
	quoted := make([]string, len(values))
	for i, v := range values {
		quoted[i] = fmt.Sprintf("%q", v)
	}
	if len(quoted) < 2 {
		return strings.Join(quoted, "")
	}
	return strings.Join(quoted[:len(quoted)-1], ", ") + " or " + quoted[len(quoted)-1]
}
