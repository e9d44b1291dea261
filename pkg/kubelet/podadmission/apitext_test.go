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
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1/protocol"
)

func TestSanitizeMessage(t *testing.T) {
	for in, want := range map[string]string{
		"plain text":                                   "plain text",
		"line one\nline two\r\n\n\tindented":           "line one line two indented",
		"\x1b[1;31mbold red\x1b[0m":                    "bold red",
		"\x1b]8;;https://evil\x1b\\link\x1b]8;;\x1b\\": "link",
		"\x1b]0;window title\x07after":                 "after",
		"\u009b31mC1 CSI":                              "C1 CSI",
		"bell\x07 and nul\x00 and del\x7f":             "bell and nul and del",
		"\u202eesrever\u202c and \u2066isolate\u2069":  "esrever and isolate",
		"bad utf-8: \xff\xfe":                          "bad utf-8: \uFFFD",
		"\x1bc reset":                                  "reset",
		"trailing newline\n":                           "trailing newline",
		"\nleading newline":                            "leading newline",
		"unfinished escape \x1b[31":                    "unfinished escape",
		"emoji 🚫 stays":                                "emoji 🚫 stays",
	} {
		assert.Equal(t, want, sanitizeMessage(in), "%q", in)
	}
}

func TestSanitizeMessageCapsAtTheProtocolLimit(t *testing.T) {
	limit := protocol.MaxMessageLength
	exact := strings.Repeat("a", limit)
	assert.Equal(t, exact, sanitizeMessage(exact))

	long := sanitizeMessage(strings.Repeat("€", limit)) // 3 bytes each
	assert.LessOrEqual(t, len(long), limit)
	assert.True(t, utf8.ValidString(long))
	assert.True(t, strings.HasSuffix(long, "€ (...)"))
}

func TestSanitizeReason(t *testing.T) {
	assert.Equal(t, "ImageNotSigned", sanitizeReason("ImageNotSigned", ReasonRejected))
	assert.Equal(t, ReasonRejected, sanitizeReason("not camel", ReasonRejected))
	assert.Equal(t, ReasonRejected, sanitizeReason("Evil\x1b[31m", ReasonRejected))
	assert.Equal(t, ReasonRejected, sanitizeReason(strings.Repeat("A", protocol.MaxReasonLength+1), ReasonRejected))
	assert.Equal(t, ReasonRejected, sanitizeReason("", ReasonRejected))
}

func TestAppendToMessageKeepsTheSuffix(t *testing.T) {
	const suffix = " (blocked for 1m0s, longer than the plugin's maxBlockedDuration of 1m0s)"
	assert.Equal(t, "short"+suffix, appendToMessage("short", suffix))

	long := strings.Repeat("é", protocol.MaxMessageLength/2) // 2 bytes each: exactly the limit
	got := appendToMessage(long, suffix)
	assert.LessOrEqual(t, len(got), protocol.MaxMessageLength)
	assert.True(t, strings.HasSuffix(got, protocol.TruncationMark+suffix), "the message is cut, not the suffix: %q", got)
	assert.True(t, utf8.ValidString(got), "cut on a character boundary")
}

func TestEscalationMessageStaysWithinTheLimit(t *testing.T) {
	long := strings.Repeat("x", protocol.MaxMessageLength)
	tm := newTestManager(t, pluginsYAML(execPlugin("a", "maxBlockedDuration: 10s")), func(f *fakeFactory, _ *Options) {
		f.set("a", deny("NoCapacity", long))
	})
	pod := testPod("web")
	_, _, _, terminal := tm.admit(pod)
	require.False(t, terminal)
	tm.clock.Step(10 * time.Second)
	_, _, message, terminal := tm.admit(pod)
	require.True(t, terminal)
	assert.LessOrEqual(t, len(message), protocol.MaxMessageLength)
	assert.True(t, strings.HasSuffix(message, " (blocked for 10s, longer than the plugin's maxBlockedDuration of 10s)"), message)
}
