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
	"bytes"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	sdk "github.com/podadmission/podadmission/pkg/plugin/corev1"
)

// convert returns the k8s.io/api/core/v1 Pod of in; field, pod or oldPod,
// opens its error.
func convert(field string, in *sdk.Pod) (pod *corev1.Pod, err error) {
	defer func() {
		if r := recover(); r != nil {
			invalid, ok := r.(invalidQuantity)
			if !ok {
				panic(r)
			}
			pod, err = nil, fmt.Errorf("%s: quantity %q: %w", field, invalid.text, invalid.err)
		}
	}()
	pod = &corev1.Pod{}
	convertPod(in, pod)
	return pod, nil
}

// invalidQuantity is what convertQuantity panics with and convert returns
// as an error. A quantity that the SDK accepted and ParseQuantity rejects
// is a bug of the SDK's (FuzzParseQuantity checks they accept the same):
// not worth an error result in every generated function, but not a reason
// to crash a plugin either.
type invalidQuantity struct {
	text string
	err  error
}

// The functions below, which the generated ones call, convert the SDK's
// own types for apimachinery's. Each gives what apimachinery's JSON
// decoding gives for the JSON the SDK decoded its value from.

// convertQuantity parses the quantity's text as resource.Quantity's
// UnmarshalJSON does, which keeps its format (and a canonical text). The
// zero Quantity, which JSON null decodes to, stays zero.
func convertQuantity(in *sdk.Quantity, out *resource.Quantity) {
	if *in == (sdk.Quantity{}) {
		return
	}
	q, err := resource.ParseQuantity(in.String())
	if err != nil {
		panic(invalidQuantity{text: in.String(), err: err})
	}
	*out = q
}

// convertTime moves the time to the local zone, as metav1.Time's
// UnmarshalJSON does; the zero time (JSON null) stays zero, and so does a
// zero time sent as a string, which metav1.Time never writes and would
// move to the local zone.
func convertTime(in *sdk.Time, out *metav1.Time) {
	if !in.IsZero() {
		out.Time = in.Local()
	}
}

func convertIntOrString(in *sdk.IntOrString, out *intstr.IntOrString) {
	*out = intstr.IntOrString{Type: intstr.Type(in.Type), IntVal: in.IntVal, StrVal: in.StrVal}
}

// convertFieldsV1 copies the raw JSON, nil for nil.
func convertFieldsV1(in *sdk.FieldsV1, out *metav1.FieldsV1) {
	out.Raw = bytes.Clone(in.Raw)
}
