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

package main

import (
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type (
	withFloat  struct{ F float64 }
	withBytes  struct{ B []byte }
	withTime   struct{ T time.Time }
	withIntKey struct{ M map[int]string }
	withSkip   struct {
		S string `json:"-"`
	}
	withQuoted struct {
		N int32 `json:",string"`
	}
	Inner struct {
		Name string `json:"name"`
	}
	withClash struct {
		Inner
		Name string `json:"name"`
	}
	withEmbeddedPointer struct{ *Inner }
	fine                struct {
		Inner `json:",inline"`
		Tags  map[string][]*int64 `json:"tags,omitempty"`
	}
)

// TestWalkFailsLoudly: what the generator cannot copy faithfully stops it.
func TestWalkFailsLoudly(t *testing.T) {
	self := reflect.TypeFor[fine]().PkgPath()
	copiedPackages[self] = true
	defer delete(copiedPackages, self)
	for name, tc := range map[string]struct {
		root    any
		wantErr string
	}{
		"a float":                  {root: withFloat{}, wantErr: "float64 of kind float64 is not supported"},
		"bytes":                    {root: withBytes{}, wantErr: "uint8 of kind uint8 is not supported"},
		"a type with JSON methods": {root: withTime{}, wantErr: "neither a copied package nor a replacement"},
		"an int map key":           {root: withIntKey{}, wantErr: "only string keys are supported"},
		"a skipped field":          {root: withSkip{}, wantErr: `json:"-" is not supported`},
		"a quoted field":           {root: withQuoted{}, wantErr: `json option "string" is not supported`},
		"a clash of members":       {root: withClash{}, wantErr: `JSON member "name" appears twice`},
		"an embedded pointer":      {root: withEmbeddedPointer{}, wantErr: "only embedded structs are supported"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := walk([]any{tc.root})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.wantErr)
		})
	}
	m, err := walk([]any{fine{}})
	require.NoError(t, err)
	n := m.named[reflect.TypeFor[fine]()]
	require.NotNil(t, n)
	assert.Equal(t, []string{"name", "tags"}, []string{n.members[0].name, n.members[1].name}, "an embedded struct's fields are promoted")
	assert.Equal(t, "Inner.Name", n.members[0].goPath)
	assert.Equal(t, "map[string][]*int64", m.typeExpr(n.members[1].t))
}
