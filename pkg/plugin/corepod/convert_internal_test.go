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

package corepod

import (
	"reflect"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/api/resource"

	sdk "github.com/podadmission/podadmission/pkg/plugin/corev1"
)

// TestAQuantityParseQuantityRejectsIsAnError: were the SDK to accept a
// quantity that apimachinery rejects, the plugin would get an error, not
// a crash or a zero quantity. The SDK's API cannot build such a quantity:
// its text is set behind its back.
func TestAQuantityParseQuantityRejectsIsAnError(t *testing.T) {
	var q sdk.Quantity
	text := reflect.ValueOf(&q).Elem().Field(0)
	reflect.NewAt(text.Type(), unsafe.Pointer(text.UnsafeAddr())).Elem().SetString("1.2.3")
	pod := &sdk.Pod{Spec: sdk.PodSpec{Overhead: sdk.ResourceList{sdk.ResourceCPU: q}}}

	got, err := convert("oldPod", pod)
	assert.Nil(t, got)
	assert.ErrorIs(t, err, resource.ErrFormatWrong)
	assert.ErrorContains(t, err, `oldPod: quantity "1.2.3": `)
}
