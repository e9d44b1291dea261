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
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDefaults(t *testing.T) {
	o := &Options{}
	o.AddFlags(pflag.NewFlagSet("test", pflag.ContinueOnError))
	assert.Equal(t, &Options{Level: "baseline", Version: "latest"}, o)
	assert.NoError(t, o.Validate())
}

func TestOptionErrorsNameTheFlag(t *testing.T) {
	for name, tc := range map[string]struct {
		o    Options
		want string
	}{
		"level":      {Options{Level: "strict", Version: "latest"}, `--level "strict": must be baseline or restricted`},
		"privileged": {Options{Level: "privileged", Version: "latest"}, `--level "privileged": must be baseline or restricted (privileged admits every pod: remove the plugin instead)`},
		"version":    {Options{Level: "baseline", Version: "1.37"}, `--version "1.37": must be "latest" or "v1.x"`},
		"namespace":  {Options{Level: "baseline", Version: "latest", ExemptNamespaces: []string{"Kube_System"}}, `--exempt-namespaces: "Kube_System" is not a namespace name: a lowercase RFC 1123 label`},
		"runtime class": {Options{Level: "baseline", Version: "latest", ExemptRuntimeClasses: []string{"not valid"}},
			`--exempt-runtime-classes: "not valid" is not a runtime class name: a lowercase RFC 1123 subdomain`},
		"several": {Options{Level: "", Version: "next"}, `--level "": must be baseline or restricted; --version "next": must be "latest" or "v1.x"`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := NewPolicy(&tc.o)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), "\n")
			assert.EqualError(t, tc.o.Validate(), err.Error(), "Validate refuses what NewPolicy refuses")
		})
	}
}
