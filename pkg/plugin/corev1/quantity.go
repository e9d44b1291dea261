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
	"errors"
	"strconv"
	"strings"

	"github.com/podadmission/podadmission/pkg/plugin/internal/strictjson"
)

// Quantity is resource.Quantity of k8s.io/apimachinery as plugins receive
// it: its text, as the kubelet sent it, which is the canonical form
// apimachinery's String writes ("100m", "128Mi"). The text is checked with
// apimachinery's syntax, but not parsed into a number: for arithmetic,
// get the pod from package corepod. The zero Quantity is "0".
type Quantity struct {
	s string
}

// The errors of apimachinery's ParseQuantity, which ParseQuantity returns
// for the same texts.
var (
	errFormatWrong = errors.New("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
	errNumeric     = errors.New("unable to parse numeric part of quantity")
	errSuffix      = errors.New("unable to parse quantity's suffix")
)

// ParseQuantity returns the Quantity of text s, or the error apimachinery's
// ParseQuantity returns for it: it accepts exactly what that accepts. The
// Quantity keeps s as it is, even when apimachinery would write it
// otherwise ("0.5" and not "500m").
func ParseQuantity(s string) (Quantity, error) {
	if err := checkQuantity(s); err != nil {
		return Quantity{}, err
	}
	return Quantity{s: s}, nil
}

// MustParseQuantity is ParseQuantity for texts known to be valid; it panics
// on an invalid one.
func MustParseQuantity(s string) Quantity {
	q, err := ParseQuantity(s)
	if err != nil {
		panic("cannot parse quantity " + strconv.Quote(s) + ": " + err.Error())
	}
	return q
}

// String returns the quantity's text.
func (q Quantity) String() string {
	if q.s == "" {
		return "0"
	}
	return q.s
}

// MarshalJSON writes the quantity's text as a JSON string, as
// apimachinery does.
func (q Quantity) MarshalJSON() ([]byte, error) {
	return []byte(`"` + q.String() + `"`), nil
}

// UnmarshalJSON reads a quantity as apimachinery does: a JSON string or
// number of its syntax, or null for the zero Quantity.
func (q *Quantity) UnmarshalJSON(data []byte) error {
	return strictjson.Decode(data, q.decodeJSON)
}

func (q *Quantity) decodeJSON(d *strictjson.Decoder) {
	switch d.Kind() {
	case strictjson.Null:
		d.Skip()
		*q = Quantity{}
	case strictjson.String, strictjson.Number:
		raw := d.Raw()
		if raw == nil {
			return
		}
		// As apimachinery: the quotes off, the content as it is (an escape
		// is no quantity), surrounding space trimmed.
		if l := len(raw); l >= 2 && raw[0] == '"' && raw[l-1] == '"' {
			raw = raw[1 : l-1]
		}
		s := strings.TrimSpace(string(raw))
		if err := checkQuantity(s); err != nil {
			if len(s) > 64 {
				s = s[:64] + "..."
			}
			d.Invalid("invalid quantity " + strconv.Quote(s) + ": " + err.Error())
			return
		}
		q.s = s
	default:
		d.Mismatch("a quantity")
	}
}

// checkQuantity returns the error apimachinery's ParseQuantity returns for
// str, or nil: its parseQuantityString, the lookup of its suffix, and the
// one failure of the rest of it, a number without a digit on the path that
// parses it as a decimal (its fast path takes at most 18 digits, a scale of
// at least nano, and binary suffixes up to Ti without a fraction).
func checkQuantity(str string) error {
	if str == "" {
		return errFormatWrong
	}
	if str == "0" {
		return nil
	}
	value, num, denom, suffix, err := parseQuantityString(str)
	if err != nil {
		return err
	}
	exponent, binary, ok := interpretSuffix(suffix)
	if !ok {
		return errSuffix
	}
	var precision, scale int32
	if binary {
		precision = -1
		if exponent >= 0 && len(denom) == 0 {
			precision = 15 - int32(len(num)) - int32(float32(exponent)*3/10) - 1
		}
	} else {
		scale = exponent
		precision = 18 - int32(len(num)+len(denom))
	}
	if precision >= 0 && scale-int32(len(denom)) >= -9 {
		return nil
	}
	if !strings.ContainsAny(value, "0123456789") {
		return errNumeric
	}
	return nil
}

// parseQuantityString is apimachinery's: it splits str into its number
// (value, with its sign), the digits before and after the point, and the
// suffix.
func parseQuantityString(str string) (value, num, denom, suffix string, err error) {
	pos := 0
	end := len(str)
	if pos < end && (str[0] == '-' || str[0] == '+') {
		pos++
	}
	for i := pos; ; i++ {
		if i >= end {
			return "0", "0", "", "", nil
		}
		if str[i] != '0' {
			break
		}
		pos++
	}
	for i := pos; ; i++ {
		if i >= end {
			return str, str[pos:], "", "", nil
		}
		if !isDigit(str[i]) {
			num = str[pos:i]
			pos = i
			break
		}
	}
	if num == "" {
		num = "0"
	}
	if pos < end && str[pos] == '.' {
		pos++
		for i := pos; ; i++ {
			if i >= end {
				return str, num, str[pos:], "", nil
			}
			if !isDigit(str[i]) {
				denom = str[pos:i]
				pos = i
				break
			}
		}
	}
	value = str[:pos]
	suffixStart := pos
	for i := pos; ; i++ {
		if i >= end {
			return value, num, denom, str[suffixStart:], nil
		}
		if !strings.ContainsRune("eEinumkKMGTP", rune(str[i])) {
			pos = i
			break
		}
	}
	if pos < end && (str[pos] == '-' || str[pos] == '+') {
		pos++
	}
	for i := pos; ; i++ {
		if i >= end {
			return value, num, denom, str[suffixStart:], nil
		}
		if !isDigit(str[i]) {
			return "", "", "", "", errFormatWrong
		}
	}
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// interpretSuffix is apimachinery's suffix lookup: the power of the
// suffix (of 2 if binary, else of 10) and whether it is one.
func interpretSuffix(suffix string) (exponent int32, binary, ok bool) {
	switch suffix {
	case "n":
		return -9, false, true
	case "u":
		return -6, false, true
	case "m":
		return -3, false, true
	case "":
		return 0, false, true
	case "k":
		return 3, false, true
	case "M":
		return 6, false, true
	case "G":
		return 9, false, true
	case "T":
		return 12, false, true
	case "P":
		return 15, false, true
	case "E":
		return 18, false, true
	case "Ki":
		return 10, true, true
	case "Mi":
		return 20, true, true
	case "Gi":
		return 30, true, true
	case "Ti":
		return 40, true, true
	case "Pi":
		return 50, true, true
	case "Ei":
		return 60, true, true
	}
	if len(suffix) > 1 && (suffix[0] == 'E' || suffix[0] == 'e') {
		parsed, err := strconv.ParseInt(suffix[1:], 10, 64)
		if err != nil {
			return 0, false, false
		}
		return int32(parsed), false, true
	}
	return 0, false, false
}
