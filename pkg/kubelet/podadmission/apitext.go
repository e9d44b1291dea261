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

package podadmission

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1/protocol"
)

// Text that reaches the API (a pod's status.reason and status.message,
// event messages) comes in part from plugins and from errors that quote
// them. It is shown by kubectl in terminals and read by people deciding
// what to do, so it is made plain before it is sent: one line of printable
// text, capped at the protocol's limits.

// sanitizeMessage returns s fit for a status.message or an event message:
// invalid UTF-8 replaced, ANSI escape sequences and other control and
// bidirectional formatting characters removed, line breaks and tabs folded
// into single spaces, and the result cut to the protocol's limit
// (protocol.TruncateMessage).
func sanitizeMessage(s string) string {
	var b strings.Builder
	b.Grow(min(len(s), protocol.MaxMessageLength))
	s = strings.ToValidUTF8(s, "\uFFFD")
	space := false
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == '\x1b' || r == '\u009b' {
			i += escapeSequenceLength(s[i:])
			continue
		}
		i += size
		switch {
		case r == '\n' || r == '\r' || r == '\t' || r == '\v' || r == '\f' || r == '\u2028' || r == '\u2029':
			space = b.Len() > 0
			continue
		case unicode.IsControl(r) || isBidiControl(r):
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return protocol.TruncateMessage(strings.Trim(b.String(), " "))
}

// appendToMessage adds suffix (the kubelet's own words, such as why a hold
// became terminal) to a message that is within the protocol's limit, cutting
// the message rather than the suffix so that the result is too.
func appendToMessage(message, suffix string) string {
	limit := protocol.MaxMessageLength - len(suffix)
	if len(message) <= limit {
		return message + suffix
	}
	cut := limit - len(protocol.TruncationMark)
	for cut > 0 && !utf8.RuneStart(message[cut]) {
		cut--
	}
	return message[:max(cut, 0)] + protocol.TruncationMark + suffix
}

// sanitizeReason returns reason when it is a status.reason the protocol
// allows (a CamelCase word of at most MaxReasonLength characters), else
// fallback. Transports validate plugins' reasons already; this makes sure.
func sanitizeReason(reason, fallback string) string {
	if protocol.IsValidReason(reason) {
		return reason
	}
	return fallback
}

// escapeSequenceLength returns the length of the escape sequence s starts
// with (ESC or the C1 CSI): a CSI sequence up to its final byte, an OSC,
// DCS, SOS, PM or APC string up to its terminator, or ESC and one byte.
func escapeSequenceLength(s string) int {
	start := 1
	kind := byte('[')
	if strings.HasPrefix(s, "\u009b") {
		start = len("\u009b")
	} else {
		if len(s) < 2 {
			return len(s)
		}
		kind = s[1]
		start = 2
	}
	switch kind {
	case '[':
		// Parameters and intermediates, then a final byte in 0x40-0x7e.
		for i := start; i < len(s); i++ {
			if s[i] >= 0x40 && s[i] <= 0x7e {
				return i + 1
			}
			if s[i] < 0x20 || s[i] > 0x7e {
				return i // malformed: the sequence ends before this byte
			}
		}
		return len(s)
	case ']', 'P', 'X', '^', '_':
		// A string terminated by BEL or ESC \.
		for i := start; i < len(s); i++ {
			if s[i] == '\a' {
				return i + 1
			}
			if s[i] == '\x1b' && i+1 < len(s) && s[i+1] == '\\' {
				return i + 2
			}
		}
		return len(s)
	}
	return start
}

// isBidiControl reports the characters that reorder the text around them
// (Trojan Source): the embeddings, overrides and isolates.
func isBidiControl(r rune) bool {
	return r >= '\u202a' && r <= '\u202e' || r >= '\u2066' && r <= '\u2069' || r == '\u200e' || r == '\u200f' || r == '\u061c'
}
