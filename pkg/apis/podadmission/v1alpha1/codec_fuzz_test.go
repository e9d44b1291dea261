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

package v1alpha1

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiequality "k8s.io/apimachinery/pkg/api/equality"

	"github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1/protocol"
)

// FuzzDecodeResponse feeds arbitrary plugin output to DecodeResponse. Seeds
// live in testdata/fuzz/FuzzDecodeResponse. It checks that decoding never
// panics, that every error says it is about the response, and that whatever
// is accepted is a valid answer that survives a round trip unchanged.
func FuzzDecodeResponse(f *testing.F) {
	req := testRequest()
	req.APIVersion = SchemeGroupVersion.String()
	f.Fuzz(func(t *testing.T, data []byte) {
		resp, err := DecodeResponse(data, req)
		if err != nil {
			require.Nil(t, resp)
			require.True(t, strings.HasPrefix(err.Error(), "invalid response: "), "error %q", err)
			return
		}
		require.Empty(t, ValidateResponse(resp, req))
		assert.Equal(t, req.UID, resp.UID)
		assert.Equal(t, PodAdmissionResponseKind, resp.Kind)
		assert.LessOrEqual(t, len(resp.Message), protocol.MaxMessageLength)

		again, err := EncodeResponse(resp, req)
		require.NoError(t, err)
		roundTripped, err := DecodeResponse(again, req)
		require.NoError(t, err)
		assert.Equal(t, resp, roundTripped)
	})
}

// FuzzDecodeRequest feeds arbitrary input to DecodeRequest, what a plugin
// built with the SDK runs on its stdin. Seeds live in
// testdata/fuzz/FuzzDecodeRequest. Decoding never panics, errors say they
// are about the request, and an accepted request is valid and survives a
// round trip (semantically: quantities may change their spelling).
func FuzzDecodeRequest(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		req, err := DecodeRequest(data)
		if err != nil {
			require.Nil(t, req)
			require.True(t, strings.HasPrefix(err.Error(), "invalid request: "), "error %q", err)
			return
		}
		require.Empty(t, ValidateRequest(req))
		again, err := EncodeRequest(req)
		require.NoError(t, err)
		roundTripped, err := DecodeRequest(again)
		require.NoError(t, err)
		assert.True(t, apiequality.Semantic.DeepEqual(req, roundTripped), "round trip changed the request:\n%s\n%s", data, again)
	})
}
