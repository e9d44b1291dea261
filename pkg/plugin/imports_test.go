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

package plugin

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// nonStandardDeps returns the packages pkg imports, directly or not, that
// are not the standard library's.
func nonStandardDeps(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", pkg).Output()
	require.NoError(t, err, "go list -deps %s", pkg)
	return strings.Fields(string(out))
}

const module = "github.com/podadmission/podadmission/"

// TestExecPluginsLinkNoKubernetesAPI: an Exec plugin starts once per call
// and pays for every package it links at every start. The SDK's core
// links the standard library, its own packages and apimachinery's field
// errors (the protocol's validation messages; their initialisation is
// negligible), and never k8s.io/api or apimachinery's meta/v1, which
// bring about 200 packages (docs/plugins.md).
func TestExecPluginsLinkNoKubernetesAPI(t *testing.T) {
	allowed := map[string]bool{
		"k8s.io/apimachinery/pkg/util/validation/field": true,
		"k8s.io/apimachinery/pkg/util/errors":           true,
		"k8s.io/apimachinery/pkg/util/sets":             true,
	}
	for _, dep := range nonStandardDeps(t, module+"pkg/plugin") {
		assert.False(t, strings.HasPrefix(dep, "k8s.io/api/"), "pkg/plugin links %s", dep)
		assert.False(t, strings.HasPrefix(dep, "k8s.io/apimachinery/pkg/apis/meta"), "pkg/plugin links %s", dep)
		assert.True(t, strings.HasPrefix(dep, module) || allowed[dep], "pkg/plugin links %s: an Exec plugin would pay for it at every start", dep)
	}
}

// TestPodTypesLinkTheStandardLibraryOnly: package corev1 is the Pod
// without k8s.io/apimachinery.
func TestPodTypesLinkTheStandardLibraryOnly(t *testing.T) {
	assert.ElementsMatch(t, []string{module + "pkg/plugin/corev1", module + "pkg/plugin/internal/strictjson"},
		nonStandardDeps(t, module+"pkg/plugin/corev1"))
}
