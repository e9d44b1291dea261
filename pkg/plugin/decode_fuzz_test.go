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
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	sigsjson "sigs.k8s.io/json"

	podadmissionv1alpha1 "github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1"
	"github.com/podadmission/podadmission/pkg/plugin/internal/strictjson"
)

// longExponent: see skipLongExponents.
var longExponent = regexp.MustCompile(`[eE][-+]?[0-9]{5,}`)

// FuzzDecodeRequest feeds arbitrary input to DecodeRequest, what a plugin
// built with the SDK runs on its stdin, and checks its decoding against
// the kubelet's decoding of the same JSON form (sigs.k8s.io/json's
// UnmarshalStrict into v1alpha1.PodAdmissionRequest, with k8s.io/api's
// Pod): one accepts exactly what the other accepts. Decoding never
// panics, errors say they are about the request, and an accepted request
// is valid. Seeds live in testdata/fuzz/FuzzDecodeRequest.
func FuzzDecodeRequest(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		if longExponent.Match(data) {
			// apimachinery's ParseQuantity computes 10 to such a power.
			t.Skip("apimachinery cannot parse a quantity with this exponent in reasonable time")
		}
		var e envelope
		decodeErr := strictjson.Decode(data, e.decodeJSON)
		var upstream podadmissionv1alpha1.PodAdmissionRequest
		strictErrs, err := sigsjson.UnmarshalStrict(data, &upstream)
		if upstreamAccepts := err == nil && len(strictErrs) == 0; upstreamAccepts != (decodeErr == nil) {
			t.Fatalf("%q:\n  SDK: %v\n  kubelet's decoding: %v %v", data, decodeErr, err, strictErrs)
		}

		req, err := DecodeRequest(data)
		if err != nil {
			require.Nil(t, req)
			require.True(t, strings.HasPrefix(err.Error(), "invalid request: "), "error %q", err)
			return
		}
		require.NoError(t, req.Validate())
		require.NotEqual(t, Operation(""), req.Operation)
		require.Equal(t, req.Pod != nil, req.PodJSON != nil)
		require.Equal(t, req.OldPod != nil, req.OldPodJSON != nil)
	})
}
