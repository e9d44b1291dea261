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

import (
	"encoding/json"
	"errors"
	"strconv"

	"github.com/podadmission/podadmission/pkg/plugin/internal/strictjson"
)

// IntOrString is intstr.IntOrString of k8s.io/apimachinery: an int32 or a
// string, such as a probe's port (8080 or "http"). Type says which field
// holds the value.
type IntOrString struct {
	Type   IntOrStringType
	IntVal int32
	StrVal string
}

// IntOrStringType is intstr.Type: which of its values an IntOrString holds.
type IntOrStringType int64

// The types of IntOrString values, intstr.Int and intstr.String.
const (
	Int    IntOrStringType = iota // the int32 in IntVal
	String                        // the string in StrVal
)

// FromInt32 returns an IntOrString holding v.
func FromInt32(v int32) IntOrString { return IntOrString{Type: Int, IntVal: v} }

// FromString returns an IntOrString holding s.
func FromString(s string) IntOrString { return IntOrString{Type: String, StrVal: s} }

// String returns the string, or the decimal form of the int, as intstr's.
func (v *IntOrString) String() string {
	if v == nil {
		return "<nil>"
	}
	if v.Type == String {
		return v.StrVal
	}
	return strconv.Itoa(int(v.IntVal))
}

// IntValue returns the int, or the string's value as an int (0 if it is
// none), as intstr's.
func (v *IntOrString) IntValue() int {
	if v.Type == String {
		i, _ := strconv.Atoi(v.StrVal)
		return i
	}
	return int(v.IntVal)
}

// MarshalJSON writes the int as a JSON number or the string as a JSON
// string, as intstr's.
func (v IntOrString) MarshalJSON() ([]byte, error) {
	switch v.Type {
	case Int:
		return strconv.AppendInt(nil, int64(v.IntVal), 10), nil
	case String:
		return json.Marshal(v.StrVal)
	}
	return nil, errors.New("impossible IntOrString.Type")
}

// UnmarshalJSON reads what intstr reads: a JSON string, or a JSON number
// that is an int32 (null leaves the int 0).
func (v *IntOrString) UnmarshalJSON(data []byte) error {
	return strictjson.Decode(data, v.decodeJSON)
}

func (v *IntOrString) decodeJSON(d *strictjson.Decoder) {
	switch d.Kind() {
	case strictjson.String:
		v.Type = String
		v.StrVal = d.String()
	case strictjson.Number, strictjson.Null:
		v.Type = Int
		v.IntVal = d.Int32()
	default:
		d.Mismatch("an integer or a string")
	}
}
