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

package corev1

import "github.com/podadmission/podadmission/pkg/plugin/internal/strictjson"

// FieldsV1 is metav1.FieldsV1 of k8s.io/apimachinery: the set of fields a
// managed-fields entry owns, kept as the JSON it is in Raw.
type FieldsV1 struct {
	Raw []byte
}

// MarshalJSON writes Raw, or null when it is nil, as metav1.FieldsV1's.
func (f FieldsV1) MarshalJSON() ([]byte, error) {
	if f.Raw == nil {
		return []byte("null"), nil
	}
	return f.Raw, nil
}

// UnmarshalJSON keeps any JSON value but null in Raw, as metav1.FieldsV1's.
func (f *FieldsV1) UnmarshalJSON(data []byte) error {
	return strictjson.Decode(data, f.decodeJSON)
}

func (f *FieldsV1) decodeJSON(d *strictjson.Decoder) {
	if d.Null() {
		return
	}
	if raw := d.Raw(); raw != nil {
		f.Raw = append(f.Raw[:0], raw...)
	}
}
