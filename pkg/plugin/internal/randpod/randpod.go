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

// Package randpod fills k8s.io/api objects at random for the SDK's
// fidelity tests, with values of apimachinery's types as an API server
// holds them. Only tests import it: it links what plugins need not.
package randpod

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/randfill"
)

// Filler returns a filler that leaves pointers, lists and maps nil at
// nilChance and gives them minElements to 2 elements otherwise.
func Filler(seed int64, nilChance float64, minElements int) *randfill.Filler {
	return randfill.NewWithSeed(seed).NilChance(nilChance).NumElements(minElements, 2).Funcs(
		func(q *resource.Quantity, c randfill.Continue) {
			formats := []resource.Format{resource.DecimalSI, resource.BinarySI, resource.DecimalExponent}
			random := resource.NewScaledQuantity(c.Int63n(1<<40)-1<<39, resource.Scale(c.Intn(25)-9))
			random.Format = formats[c.Intn(len(formats))]
			// As an API server holds it: parsed from JSON.
			*q = resource.MustParse(random.String())
		},
		func(t *metav1.Time, c randfill.Continue) {
			if c.Intn(5) > 0 {
				*t = metav1.Unix(c.Int63n(1<<33), c.Int63n(1e9))
			}
		},
		func(v *intstr.IntOrString, c randfill.Continue) {
			if c.Bool() {
				*v = intstr.FromInt32(c.Int31() - 1<<30)
			} else {
				*v = intstr.FromString(c.String(10))
			}
		},
		func(f *metav1.FieldsV1, c randfill.Continue) {
			f.Raw = fmt.Appendf(nil, `{"f:metadata":{"f:labels":{"f:%d":{}}}}`, c.Intn(100))
		},
	)
}
