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

package podadmission

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	configv1alpha1 "github.com/podadmission/podadmission/pkg/apis/config/v1alpha1"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/trust"
)

// CheckExecEnv checks the environment every Exec plugin of cfg is
// configured with, the way the Exec transport checks it before every call
// (trust.CheckEnv): a variable that makes the dynamic loader or an
// interpreter load code (LD_PRELOAD, PYTHONPATH, ...) must name only
// trusted paths, and one whose value cannot be checked (NODE_OPTIONS, ...)
// is refused. Each error names the file, the field and the path.
func CheckExecEnv(cfg *Config) []error {
	var errs []error
	for _, p := range cfg.Plugins {
		if p.Type != configv1alpha1.ExecPluginType {
			continue
		}
		env := field.NewPath("plugins").Index(p.Index).Child("env")
		for j, v := range p.Env {
			err := trust.CheckEnv(v.Name, v.Value)
			var envErr *trust.EnvError
			if !errors.As(err, &envErr) {
				continue
			}
			var fieldErr *field.Error
			if envErr.Path == "" {
				fieldErr = field.Forbidden(env.Index(j).Child("name"), fmt.Sprintf("%s: %s", v.Name, envErr.Reason))
			} else {
				fieldErr = field.Invalid(env.Index(j).Child("value"), v.Value, fmt.Sprintf("%s names %s: %s: %v", v.Name, envErr.Path, envErr.Reason, envErr.Err))
			}
			errs = append(errs, fmt.Errorf("%s: %w", p.File, fieldErr))
		}
	}
	return errs
}
