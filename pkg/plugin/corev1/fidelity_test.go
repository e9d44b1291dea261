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

package corev1_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	sigsjson "sigs.k8s.io/json"

	lean "github.com/podadmission/podadmission/pkg/plugin/corev1"
	"github.com/podadmission/podadmission/pkg/plugin/internal/randpod"
)

// TestDecodingGivesTheSameJSON: a pod as the kubelet writes it into a
// request (encoding/json, v1alpha1.EncodeRequest) decodes into the lean
// types and marshals back to the JSON that decoding it into
// k8s.io/api/core/v1's types (strictly, as the SDK did) and marshalling it
// gives, for random pods that reach every field. (That is the request's
// JSON itself, but for a pointer to a zero time, which JSON writes as null
// and which reads back as no pointer.)
func TestDecodingGivesTheSameJSON(t *testing.T) {
	for seed := range int64(300) {
		var pod corev1.Pod
		var info corev1.NodeSystemInfo
		f := randpod.Filler(seed, 0.3, 0)
		f.Fill(&pod)
		f.Fill(&info)
		for name, tc := range map[string]struct {
			in, upstream any
			out          json.Unmarshaler
		}{
			"Pod":            {in: &pod, upstream: &corev1.Pod{}, out: &lean.Pod{}},
			"NodeSystemInfo": {in: &info, upstream: &corev1.NodeSystemInfo{}, out: &lean.NodeSystemInfo{}},
		} {
			data, err := json.Marshal(tc.in)
			require.NoError(t, err)
			strictErrs, err := sigsjson.UnmarshalStrict(data, tc.upstream)
			require.NoError(t, err)
			require.Empty(t, strictErrs)
			want, err := json.Marshal(tc.upstream)
			require.NoError(t, err)

			require.NoError(t, tc.out.UnmarshalJSON(data), "seed %d: %s", seed, name)
			got, err := json.Marshal(tc.out)
			require.NoError(t, err)
			if string(want) != string(got) {
				t.Fatalf("seed %d: %s: the JSON differs: %s", seed, name, firstDifference(want, got))
			}
		}
	}
}

// firstDifference shows where a and b start to differ.
func firstDifference(a, b []byte) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	from := max(i-80, 0)
	return fmt.Sprintf("at byte %d:\n  want ...%s\n  got  ...%s", i, a[from:min(i+40, len(a))], b[from:min(i+40, len(b))])
}

// TestTypesAreUpstreams: the lean types have upstream's fields, in
// upstream's order, with its JSON tags and embedding, and its kinds of
// values (the apimachinery types replaced).
func TestTypesAreUpstreams(t *testing.T) {
	replaced := map[reflect.Type]reflect.Type{
		reflect.TypeFor[resource.Quantity]():  reflect.TypeFor[lean.Quantity](),
		reflect.TypeFor[metav1.Time]():        reflect.TypeFor[lean.Time](),
		reflect.TypeFor[intstr.IntOrString](): reflect.TypeFor[lean.IntOrString](),
		reflect.TypeFor[metav1.FieldsV1]():    reflect.TypeFor[lean.FieldsV1](),
	}
	seen := map[reflect.Type]bool{}
	var compare func(up, got reflect.Type, where string)
	compare = func(up, got reflect.Type, where string) {
		if r, ok := replaced[up]; ok {
			assert.Equal(t, r, got, where)
			return
		}
		if seen[up] {
			return
		}
		seen[up] = true
		require.Equal(t, up.Kind(), got.Kind(), where)
		assert.Equal(t, up.Name(), got.Name(), where)
		switch up.Kind() {
		case reflect.Struct:
			require.Equal(t, up.NumField(), got.NumField(), "%s: fields", where)
			for i := range up.NumField() {
				uf, gf := up.Field(i), got.Field(i)
				at := where + "." + uf.Name
				assert.Equal(t, uf.Name, gf.Name, at)
				assert.Equal(t, uf.Anonymous, gf.Anonymous, "%s: embedded", at)
				assert.Equal(t, uf.Tag.Get("json"), gf.Tag.Get("json"), "%s: json tag", at)
				compare(uf.Type, gf.Type, at)
			}
		case reflect.Pointer, reflect.Slice:
			compare(up.Elem(), got.Elem(), where+"[]")
		case reflect.Map:
			compare(up.Key(), got.Key(), where+"{key}")
			compare(up.Elem(), got.Elem(), where+"{}")
		}
	}
	compare(reflect.TypeFor[corev1.Pod](), reflect.TypeFor[lean.Pod](), "Pod")
	compare(reflect.TypeFor[corev1.NodeSystemInfo](), reflect.TypeFor[lean.NodeSystemInfo](), "NodeSystemInfo")
	assert.Greater(t, len(seen), 150, "the walk reached the pod's types")
}

// TestConstantsAreUpstreams spot-checks the constants copied from
// upstream's source.
func TestConstantsAreUpstreams(t *testing.T) {
	assert.Equal(t, string(corev1.ResourceCPU), string(lean.ResourceCPU))
	assert.Equal(t, string(corev1.RestartPolicyAlways), string(lean.RestartPolicyAlways))
	assert.Equal(t, string(corev1.PullIfNotPresent), string(lean.PullIfNotPresent))
	assert.Equal(t, string(corev1.TaintEffectNoExecute), string(lean.TaintEffectNoExecute))
	assert.Equal(t, string(metav1.LabelSelectorOpIn), string(lean.LabelSelectorOpIn))
}

func TestTimeIsMetav1s(t *testing.T) {
	instant := time.Date(2026, 11, 29, 10, 0, 0, 0, time.FixedZone("CET", 3600))
	for _, tm := range []time.Time{{}, instant} {
		want, err := json.Marshal(metav1.NewTime(tm))
		require.NoError(t, err)
		got, err := json.Marshal(lean.Time{Time: tm})
		require.NoError(t, err)
		assert.Equal(t, string(want), string(got))
		var back lean.Time
		require.NoError(t, json.Unmarshal(got, &back))
		assert.True(t, back.Equal(tm), "%s", got)
	}
	var nilTime *lean.Time
	assert.True(t, nilTime.IsZero())
}

func TestIntOrStringIsIntstrs(t *testing.T) {
	for _, v := range []intstr.IntOrString{intstr.FromInt32(8080), intstr.FromInt32(-1), intstr.FromString("http"), intstr.FromString("8080"), intstr.FromString("<é>")} {
		want, err := json.Marshal(v)
		require.NoError(t, err)
		var got lean.IntOrString
		require.NoError(t, json.Unmarshal(want, &got))
		again, err := json.Marshal(got)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(again))
		assert.Equal(t, v.String(), got.String())
		assert.Equal(t, v.IntValue(), got.IntValue())
	}
	assert.Equal(t, lean.IntOrString{Type: lean.Int, IntVal: 80}, lean.FromInt32(80))
	assert.Equal(t, lean.IntOrString{Type: lean.String, StrVal: "http"}, lean.FromString("http"))
}
