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

package protocol

import (
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ResponseFields are the fields of a response that ValidateResponse checks,
// whichever type carries them: the kubelet's PodAdmissionResponse, the
// SDK's Response and the envelope it sends.
type ResponseFields struct {
	// UID is the response's uid, which must echo the request's.
	UID string
	// Allowed admits the pod.
	Allowed bool
	// Reason says why the pod was rejected: required when Allowed is
	// false, a CamelCase word (IsValidReason).
	Reason string
	// Message says, for a human, why; at most MaxMessageLength bytes.
	Message string
	// RetryAfterSeconds, if set, must not be negative.
	RetryAfterSeconds *int32
}

// ValidateResponse checks resp, a plugin's answer to the request whose uid
// is requestUID. apiVersion and kind exist in the JSON form only and are
// checked where it is decoded.
func ValidateResponse(resp ResponseFields, requestUID string) field.ErrorList {
	var errs field.ErrorList
	if resp.UID != requestUID {
		errs = append(errs, field.Invalid(field.NewPath("uid"), Shorten(resp.UID), "must echo the request's uid "+Quote(requestUID)))
	}
	reasonPath := field.NewPath("reason")
	switch {
	case resp.Reason == "" && !resp.Allowed:
		errs = append(errs, field.Required(reasonPath, "required when allowed is false"))
	case resp.Reason == "":
	case len(resp.Reason) > MaxReasonLength:
		errs = append(errs, field.TooLong(reasonPath, resp.Reason, MaxReasonLength))
	case !isCamelCaseWord(resp.Reason):
		errs = append(errs, field.Invalid(reasonPath, Shorten(resp.Reason), "must be CamelCase: an upper-case letter followed by letters and digits, like \"ImageNotSigned\""))
	}
	if len(resp.Message) > MaxMessageLength {
		errs = append(errs, field.TooLong(field.NewPath("message"), resp.Message, MaxMessageLength))
	}
	if resp.RetryAfterSeconds != nil && *resp.RetryAfterSeconds < 0 {
		errs = append(errs, field.Invalid(field.NewPath("retryAfterSeconds"), *resp.RetryAfterSeconds, "must not be negative"))
	}
	return errs
}

// IsValidReason says whether reason may be a response's reason: a CamelCase
// word, an upper-case ASCII letter followed by ASCII letters and digits, of
// at most MaxReasonLength characters.
func IsValidReason(reason string) bool {
	return len(reason) <= MaxReasonLength && isCamelCaseWord(reason)
}

// isCamelCaseWord says whether s is an upper-case ASCII letter followed by
// ASCII letters and digits. (A loop, not a regular expression: every Exec
// plugin process would compile that at start.)
func isCamelCaseWord(s string) bool {
	if s == "" || s[0] < 'A' || s[0] > 'Z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// TruncationMark ends a message that TruncateMessage cut.
const TruncationMark = " (...)"

// TruncateMessage cuts message to MaxMessageLength bytes, on a character
// boundary, ending in TruncationMark when it cut: plugins use it for a
// message that may be long, and the kubelet for the pod status messages and
// events it builds around plugins' text.
func TruncateMessage(message string) string {
	return truncate(message, MaxMessageLength)
}

// truncate cuts s to at most max bytes as TruncateMessage does.
func truncate(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max - len(TruncationMark)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + TruncationMark
}
