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
	"time"

	"github.com/podadmission/podadmission/pkg/plugin/internal/strictjson"
)

// Time is metav1.Time of k8s.io/apimachinery as plugins receive it: a
// time.Time, written in JSON as an RFC 3339 string in UTC, or null for the
// zero time. It keeps the zone it was read in (UTC for the times the
// kubelet sends), where metav1.Time converts to the local zone: the same
// instant, without loading the zone database in every Exec plugin.
type Time struct {
	time.Time
}

// IsZero says whether t is nil or the zero time, as metav1.Time's does.
func (t *Time) IsZero() bool {
	return t == nil || t.Time.IsZero()
}

// MarshalJSON writes t as metav1.Time does: RFC 3339 in UTC, or null.
func (t Time) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	buf := make([]byte, 0, len(time.RFC3339)+2)
	buf = append(buf, '"')
	buf = t.UTC().AppendFormat(buf, time.RFC3339)
	return append(buf, '"'), nil
}

// UnmarshalJSON reads what metav1.Time reads: an RFC 3339 string, or null
// for the zero time.
func (t *Time) UnmarshalJSON(data []byte) error {
	return strictjson.Decode(data, t.decodeJSON)
}

func (t *Time) decodeJSON(d *strictjson.Decoder) {
	switch d.Kind() {
	case strictjson.Null:
		d.Skip()
		t.Time = time.Time{}
	case strictjson.String:
		parsed, err := time.Parse(time.RFC3339, d.String())
		if err != nil {
			d.Invalid("invalid time: " + err.Error())
			return
		}
		t.Time = parsed
	default:
		d.Mismatch("an RFC 3339 time string")
	}
}
