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

// Package testing holds what the tests of pod-security-plugin's two forms
// share: the upstream Pod Security Standards fixtures and the kubelet's
// requests, so that the Exec plugin and the GRPC daemon are held to the
// same table.
package testing

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	k8sapiv1 "k8s.io/kubernetes/pkg/apis/core/v1"
	"sigs.k8s.io/yaml"
)

// Fixture is one upstream fixture: a pod that Level at Version must admit
// (Pass) or reject.
type Fixture struct {
	// Name is the fixture's path under the module's test/testdata, such
	// as "baseline/v1.0/fail/hostnetwork0.yaml".
	Name    string
	Level   string
	Version string
	Pass    bool
	Pod     *corev1.Pod
}

// UpstreamFixtures returns the fixtures of the k8s.io/pod-security-admission
// module this plugin is built with: for each level and policy version, pods
// that must pass and pods that must fail. They are ordered by level,
// version, pass before fail, then name.
func UpstreamFixtures(t testing.TB) []Fixture {
	t.Helper()
	testdata := filepath.Join(psaModuleDir(t), "test", "testdata")
	var fixtures []Fixture
	for _, level := range []string{"baseline", "restricted"} {
		versions, err := os.ReadDir(filepath.Join(testdata, level))
		require.NoError(t, err)
		require.NotEmpty(t, versions)
		for _, version := range versions {
			for _, expect := range []string{"pass", "fail"} {
				files, err := filepath.Glob(filepath.Join(testdata, level, version.Name(), expect, "*.yaml"))
				require.NoError(t, err)
				sort.Strings(files)
				for _, file := range files {
					name, err := filepath.Rel(testdata, file)
					require.NoError(t, err)
					fixtures = append(fixtures, Fixture{
						Name: name, Level: level, Version: version.Name(), Pass: expect == "pass",
						Pod: readFixture(t, file),
					})
				}
			}
		}
	}
	return fixtures
}

// psaModuleDir returns the directory of the k8s.io/pod-security-admission
// module this plugin is built with; its test/testdata holds the fixtures.
func psaModuleDir(t testing.TB) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "k8s.io/pod-security-admission").Output()
	require.NoError(t, err, "go list -m k8s.io/pod-security-admission")
	dir := strings.TrimSpace(string(out))
	require.DirExists(t, filepath.Join(dir, "test", "testdata"))
	return dir
}

// apiDefaults applies the defaults the API server gives a pod before the
// kubelet sees it (upstream runs the fixtures through an API server too: a
// volume without a source is an emptyDir).
var apiDefaults = runtime.NewScheme()

func init() {
	utilruntime.Must(k8sapiv1.RegisterDefaults(apiDefaults))
}

func readFixture(t testing.TB, path string) *corev1.Pod {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	pod := &corev1.Pod{}
	require.NoError(t, yaml.UnmarshalStrict(data, pod), path)
	apiDefaults.Default(pod)
	if pod.Namespace == "" {
		pod.Namespace = "default"
	}
	return pod
}
