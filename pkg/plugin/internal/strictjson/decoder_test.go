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

package strictjson

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sigsjson "sigs.k8s.io/json"
)

// point is a decoder as build/podtypes-gen writes them, for the tests.
type point struct {
	Name   string            `json:"name"`
	X      int32             `json:"x"`
	Big    int64             `json:"big"`
	On     bool              `json:"on"`
	Tags   []string          `json:"tags"`
	Labels map[string]string `json:"labels"`
	Next   *point            `json:"next"`
}

func (v *point) decodeJSON(d *Decoder) {
	if !d.BeginObject() {
		return
	}
	var seen [1]uint64
	for i := 0; d.NextKey(i); i++ {
		switch string(d.Key()) {
		case "name":
			d.Field(&seen[0], 1<<0, "name")
			v.Name = d.String()
		case "x":
			d.Field(&seen[0], 1<<1, "x")
			v.X = d.Int32()
		case "big":
			d.Field(&seen[0], 1<<2, "big")
			v.Big = d.Int64()
		case "on":
			d.Field(&seen[0], 1<<3, "on")
			v.On = d.Bool()
		case "tags":
			d.Field(&seen[0], 1<<4, "tags")
			if d.BeginArray() {
				s := make([]string, 0)
				for i := 0; d.NextElem(i); i++ {
					d.Index(i)
					s = append(s, d.String())
					d.Pop()
				}
				v.Tags = s
			}
		case "labels":
			d.Field(&seen[0], 1<<5, "labels")
			if d.BeginObject() {
				m := map[string]string{}
				for i := 0; d.NextKey(i); i++ {
					k := string(d.Key())
					_, dup := m[k]
					d.Entry(k, dup)
					m[k] = d.String()
					d.Pop()
				}
				v.Labels = m
			}
		case "next":
			d.Field(&seen[0], 1<<6, "next")
			if !d.Null() {
				v.Next = new(point)
				v.Next.decodeJSON(d)
			}
		default:
			d.Unknown()
			continue
		}
		d.Pop()
	}
}

func decodePoint(data string) (*point, error) {
	p := &point{}
	return p, Decode([]byte(data), p.decodeJSON)
}

func TestDecodeAccepts(t *testing.T) {
	for name, tc := range map[string]struct {
		data string
		want point
	}{
		"every kind":        {data: `{"name":"a","x":-2147483648,"big":9223372036854775807,"on":true,"tags":["t"],"labels":{"k":"v"},"next":{"x":1}}`, want: point{Name: "a", X: -2147483648, Big: 9223372036854775807, On: true, Tags: []string{"t"}, Labels: map[string]string{"k": "v"}, Next: &point{X: 1}}},
		"whitespace":        {data: " \t\n\r{ \"x\" : 1 , \"on\" : false } \n", want: point{X: 1}},
		"nulls":             {data: `{"name":null,"x":null,"on":null,"tags":null,"labels":null,"next":null}`, want: point{}},
		"empty collections": {data: `{"tags":[],"labels":{}}`, want: point{Tags: []string{}, Labels: map[string]string{}}},
		"escaped key":       {data: `{"na\u006de":"a"}`, want: point{Name: "a"}},
		"minus zero":        {data: `{"x":-0}`, want: point{}},
		"null document":     {data: `null`, want: point{}},
		"escapes":           {data: `{"name":"\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00"}`, want: point{Name: "\"\\/\b\f\n\r\té😀"}},
		"invalid UTF-8":     {data: "{\"name\":\"a\xffb\"}", want: point{Name: "a\uFFFDb"}},
		"lone surrogates":   {data: `{"name":"\ud800x\udc00"}`, want: point{Name: "\uFFFDx\uFFFD"}},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := decodePoint(tc.data)
			require.NoError(t, err)
			assert.Equal(t, tc.want, *got)
			var strict point
			strictErrs, err := sigsjson.UnmarshalStrict([]byte(tc.data), &strict)
			require.NoError(t, err, "sigs.k8s.io/json agrees")
			require.Empty(t, strictErrs, "sigs.k8s.io/json agrees")
			assert.Equal(t, strict, *got)
		})
	}
}

func TestDecodeRejects(t *testing.T) {
	for name, tc := range map[string]struct {
		data    string
		wantErr string
	}{
		"unknown field":               {data: `{"x":1,"y":2}`, wantErr: `unknown field "y"`},
		"unknown nested field":        {data: `{"next":{"next":{"y":{"deep":[1]}}}}`, wantErr: `unknown field "next.next.y"`},
		"unknown field reported once": {data: `{"y":1,"y":2}`, wantErr: `unknown field "y"`},
		"wrong case":                  {data: `{"Name":"a"}`, wantErr: `unknown field "Name"`},
		"duplicate field":             {data: `{"x":1,"next":{"x":2,"x":3}}`, wantErr: `duplicate field "next.x"`},
		"duplicate escaped field":     {data: `{"name":"a","na\u006de":"b"}`, wantErr: `duplicate field "name"`},
		"duplicate map key":           {data: `{"labels":{"k":"1","k":"2"}}`, wantErr: `duplicate field "labels.k"`},
		"wrong type":                  {data: `{"on":"yes"}`, wantErr: "on: want a boolean, got a string"},
		"string for an int":           {data: `{"x":"1"}`, wantErr: "x: want a 32-bit integer, got a string"},
		"fraction":                    {data: `{"x":1.5}`, wantErr: "x: want a 32-bit integer, got 1.5"},
		"exponent":                    {data: `{"x":1e3}`, wantErr: "x: want a 32-bit integer, got 1e3"},
		"int32 overflow":              {data: `{"x":2147483648}`, wantErr: "x: want a 32-bit integer, got 2147483648"},
		"int64 overflow":              {data: `{"big":9223372036854775808}`, wantErr: "big: want a 64-bit integer, got 9223372036854775808"},
		"array element type":          {data: `{"tags":["a",1]}`, wantErr: "tags[1]: want a string, got a number"},
		"object for an array":         {data: `{"tags":{}}`, wantErr: "tags: want an array, got an object"},
		"document not an object":      {data: `[]`, wantErr: "want an object, got an array"},
		"several faults":              {data: `{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7}`, wantErr: `unknown field "a", unknown field "b", unknown field "c", unknown field "d", unknown field "e", and 2 more`},
		"trailing data":               {data: `{"x":1} {}`, wantErr: "not JSON: invalid character '{' after top-level value"},
		"truncated":                   {data: `{"x":1`, wantErr: "not JSON: unexpected end of JSON input"},
		"empty":                       {data: ``, wantErr: "not JSON: unexpected end of JSON input"},
		"syntax error has a path":     {data: `{"next":{"tags":["a",]}}`, wantErr: "next.tags[1]: not JSON: invalid character ']' looking for beginning of value"},
		"syntax error wins":           {data: `{"y":1,"x":tru}`, wantErr: "x: not JSON: invalid character '}' in literal true (expecting 'e')"},
		"syntax in unknown field":     {data: `{"y":[1,}`, wantErr: "not JSON: invalid character '}' looking for beginning of value"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := decodePoint(tc.data)
			require.EqualError(t, err, tc.wantErr)
			var strict point
			strictErrs, err := sigsjson.UnmarshalStrict([]byte(tc.data), &strict)
			assert.True(t, err != nil || len(strictErrs) > 0, "sigs.k8s.io/json refuses it too")
		})
	}
}

// TestSyntaxErrorsAreEncodingJSONs: a malformed document gets
// encoding/json's message.
func TestSyntaxErrorsAreEncodingJSONs(t *testing.T) {
	for _, data := range []string{
		``, ` `, `x`, `{`, `{"a"`, `{"a" 1}`, `{"a":1 "b":2}`, `{,}`, `{"a":1,}`, `[1,]`, `[1 2]`, `[`,
		`"abc`, "\"a\x01\"", `"\x"`, `"\u12"`, `"\u12g4"`, `-`, `-a`, `01`, `1.`, `1.e3`, `1e`, `1e+`, `+1`,
		`tru`, `trux`, `nul`, `fals`, `{"a":nulL}`, `1 2`, `{}}`, `[]]`, `{"a":[}`, "\xef\xbb\xbf{}", `'a'`,
		strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	} {
		err := Decode([]byte(data), (*Decoder).Skip)
		var raw json.RawMessage
		stdErr := json.Unmarshal([]byte(data), &raw)
		var syntax *json.SyntaxError
		require.True(t, errors.As(stdErr, &syntax), "%q: encoding/json: %v", data, stdErr)
		assert.EqualError(t, err, "not JSON: "+syntax.Error(), "%q", data)
	}
}

func TestDepthIsEncodingJSONs(t *testing.T) {
	deepest := strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth)
	assert.NoError(t, Decode([]byte(deepest), (*Decoder).Skip))
	assert.True(t, json.Valid([]byte(deepest)))
}

func TestRawIsTheValueAsItIs(t *testing.T) {
	var raw []byte
	require.NoError(t, Decode([]byte(` {"a": [1, "\u00e9"]} `), func(d *Decoder) { raw = d.Raw() }))
	assert.Equal(t, `{"a": [1, "\u00e9"]}`, string(raw))
}

func TestInclude(t *testing.T) {
	inner := func(data string) error {
		_, err := decodePoint(data)
		return err
	}
	decodeWith := func(err error) error {
		return Decode([]byte(`{"pod":{}}`), func(d *Decoder) {
			if !d.BeginObject() {
				return
			}
			for i := 0; d.NextKey(i); i++ {
				d.Entry(string(d.Key()), false)
				d.Skip()
				d.Include(err)
				d.Pop()
			}
		})
	}
	assert.EqualError(t, decodeWith(inner(`{"y":1,"next":{"on":1},"tags":{}}`)),
		`unknown field "pod.y", pod.next.on: want a boolean, got a number, pod.tags: want an array, got an object`)
	assert.EqualError(t, decodeWith(inner(`[]`)), "pod: want an object, got an array")
	assert.EqualError(t, decodeWith(inner(`{"tags":[1,}`)), "pod.tags[1]: not JSON: invalid character '}' looking for beginning of value")
	assert.EqualError(t, decodeWith(errors.New("other")), "pod: other")
	assert.NoError(t, decodeWith(nil))
}

// FuzzSkip checks the scanner against encoding/json: it accepts exactly
// the valid documents, refuses the others with encoding/json's message,
// and reads strings to encoding/json's values.
func FuzzSkip(f *testing.F) {
	for _, seed := range []string{`{"a":[1,2.5e-3,"x\u00e9\ud83d\ude00",true,false,null]}`, `"\ud800"`, "\"\xff\"", `[01]`, `{"a" 1}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		err := Decode(data, (*Decoder).Skip)
		var raw json.RawMessage
		if stdErr := json.Unmarshal(data, &raw); stdErr == nil {
			require.NoError(t, err, "%q", data)
		} else {
			var syntax *json.SyntaxError
			require.True(t, errors.As(stdErr, &syntax), "%q: %v", data, stdErr)
			require.EqualError(t, err, "not JSON: "+syntax.Error(), "%q", data)
			return
		}
		var s string
		if json.Unmarshal(data, &s) == nil {
			var got string
			require.NoError(t, Decode(data, func(d *Decoder) { got = d.String() }))
			require.Equal(t, s, got, "%q", data)
		}
	})
}
