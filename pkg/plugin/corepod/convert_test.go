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

package corepod_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/randfill"

	"github.com/podadmission/podadmission/pkg/plugin"
	"github.com/podadmission/podadmission/pkg/plugin/corepod"
	sdk "github.com/podadmission/podadmission/pkg/plugin/corev1"
	"github.com/podadmission/podadmission/pkg/plugin/internal/randpod"
)

// The conversion is checked against what it replaces: decoding the pod's
// JSON into k8s.io/api/core/v1's Pod with sigs.k8s.io/json's
// UnmarshalStrict, the kubelet's decoding. A conversion that dropped or
// mangled a field (securityContext.privileged, say) would let a security
// plugin judge a pod the kubelet does not run.

// decodeBoth decodes a pod's JSON as the kubelet does and as the SDK does.
func decodeBoth(t *testing.T, data []byte) (*corev1.Pod, *sdk.Pod) {
	t.Helper()
	var want corev1.Pod
	strictErrs, err := sigsjson.UnmarshalStrict(data, &want)
	require.NoError(t, err, "%s", data)
	require.Empty(t, strictErrs, "%s", data)
	var lean sdk.Pod
	require.NoError(t, lean.UnmarshalJSON(data), "%s", data)
	return &want, &lean
}

// requireSamePod fails unless got is want: semantically, as Kubernetes
// compares objects, and exactly, which semantic equality is not (it takes
// nil for empty and "0.5" for "500m").
func requireSamePod(t *testing.T, want, got *corev1.Pod, msgAndArgs ...any) {
	t.Helper()
	assert.True(t, apiequality.Semantic.DeepEqual(want, got), msgAndArgs...)
	require.Equal(t, want, got, msgAndArgs...)
}

// randomPodJSON returns the JSON of a random pod.
func randomPodJSON(t *testing.T, f *randfill.Filler) []byte {
	t.Helper()
	var pod corev1.Pod
	f.Fill(&pod)
	data, err := json.Marshal(&pod)
	require.NoError(t, err)
	return data
}

// TestConversionIsTheDecodedPod: for random pods that reach every field,
// each nil, empty or set, Pod and OldPod convert the SDK's decoding of a
// pod's JSON into the pod the kubelet's decoding of it gives.
func TestConversionIsTheDecodedPod(t *testing.T) {
	for seed := range int64(300) {
		want, lean := decodeBoth(t, randomPodJSON(t, randpod.Filler(seed, 0.3, 0)))
		req := &plugin.Request{Pod: lean, OldPod: lean}

		got, err := corepod.Pod(req)
		require.NoError(t, err)
		requireSamePod(t, want, got, "seed %d: pod", seed)
		got, err = corepod.OldPod(req)
		require.NoError(t, err)
		requireSamePod(t, want, got, "seed %d: oldPod", seed)
	}
}

// TestConversionOfEdgeCases: what random pods seldom or never hold, nulls
// in particular, which decode to zero values that are not those of "0"
// or [].
func TestConversionOfEdgeCases(t *testing.T) {
	for name, data := range map[string]string{
		"null and zero quantities":         `{"spec":{"overhead":{"cpu":null,"memory":"0","pods":" 1.50 "},"containers":[{"env":[{"valueFrom":{"resourceFieldRef":{"divisor":null}}},{"valueFrom":{"resourceFieldRef":{"divisor":"0"}}}]}]}}`,
		"null and empty lists and maps":    `{"metadata":{"labels":{},"annotations":null,"finalizers":[]},"spec":{"tolerations":[],"containers":null,"nodeSelector":{},"volumes":[{"projected":{"sources":[]}}]}}`,
		"null, zoned and fractional times": `{"metadata":{"creationTimestamp":null,"deletionTimestamp":"2026-11-29T10:00:00.25+01:00"},"status":{"conditions":[{"lastProbeTime":null,"lastTransitionTime":"2026-11-29T10:00:00Z"}]}}`,
		"null and empty managed fields":    `{"metadata":{"managedFields":[{"fieldsV1":null},{"fieldsV1":{}},{"fieldsV1":{"f:spec":{}}}]}}`,
		"ports of both kinds and null":     `{"spec":{"containers":[{"readinessProbe":{"tcpSocket":{"port":null}},"livenessProbe":{"httpGet":{"port":"8080"}},"startupProbe":{"httpGet":{"port":-1}}}]}}`,
	} {
		t.Run(name, func(t *testing.T) {
			want, lean := decodeBoth(t, []byte(data))
			got, err := corepod.Pod(&plugin.Request{Pod: lean})
			require.NoError(t, err)
			requireSamePod(t, want, got)
		})
	}

	// The one difference: a zero time sent as a string, which metav1.Time
	// never writes (it writes null), converts to the zero time, where
	// metav1.Time's decoding moves it to the local zone. It is the same
	// instant.
	want, lean := decodeBoth(t, []byte(`{"metadata":{"creationTimestamp":"0001-01-01T00:00:00Z"}}`))
	got, err := corepod.Pod(&plugin.Request{Pod: lean})
	require.NoError(t, err)
	assert.True(t, apiequality.Semantic.DeepEqual(want, got))
	assert.True(t, got.CreationTimestamp.IsZero())
}

// TestConversionSetsEveryField: pods that set every field, converted,
// are the decoded pods, and between them set every field of the types a
// k8s.io/api/core/v1 Pod reaches. A field the generator skipped would stay
// unset in every one.
func TestConversionSetsEveryField(t *testing.T) {
	set := map[string]bool{}
	for seed := range int64(20) {
		want, lean := decodeBoth(t, randomPodJSON(t, randpod.Filler(seed, 0, 1)))
		got, err := corepod.Pod(&plugin.Request{Pod: lean})
		require.NoError(t, err)
		requireSamePod(t, want, got, "seed %d", seed)
		setLeaves(reflect.ValueOf(got).Elem(), "Pod", set)
	}
	leaves := leafPaths(t, reflect.TypeFor[corev1.Pod](), "Pod", map[reflect.Type]bool{})
	var unset []string
	for _, path := range leaves {
		if !set[path] {
			unset = append(unset, path)
		}
	}
	assert.Empty(t, unset, "never set by the conversion")
	assert.Greater(t, len(leaves), 1000, "the walk reached the pod's fields")
}

// leaves are the types whose values are compared whole: apimachinery's
// types with unexported fields or a single value, and the scalars.
var leaves = map[reflect.Type]bool{
	reflect.TypeFor[resource.Quantity]():  true,
	reflect.TypeFor[metav1.Time]():        true,
	reflect.TypeFor[intstr.IntOrString](): true,
	reflect.TypeFor[metav1.FieldsV1]():    true,
}

func isLeaf(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int32, reflect.Int64, reflect.String:
		return true
	}
	return leaves[t]
}

// leafPaths lists the paths from a value of type t to every leaf it can
// hold: through struct fields (.Name), pointers, list elements ([]) and
// map values ({}).
func leafPaths(t *testing.T, typ reflect.Type, path string, inPath map[reflect.Type]bool) []string {
	if isLeaf(typ) {
		return []string{path}
	}
	require.False(t, inPath[typ], "%s: %s holds itself, which no random pod fills to the end", path, typ)
	inPath[typ] = true
	defer delete(inPath, typ)
	switch typ.Kind() {
	case reflect.Pointer:
		return leafPaths(t, typ.Elem(), path, inPath)
	case reflect.Slice:
		return leafPaths(t, typ.Elem(), path+"[]", inPath)
	case reflect.Map:
		return leafPaths(t, typ.Elem(), path+"{}", inPath)
	case reflect.Struct:
		var out []string
		for f := range typ.Fields() {
			out = append(out, leafPaths(t, f.Type, path+"."+f.Name, inPath)...)
		}
		return out
	}
	require.Failf(t, "unexpected kind", "%s: %s", path, typ)
	return nil
}

// setLeaves adds to set the paths (as leafPaths writes them) of the
// leaves of v that are not zero.
func setLeaves(v reflect.Value, path string, set map[string]bool) {
	if isLeaf(v.Type()) {
		if !v.IsZero() {
			set[path] = true
		}
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			setLeaves(v.Elem(), path, set)
		}
	case reflect.Slice:
		for i := range v.Len() {
			setLeaves(v.Index(i), path+"[]", set)
		}
	case reflect.Map:
		for _, e := range v.Seq2() {
			setLeaves(e, path+"{}", set)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			setLeaves(v.Field(i), path+"."+v.Type().Field(i).Name, set)
		}
	}
}

// TestConversionSharesNoMemory: the converted pod holds no pointer, list
// or map of the SDK's Pod, so a plugin that changes it changes nothing
// of the request.
func TestConversionSharesNoMemory(t *testing.T) {
	_, lean := decodeBoth(t, randomPodJSON(t, randpod.Filler(1, 0, 1)))
	got, err := corepod.Pod(&plugin.Request{Pod: lean})
	require.NoError(t, err)

	owner := map[uintptr]string{}
	references(reflect.ValueOf(lean), "Pod", func(p uintptr, path string) { owner[p] = path })
	require.Greater(t, len(owner), 500, "the walk reached the pod's fields")
	references(reflect.ValueOf(got), "Pod", func(p uintptr, path string) {
		if sdkPath, ok := owner[p]; ok {
			t.Errorf("%s is the SDK's %s", path, sdkPath)
		}
	})
}

// references calls f with the address of what each pointer, list and map
// that v reaches through exported fields refers to. An empty list or
// map, and a pointer to a value of no size, are left out: their address
// can be shared by every such value of the process.
func references(v reflect.Value, path string, f func(uintptr, string)) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() || v.Type().Elem().Size() == 0 {
			return
		}
		f(v.Pointer(), path)
		references(v.Elem(), path, f)
	case reflect.Slice:
		if v.Len() == 0 || v.Type().Elem().Size() == 0 {
			return
		}
		f(v.Pointer(), path)
		for i := range v.Len() {
			references(v.Index(i), fmt.Sprintf("%s[%d]", path, i), f)
		}
	case reflect.Map:
		if v.Len() == 0 {
			return
		}
		f(v.Pointer(), path)
		for k, e := range v.Seq2() {
			references(e, fmt.Sprintf("%s[%q]", path, k), f)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if field := v.Type().Field(i); field.IsExported() {
				references(v.Field(i), path+"."+field.Name, f)
			}
		}
	}
}

// TestConversionOfTheSeedPods: the hand-written pods of the SDK's fuzz
// seeds (escapes, nulls, odd quantities and times), alone or in requests,
// that the SDK decodes convert to the pods the kubelet's decoding gives.
// What the SDK rejects is its decoder's tests' business.
func TestConversionOfTheSeedPods(t *testing.T) {
	converted := 0
	pods, err := filepath.Glob("../corev1/testdata/fuzz/FuzzDecodePod/*")
	require.NoError(t, err)
	for _, file := range pods {
		data := seedInput(t, file)
		var lean sdk.Pod
		if lean.UnmarshalJSON(data) != nil {
			continue
		}
		want, _ := decodeBoth(t, data)
		got, err := corepod.Pod(&plugin.Request{Pod: &lean})
		require.NoError(t, err, file)
		requireSamePod(t, want, got, file)
		converted++
	}
	requests, err := filepath.Glob("../testdata/fuzz/FuzzDecodeRequest/*")
	require.NoError(t, err)
	for _, file := range requests {
		req, err := plugin.DecodeRequest(seedInput(t, file))
		if err != nil {
			continue
		}
		want, _ := decodeBoth(t, req.PodJSON)
		got, err := corepod.Pod(req)
		require.NoError(t, err, file)
		requireSamePod(t, want, got, file)
		converted++
		if req.OldPodJSON != nil {
			want, _ := decodeBoth(t, req.OldPodJSON)
			got, err := corepod.OldPod(req)
			require.NoError(t, err, file)
			requireSamePod(t, want, got, file)
			converted++
		}
	}
	assert.GreaterOrEqual(t, converted, 10)
}

// seedInput returns the input of a fuzz seed file of one []byte.
func seedInput(t *testing.T, file string) []byte {
	t.Helper()
	src, err := os.ReadFile(file)
	require.NoError(t, err)
	version, value, _ := strings.Cut(string(src), "\n")
	require.Equal(t, "go test fuzz v1", version, file)
	literal, ok := strings.CutPrefix(strings.TrimSpace(value), "[]byte(")
	require.True(t, ok, "%s: not a []byte", file)
	s, err := strconv.Unquote(strings.TrimSuffix(literal, ")"))
	require.NoError(t, err, file)
	return []byte(s)
}
