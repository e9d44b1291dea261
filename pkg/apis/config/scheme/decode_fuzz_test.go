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

package scheme

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
	apiequality "k8s.io/apimachinery/pkg/api/equality"

	"github.com/podadmission/podadmission/pkg/apis/config/validation"
)

// FuzzDecode feeds arbitrary bytes to Decode. Decode must not panic; what it
// accepts must be fully defaulted, must survive validation without panicking
// and must decode to the same object after a JSON round trip. The seed corpus
// is in testdata/fuzz/FuzzDecode.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(header + "plugins:\n- name: a\n  type: Exec\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Decode(data)
		if err != nil {
			require.Nil(t, cfg)
			return
		}
		for _, p := range cfg.Plugins {
			require.NotNil(t, p.Timeout, "timeout not defaulted")
			require.NotEmpty(t, p.FailurePolicy, "failurePolicy not defaulted")
			require.NotEmpty(t, p.RejectionMode, "rejectionMode not defaulted")
			require.NotNil(t, p.Match, "match not defaulted")
			require.NotEmpty(t, p.Match.PodSource, "podSource not defaulted")
		}
		_ = validation.ValidatePodAdmissionConfiguration(cfg)

		encoded, err := json.Marshal(cfg)
		require.NoError(t, err)
		again, err := Decode(encoded)
		require.NoError(t, err, "re-decoding %s", encoded)
		// Semantic equality: an empty list and an omitted one are the same.
		require.True(t, apiequality.Semantic.DeepEqual(cfg, again), "round trip changed %s", encoded)
	})
}
