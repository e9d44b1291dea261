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
	"errors"
	"strconv"
	"strings"
)

// Decoder reads one JSON document for a generated decoder, which walks it
// with the methods below: each value is read by one call (or, for an
// object or an array, one Begin call and a loop), which records a fault of
// the value at its path and goes on, as sigs.k8s.io/json does. A syntax
// error stops everything: every method then returns at once, and loops
// end.
type Decoder struct {
	data  []byte
	off   int
	depth int
	// key is the current object key, unescaped; scratch holds it when it
	// had escapes.
	key     []byte
	scratch []byte
	path    []step
	errs    Errors
	syntax  *Error
}

// step is one element of the path to the current value: an object key, or
// an array index when index >= 0.
type step struct {
	name  string
	index int
}

// Decode decodes data, one JSON value and nothing after it but whitespace,
// with decode, and returns its faults as Errors, or nil.
func Decode(data []byte, decode func(*Decoder)) error {
	d := Decoder{data: data}
	decode(&d)
	if d.syntax == nil {
		if d.peek(); !d.atEnd() {
			d.fail(d.off, "after top-level value")
		}
	}
	if d.syntax != nil {
		return Errors{d.syntax}
	}
	if len(d.errs) > 0 {
		return d.errs
	}
	return nil
}

// Kind is the kind of a JSON value.
type Kind uint8

// The kinds of JSON values; Invalid is what starts no value.
const (
	Invalid Kind = iota
	Null
	Bool
	Number
	String
	Object
	Array
)

// Kind returns the kind of the next value, without reading it.
func (d *Decoder) Kind() Kind {
	switch c := d.peek(); {
	case c == 'n':
		return Null
	case c == 't' || c == 'f':
		return Bool
	case c == '-' || isDigit(c):
		return Number
	case c == '"':
		return String
	case c == '{':
		return Object
	case c == '[':
		return Array
	}
	return Invalid
}

// kindNames name the kinds in messages.
var kindNames = [...]string{Bool: "a boolean", Number: "a number", String: "a string", Object: "an object", Array: "an array"}

// Mismatch records that the next value is not what want names (such as
// "an object"), and skips it. It is what every reader below does with a
// value of another kind.
func (d *Decoder) Mismatch(want string) {
	if d.syntax != nil {
		return
	}
	k := d.Kind()
	if k != Invalid && k != Null {
		d.Invalid("want " + want + ", got " + kindNames[k])
	}
	d.skip()
}

// Invalid records a fault of the current value.
func (d *Decoder) Invalid(msg string) {
	d.record(&Error{kind: invalidValue, path: d.pathString(), msg: msg})
}

func (d *Decoder) record(err *Error) {
	if d.syntax != nil || len(d.errs) >= maxErrors {
		return
	}
	if err.kind == unknownField || err.kind == duplicateField {
		for _, seen := range d.errs {
			if *seen == *err {
				return
			}
		}
	}
	d.errs = append(d.errs, err)
}

// Include records the faults of err, an error of Decode on a document
// found at the current value (a pod inside a request, decoded from Raw),
// under its path. Any other error is recorded as a fault of the value.
func (d *Decoder) Include(err error) {
	if err == nil {
		return
	}
	var errs Errors
	if !errors.As(err, &errs) {
		d.Invalid(err.Error())
		return
	}
	at := d.pathString()
	for _, e := range errs {
		moved := *e
		moved.path = join(at, e.path)
		d.record(&moved)
	}
}

// Skip reads the next value, whatever it is.
func (d *Decoder) Skip() {
	if d.syntax == nil {
		d.skip()
	}
}

// Raw reads the next value, whatever it is, and returns it as it is in
// the input.
func (d *Decoder) Raw() []byte {
	if d.syntax != nil {
		return nil
	}
	d.peek()
	start := d.off
	d.skip()
	if d.syntax != nil {
		return nil
	}
	return d.data[start:d.off]
}

// Null reads the next value if it is null, and says whether it was; or
// whether decoding stopped, so that the caller reads nothing more.
func (d *Decoder) Null() bool {
	if d.syntax != nil {
		return true
	}
	if d.peek() != 'n' {
		return false
	}
	d.literal("null")
	return true
}

// BeginObject starts reading an object, which NextKey loops over. On null
// it returns false (the value stays as it is); on anything else, false
// with a fault.
func (d *Decoder) BeginObject() bool {
	if d.syntax != nil {
		return false
	}
	switch d.peek() {
	case '{':
		return d.open()
	case 'n':
		d.literal("null")
	default:
		d.Mismatch("an object")
	}
	return false
}

// NextKey reads the next key of the object begun, i keys ago, and the
// colon after it, or the end of the object, and says whether there is a
// member to read: its key is Key, and its value must be read next.
//
//	for i := 0; d.NextKey(i); i++ { ... }
func (d *Decoder) NextKey(i int) bool {
	if d.syntax != nil {
		return false
	}
	return d.nextKey(i)
}

func (d *Decoder) nextKey(i int) bool {
	c := d.peek()
	if i > 0 {
		switch c {
		case ',':
			d.off++
			if d.peek() != '"' {
				d.fail(d.off, "looking for beginning of object key string")
				return false
			}
		case '}':
			d.off++
			d.depth--
			return false
		default:
			d.fail(d.off, "after object key:value pair")
			return false
		}
	} else {
		switch c {
		case '"':
		case '}':
			d.off++
			d.depth--
			return false
		default:
			d.fail(d.off, "looking for beginning of object key string")
			return false
		}
	}
	raw, plain, ok := d.rawString()
	if !ok {
		return false
	}
	if plain {
		d.key = raw
	} else {
		d.scratch = unquote(raw, d.scratch[:0])
		d.key = d.scratch
	}
	if d.peek() != ':' {
		d.fail(d.off, "after object key")
		return false
	}
	d.off++
	return true
}

// Key is the key NextKey read.
func (d *Decoder) Key() []byte { return d.key }

// Field enters the field name of a struct, the current key: bit is the
// field's bit in seen, the fields the object has had, so that a second
// occurrence is a duplicate field. Pop leaves it.
func (d *Decoder) Field(seen *uint64, bit uint64, name string) {
	if *seen&bit != 0 {
		d.record(&Error{kind: duplicateField, path: join(d.pathString(), name)})
	}
	*seen |= bit
	d.path = append(d.path, step{name: name, index: -1})
}

// Entry enters the entry key of a map, the current key; dup says the map
// has it already. Pop leaves it.
func (d *Decoder) Entry(key string, dup bool) {
	if dup {
		d.record(&Error{kind: duplicateField, path: join(d.pathString(), key)})
	}
	d.path = append(d.path, step{name: key, index: -1})
}

// Unknown records the current key as an unknown field and skips its
// value.
func (d *Decoder) Unknown() {
	d.record(&Error{kind: unknownField, path: join(d.pathString(), string(d.key))})
	d.Skip()
}

// Pop leaves what Field, Entry or Index entered.
func (d *Decoder) Pop() { d.path = d.path[:len(d.path)-1] }

// BeginArray starts reading an array, which NextElem loops over. On null it
// returns false (the value stays as it is); on anything else, false with a
// fault.
func (d *Decoder) BeginArray() bool {
	if d.syntax != nil {
		return false
	}
	switch d.peek() {
	case '[':
		return d.open()
	case 'n':
		d.literal("null")
	default:
		d.Mismatch("an array")
	}
	return false
}

// NextElem reads the comma before the next element of the array begun, i
// elements ago, or the end of the array, and says whether there is an
// element to read next.
//
//	for i := 0; d.NextElem(i); i++ { d.Index(i); ...; d.Pop() }
func (d *Decoder) NextElem(i int) bool {
	if d.syntax != nil {
		return false
	}
	c := d.peek()
	if c == ']' && i == 0 {
		d.off++
		d.depth--
		return false
	}
	if i == 0 {
		return true
	}
	switch c {
	case ',':
		d.off++
		return true
	case ']':
		d.off++
		d.depth--
		return false
	}
	d.fail(d.off, "after array element")
	return false
}

// Index enters element i of an array. Pop leaves it.
func (d *Decoder) Index(i int) { d.path = append(d.path, step{index: i}) }

// String reads a string; null is "".
func (d *Decoder) String() string {
	if d.syntax != nil {
		return ""
	}
	switch d.peek() {
	case '"':
		raw, plain, ok := d.rawString()
		if !ok || plain {
			return string(raw)
		}
		return string(unquote(raw, make([]byte, 0, len(raw))))
	case 'n':
		d.literal("null")
	default:
		d.Mismatch("a string")
	}
	return ""
}

// Bool reads a boolean; null is false.
func (d *Decoder) Bool() bool {
	if d.syntax != nil {
		return false
	}
	switch d.peek() {
	case 't':
		return d.literal("true")
	case 'f':
		d.literal("false")
	case 'n':
		d.literal("null")
	default:
		d.Mismatch("a boolean")
	}
	return false
}

// Int32 reads an integer of 32 bits; null is 0.
func (d *Decoder) Int32() int32 { return int32(d.integer(32, "a 32-bit integer")) }

// Int64 reads an integer of 64 bits; null is 0.
func (d *Decoder) Int64() int64 { return d.integer(64, "a 64-bit integer") }

// integer reads an integer of bits bits, as encoding/json reads a number
// into an integer: without a fraction or an exponent, and in range.
func (d *Decoder) integer(bits int, want string) int64 {
	if d.syntax != nil {
		return 0
	}
	switch c := d.peek(); {
	case c == '-' || isDigit(c):
		text, ok := d.number()
		if !ok {
			return 0
		}
		n, err := strconv.ParseInt(string(text), 10, bits)
		if err != nil {
			d.Invalid("want " + want + ", got " + shorten(string(text)))
			return 0
		}
		return n
	case c == 'n':
		d.literal("null")
	default:
		d.Mismatch(want)
	}
	return 0
}

// shorten cuts a value from the input for a message.
func shorten(s string) string {
	const maxShown = 64
	if len(s) > maxShown {
		return s[:maxShown] + "..."
	}
	return s
}

// pathString is the path of the current value, as sigs.k8s.io/json writes
// it: spec.containers[0].image.
func (d *Decoder) pathString() string {
	var b strings.Builder
	for _, s := range d.path {
		if s.index >= 0 {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(s.index))
			b.WriteByte(']')
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s.name)
	}
	return b.String()
}
