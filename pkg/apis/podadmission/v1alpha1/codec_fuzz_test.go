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
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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

		again, err := json.Marshal(resp)
		require.NoError(t, err)
		roundTripped, err := DecodeResponse(again, req)
		require.NoError(t, err)
		assert.Equal(t, resp, roundTripped)
	})
}
