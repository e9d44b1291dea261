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

// Package docs checks that the examples in the repository's documents work
// verbatim: every PodAdmissionConfiguration block loads the way the kubelet
// loads it, and every protocol example decodes strictly.
package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/podadmission/podadmission/pkg/kubelet/podadmission"
	"github.com/podadmission/podadmission/pkg/plugin"
)

// documents are checked for examples.
var documents = []string{"README.md", "KEP.md", "docs/plugins.md"}

// configDocuments must show at least one configuration; docs/plugins.md
// points at the files in examples/, which podadmctl's tests validate.
var configDocuments = map[string]bool{"README.md": true, "KEP.md": true}

var fencedBlock = regexp.MustCompile("(?ms)^```(yaml|json)\n(.*?)^```")

type example struct {
	document string
	line     int
	lang     string
	body     string
}

func examples(t *testing.T, document string) []example {
	data, err := os.ReadFile(filepath.Join("..", "..", document))
	require.NoError(t, err)
	var found []example
	for _, m := range fencedBlock.FindAllSubmatchIndex(data, -1) {
		found = append(found, example{
			document: document,
			line:     strings.Count(string(data[:m[0]]), "\n") + 1,
			lang:     string(data[m[2]:m[3]]),
			body:     string(data[m[4]:m[5]]),
		})
	}
	return found
}

func TestConfigurationExamplesLoad(t *testing.T) {
	for _, document := range documents {
		checked := 0
		for _, ex := range examples(t, document) {
			if !strings.Contains(ex.body, "kind: PodAdmissionConfiguration") {
				continue
			}
			checked++
			t.Run(ex.document+":"+strconv.Itoa(ex.line), func(t *testing.T) {
				// The kubelet's loader refuses files that are not root-owned
				// or are writable by others, so write it like a node image.
				dir := t.TempDir()
				require.NoError(t, os.Chmod(dir, 0o755))
				path := filepath.Join(dir, "10-example.yaml")
				require.NoError(t, os.WriteFile(path, []byte(ex.body), 0o644))
				cfg, err := podadmission.LoadConfig(path)
				require.NoError(t, err, "%s line %d: the example does not load", ex.document, ex.line)
				assert.NotEmpty(t, cfg.Plugins)
			})
		}
		if configDocuments[document] {
			assert.NotZero(t, checked, "%s has no PodAdmissionConfiguration example", document)
		}
	}
}

func TestProtocolExamplesDecode(t *testing.T) {
	checked := 0
	for _, document := range documents {
		for _, ex := range examples(t, document) {
			if ex.lang != "json" || !strings.Contains(ex.body, `"kind": "PodAdmissionRequest"`) {
				continue
			}
			checked++
			t.Run(ex.document+":"+strconv.Itoa(ex.line), func(t *testing.T) {
				// As a plugin built with the SDK decodes it.
				req, err := plugin.DecodeRequest([]byte(ex.body))
				require.NoError(t, err, "%s line %d", ex.document, ex.line)
				assert.NotNil(t, req.Pod)
			})
		}
	}
	assert.NotZero(t, checked, "no PodAdmissionRequest example in %v", documents)
}
