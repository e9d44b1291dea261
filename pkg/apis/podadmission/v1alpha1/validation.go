package v1alpha1

import (
	"regexp"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

const (
	// MaxReasonLength caps a response's reason, which becomes a pod's
	// status.reason.
	MaxReasonLength = 128
	// MaxMessageLength caps a response's message in bytes; it is the limit
	// of an event's message, where the message ends up.
	MaxMessageLength = 1024
)

// TruncationMark ends a message that TruncateMessage cut.
const TruncationMark = " (...)"

var reasonPattern = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)

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

// IsValidReason says whether reason may be a response's reason: a CamelCase
// word, an upper-case ASCII letter followed by ASCII letters and digits, of
// at most MaxReasonLength characters.
func IsValidReason(reason string) bool {
	return len(reason) <= MaxReasonLength && reasonPattern.MatchString(reason)
}

// ValidateResponse checks the fields of resp, a plugin's answer to req, other
// than apiVersion and kind (which only exist in the JSON form and are checked
// by DecodeResponse).
func ValidateResponse(resp *PodAdmissionResponse, req *PodAdmissionRequest) field.ErrorList {
	var errs field.ErrorList
	if resp.UID != req.UID {
		errs = append(errs, field.Invalid(field.NewPath("uid"), shorten(string(resp.UID)), "must echo the request's uid "+quote(string(req.UID))))
	}
	reasonPath := field.NewPath("reason")
	switch {
	case resp.Reason == "" && !resp.Allowed:
		errs = append(errs, field.Required(reasonPath, "required when allowed is false"))
	case resp.Reason == "":
	case len(resp.Reason) > MaxReasonLength:
		errs = append(errs, field.TooLong(reasonPath, resp.Reason, MaxReasonLength))
	case !reasonPattern.MatchString(resp.Reason):
		errs = append(errs, field.Invalid(reasonPath, shorten(resp.Reason), "must be CamelCase: an upper-case letter followed by letters and digits, like \"ImageNotSigned\""))
	}
	if len(resp.Message) > MaxMessageLength {
		errs = append(errs, field.TooLong(field.NewPath("message"), resp.Message, MaxMessageLength))
	}
	if resp.RetryAfterSeconds != nil && *resp.RetryAfterSeconds < 0 {
		errs = append(errs, field.Invalid(field.NewPath("retryAfterSeconds"), *resp.RetryAfterSeconds, "must not be negative"))
	}
	return errs
}

// ValidateRequest checks the fields of a request other than apiVersion and
// kind. The kubelet always sends valid requests; plugins check them so that
// a plugin run by hand with a hand-written request fails clearly.
func ValidateRequest(req *PodAdmissionRequest) field.ErrorList {
	var errs field.ErrorList
	if req.UID == "" {
		errs = append(errs, field.Required(field.NewPath("uid"), ""))
	}
	if req.Pod == nil {
		errs = append(errs, field.Required(field.NewPath("pod"), ""))
	}
	if req.Attempt < 1 {
		errs = append(errs, field.Invalid(field.NewPath("attempt"), req.Attempt, "must be at least 1"))
	}
	return errs
}
