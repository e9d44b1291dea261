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

// Package yamldoc splits a YAML stream into its documents, for the readers
// of files that must hold exactly one (a pod admission configuration file,
// a pod manifest): a second document would otherwise be ignored silently.
package yamldoc

import (
	"bufio"
	"bytes"
	"errors"
	"io"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// NonEmpty returns the documents of the YAML stream data that hold a value:
// a document that is empty, holds only comments, or is null does not count.
func NonEmpty(data []byte) ([][]byte, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs [][]byte
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		asJSON, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, err
		}
		if !bytes.Equal(bytes.TrimSpace(asJSON), []byte("null")) {
			docs = append(docs, doc)
		}
	}
}
