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

package yamldoc

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNonEmpty(t *testing.T) {
	for name, tc := range map[string]struct {
		data string
		want []string
	}{
		"empty":                  {data: "", want: nil},
		"comments only":          {data: "# nothing yet\n", want: nil},
		"one document":           {data: "a: 1\n", want: []string{"a: 1\n"}},
		"empty documents around": {data: "---\n# header\n---\na: 1\n---\n~\n", want: []string{"a: 1\n"}},
		"two documents":          {data: "a: 1\n---\nb: 2\n", want: []string{"a: 1\n", "b: 2\n"}},
	} {
		t.Run(name, func(t *testing.T) {
			docs, err := NonEmpty([]byte(tc.data))
			require.NoError(t, err)
			var got []string
			for _, d := range docs {
				got = append(got, string(d))
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestNonEmptyRefusesWhatIsNotYAML(t *testing.T) {
	_, err := NonEmpty([]byte("a: [1\n"))
	require.Error(t, err)
}
