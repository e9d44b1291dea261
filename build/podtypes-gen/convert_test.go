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
	"maps"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// conversionsByHand are the hand-written functions the conversion calls.
var conversionsByHand = map[string]string{
	"convertQuantity":    "convert.go",
	"convertTime":        "convert.go",
	"convertIntOrString": "convert.go",
	"convertFieldsV1":    "convert.go",
}

// TestConvertFileChecksTheHandWrittenCode: the conversion stops on a
// replacement without its hand-written function, on a name both it and
// the hand-written code would declare, and on a root it does not reach.
func TestConvertFileChecksTheHandWrittenCode(t *testing.T) {
	m, err := walk(roots)
	require.NoError(t, err)
	src, err := m.convertFile(nil, "test", converted, conversionsByHand)
	require.NoError(t, err)
	assert.Contains(t, string(src), "func convertPod(in *sdk.Pod, out *corev1.Pod) {\n")

	noTime := maps.Clone(conversionsByHand)
	delete(noTime, "convertTime")
	_, err = m.convertFile(nil, "test", converted, noTime)
	assert.EqualError(t, err, "the replacement Time has no hand-written convertTime")

	clash := maps.Clone(conversionsByHand)
	clash["convertPodSpec"] = "corepod.go"
	_, err = m.convertFile(nil, "test", converted, clash)
	assert.EqualError(t, err, "convertPodSpec would be declared by the conversion and by the hand-written corepod.go")

	_, err = m.convertFile(nil, "test", reflect.TypeFor[fine](), conversionsByHand)
	assert.ErrorContains(t, err, "is not a struct the types reach")
}

// TestConvertFileWritesEveryKind: what a Pod does not hold converts too,
// a map of lists of pointers here, new at every level and nil for nil.
func TestConvertFileWritesEveryKind(t *testing.T) {
	self := reflect.TypeFor[fine]().PkgPath()
	copiedPackages[self] = true
	importNames[self] = "fixtures"
	defer delete(copiedPackages, self)
	defer delete(importNames, self)
	m, err := walk([]any{fine{}})
	require.NoError(t, err)
	src, err := m.convertFile(nil, "test", reflect.TypeFor[fine](), conversionsByHand)
	require.NoError(t, err)
	for _, want := range []string{`func convertFine(in *sdk.fine, out *fixtures.fine) {
	convertInner(&in.Inner, &out.Inner)
	out.Tags = convertMapOfStringToSliceOfPtrToInt64(in.Tags)
}
`, `func convertMapOfStringToSliceOfPtrToInt64(in map[string][]*int64) map[string][]*int64 {
	if in == nil {
		return nil
	}
	out := make(map[string][]*int64, len(in))
	for k, v := range in {
		out[k] = convertSliceOfPtrToInt64(v)
	}
	return out
}
`, `func convertSliceOfPtrToInt64(in []*int64) []*int64 {
	if in == nil {
		return nil
	}
	out := make([]*int64, len(in))
	for i := range in {
		if in[i] != nil {
			out[i] = new(int64)
			*out[i] = *in[i]
		}
	}
	return out
}
`} {
		assert.Contains(t, string(src), want)
	}
}
