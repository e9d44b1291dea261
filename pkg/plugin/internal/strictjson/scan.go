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
	"strconv"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// The scanner: what a JSON token is and where it ends, with
// encoding/json's grammar and its syntax errors, word for word.

// maxDepth is encoding/json's limit on nested objects and arrays.
const maxDepth = 10000

// peek skips whitespace and returns the next byte, 0 at the end of input
// (which atEnd tells from a 0 byte).
func (d *Decoder) peek() byte {
	for d.off < len(d.data) {
		switch c := d.data[d.off]; c {
		case ' ', '\t', '\n', '\r':
			d.off++
		default:
			return c
		}
	}
	return 0
}

func (d *Decoder) atEnd() bool { return d.off >= len(d.data) }

// fail records a syntax error at the byte at off, which stops decoding:
// context says where it is ("looking for beginning of value").
func (d *Decoder) fail(off int, context string) {
	msg := "unexpected end of JSON input"
	if off < len(d.data) {
		msg = "invalid character " + quoteChar(d.data[off]) + " " + context
	}
	d.setSyntax(msg)
}

// failInToken is fail inside a literal, a number or an escape, where
// encoding/json reports the end of input as the space it feeds its
// scanner there.
func (d *Decoder) failInToken(off int, context string) {
	c := byte(' ')
	if off < len(d.data) {
		c = d.data[off]
	}
	d.setSyntax("invalid character " + quoteChar(c) + " " + context)
}

func (d *Decoder) setSyntax(msg string) {
	if d.syntax == nil {
		d.syntax = &Error{kind: syntaxError, path: d.pathString(), msg: "not JSON: " + msg}
	}
}

// quoteChar formats c as encoding/json's syntax errors do.
func quoteChar(c byte) string {
	if c == '\'' {
		return `'\''`
	}
	if c == '"' {
		return `'"'`
	}
	s := strconv.Quote(string(c))
	return "'" + s[1:len(s)-1] + "'"
}

// open enters an object or an array whose opening byte is at off.
func (d *Decoder) open() bool {
	d.depth++
	if d.depth > maxDepth {
		d.fail(d.off, "exceeded max depth")
		return false
	}
	d.off++
	return true
}

// literal reads the literal lit (true, false or null) at off.
func (d *Decoder) literal(lit string) bool {
	for j := 1; j < len(lit); j++ {
		if d.off+j >= len(d.data) || d.data[d.off+j] != lit[j] {
			d.failInToken(d.off+j, "in literal "+lit+" (expecting "+quoteChar(lit[j])+")")
			return false
		}
	}
	d.off += len(lit)
	return true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// number reads the number at off and returns its text.
func (d *Decoder) number() ([]byte, bool) {
	data, i := d.data, d.off
	if data[i] == '-' {
		i++
		if i >= len(data) || !isDigit(data[i]) {
			d.failInToken(i, "in numeric literal")
			return nil, false
		}
	}
	if data[i] == '0' {
		i++
	} else {
		for i < len(data) && isDigit(data[i]) {
			i++
		}
	}
	if i < len(data) && data[i] == '.' {
		i++
		if i >= len(data) || !isDigit(data[i]) {
			d.failInToken(i, "after decimal point in numeric literal")
			return nil, false
		}
		for i < len(data) && isDigit(data[i]) {
			i++
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if i >= len(data) || !isDigit(data[i]) {
			d.failInToken(i, "in exponent of numeric literal")
			return nil, false
		}
		for i < len(data) && isDigit(data[i]) {
			i++
		}
	}
	text := data[d.off:i]
	d.off = i
	return text, true
}

// rawString reads the string at off and returns what is between its
// quotes, and whether that is its value as it is.
func (d *Decoder) rawString() (raw []byte, plain, ok bool) {
	data := d.data
	start := d.off + 1
	i := start
	for i < len(data) {
		c := data[i]
		if c == '"' {
			d.off = i + 1
			return data[start:i], true, true
		}
		if c == '\\' || c < ' ' || c >= utf8.RuneSelf {
			break
		}
		i++
	}
	plain = true
	for {
		if i >= len(data) {
			d.fail(i, "")
			return nil, false, false
		}
		c := data[i]
		switch {
		case c == '"':
			d.off = i + 1
			raw = data[start:i]
			return raw, plain && utf8.Valid(raw), true
		case c == '\\':
			plain = false
			i++
			if i >= len(data) {
				d.failInToken(i, "in string escape code")
				return nil, false, false
			}
			switch data[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				for k := 0; k < 4; k++ {
					i++
					if i >= len(data) || !isHex(data[i]) {
						d.failInToken(i, `in \u hexadecimal character escape`)
						return nil, false, false
					}
				}
			default:
				d.fail(i, "in string escape code")
				return nil, false, false
			}
		case c < ' ':
			d.fail(i, "in string literal")
			return nil, false, false
		}
		i++
	}
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// unquote appends the value of raw, the well-formed content of a JSON
// string, to b: encoding/json's unquoteBytes.
func unquote(raw, b []byte) []byte {
	for r := 0; r < len(raw); {
		c := raw[r]
		switch {
		case c == '\\':
			r++
			switch raw[r] {
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				rr := getu4(raw[r-1:])
				r += 5
				if utf16.IsSurrogate(rr) {
					if dec := utf16.DecodeRune(rr, getu4(raw[r:])); dec != unicode.ReplacementChar {
						b = utf8.AppendRune(b, dec)
						r += 6
						continue
					}
					rr = unicode.ReplacementChar
				}
				b = utf8.AppendRune(b, rr)
				continue
			default: // '"', '\\', '/'
				b = append(b, raw[r])
			}
			r++
		case c < utf8.RuneSelf:
			b = append(b, c)
			r++
		default:
			rr, size := utf8.DecodeRune(raw[r:])
			b = utf8.AppendRune(b, rr)
			r += size
		}
	}
	return b
}

// getu4 decodes \uXXXX at the start of s, or returns -1.
func getu4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// skip reads the value at off, whatever it is, checking its syntax.
func (d *Decoder) skip() {
	switch c := d.peek(); {
	case c == '{':
		if !d.open() {
			return
		}
		for i := 0; d.nextKey(i); i++ {
			d.skip()
		}
	case c == '[':
		if !d.open() {
			return
		}
		for i := 0; d.NextElem(i); i++ {
			d.skip()
		}
	case c == '"':
		d.rawString()
	case c == '-' || isDigit(c):
		d.number()
	case c == 't':
		d.literal("true")
	case c == 'f':
		d.literal("false")
	case c == 'n':
		d.literal("null")
	default:
		d.fail(d.off, "looking for beginning of value")
	}
}
