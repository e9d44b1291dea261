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
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	sigsjson "sigs.k8s.io/json"

	lean "github.com/podadmission/podadmission/pkg/plugin/corev1"
)

// FuzzDecodePod checks the generated decoder against the kubelet's own
// decoding of a pod, sigs.k8s.io/json's UnmarshalStrict into
// k8s.io/api/core/v1's Pod (what the SDK did before): it accepts exactly
// what that accepts, and what it accepts means the same. Seeds live in
// testdata/fuzz/FuzzDecodePod.
//
// The one known difference is normalised: a Quantity keeps the text it
// was sent ("0.5"), where resource.Quantity keeps a number and writes it
// canonically ("500m"). So both pods are marshalled and decoded again
// into k8s.io/api/core/v1's types, which also drops what JSON does not
// carry (fractions of seconds), and compared with apimachinery's semantic
// equality.
func FuzzDecodePod(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		skipLongExponents(t, data)
		var got lean.Pod
		leanErr := got.UnmarshalJSON(data)
		var want corev1.Pod
		strictErrs, err := sigsjson.UnmarshalStrict(data, &want)
		upstreamAccepts := err == nil && len(strictErrs) == 0
		if upstreamAccepts != (leanErr == nil) {
			t.Fatalf("%q:\n  generated decoder: %v\n  sigs.k8s.io/json: %v %v", data, leanErr, err, strictErrs)
		}
		if leanErr != nil {
			require.NotEmpty(t, leanErr.Error())
			return
		}
		require.True(t, apiequality.Semantic.DeepEqual(reread(t, &want), reread(t, &got)), "%q", data)
	})
}

// longExponent is an exponent of 5 digits or more.
var longExponent = regexp.MustCompile(`[eE][-+]?[0-9]{5,}`)

// skipLongExponents skips an input with a long exponent, which
// apimachinery's ParseQuantity computes with (10 to its power, rounded to
// nano): it takes minutes or all memory on "1e999999999999999999". The
// generated decoder checks the syntax only.
func skipLongExponents(t *testing.T, data []byte) {
	if longExponent.Match(data) {
		t.Skip("apimachinery cannot parse a quantity with this exponent in reasonable time")
	}
}

// reread marshals pod and decodes it into k8s.io/api/core/v1's Pod.
func reread(t *testing.T, pod any) *corev1.Pod {
	data, err := json.Marshal(pod)
	require.NoError(t, err)
	var out corev1.Pod
	strictErrs, err := sigsjson.UnmarshalStrict(data, &out)
	require.NoError(t, err, "%s", data)
	require.Empty(t, strictErrs, "%s", data)
	return &out
}

// FuzzParseQuantity checks that ParseQuantity accepts what
// apimachinery's accepts, with its messages. Seeds live in
// testdata/fuzz/FuzzParseQuantity.
func FuzzParseQuantity(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		skipLongExponents(t, []byte(s))
		want, wantErr := resource.ParseQuantity(s)
		got, err := lean.ParseQuantity(s)
		if wantErr != nil {
			require.EqualError(t, err, wantErr.Error(), "%q", s)
			return
		}
		require.NoError(t, err, "%q", s)
		require.Equal(t, s, got.String())
		again, err := resource.ParseQuantity(got.String())
		require.NoError(t, err)
		require.Zero(t, want.Cmp(again))
	})
}
