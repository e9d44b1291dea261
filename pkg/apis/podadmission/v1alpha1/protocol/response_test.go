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
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestTruncateKeepsRunes(t *testing.T) {
	assert.Equal(t, "short", truncate("short", 10))
	assert.Equal(t, "exactly10!", truncate("exactly10!", 10))
	// 10 bytes leave 4 before the 6-byte mark; "é" is two bytes, and the
	// cut must not split one.
	assert.Equal(t, "aaé (...)", truncate("aaéééééééé", 10))
	assert.Equal(t, "aaa (...)", truncate("aaaéééééééé", 10))
}

func TestTruncateMessageCutsAtTheProtocolLimit(t *testing.T) {
	exact := strings.Repeat("m", MaxMessageLength)
	assert.Equal(t, exact, TruncateMessage(exact))
	long := TruncateMessage(exact + "m")
	assert.Len(t, long, MaxMessageLength)
	assert.True(t, strings.HasSuffix(long, TruncationMark))
}

func TestIsValidReason(t *testing.T) {
	assert.True(t, IsValidReason("ImageNotSigned"))
	assert.True(t, IsValidReason(strings.Repeat("A", MaxReasonLength)))
	assert.False(t, IsValidReason(strings.Repeat("A", MaxReasonLength+1)))
	assert.False(t, IsValidReason("imageNotSigned"))
	assert.False(t, IsValidReason(""))
}

func TestValidateResponse(t *testing.T) {
	negative := int32(-1)
	zero := int32(0)
	for name, tc := range map[string]struct {
		resp    ResponseFields
		wantErr string
	}{
		"allow":                 {resp: ResponseFields{UID: "call-1", Allowed: true}},
		"deny":                  {resp: ResponseFields{UID: "call-1", Reason: "Nope", Message: "not today", RetryAfterSeconds: &zero}},
		"allow with a reason":   {resp: ResponseFields{UID: "call-1", Allowed: true, Reason: "Fine"}},
		"message at the limit":  {resp: ResponseFields{UID: "call-1", Reason: "Nope", Message: strings.Repeat("m", MaxMessageLength)}},
		"reason at the limit":   {resp: ResponseFields{UID: "call-1", Reason: strings.Repeat("A", MaxReasonLength)}},
		"other uid":             {resp: ResponseFields{UID: "call-2", Allowed: true}, wantErr: `uid: Invalid value: "call-2": must echo the request's uid "call-1"`},
		"deny without a reason": {resp: ResponseFields{UID: "call-1"}, wantErr: "reason: Required value: required when allowed is false"},
		"reason too long":       {resp: ResponseFields{UID: "call-1", Reason: strings.Repeat("A", MaxReasonLength+1)}, wantErr: "reason: Too long: may not be more than 128 bytes"},
		"reason not CamelCase":  {resp: ResponseFields{UID: "call-1", Reason: "not camel"}, wantErr: `reason: Invalid value: "not camel": must be CamelCase: an upper-case letter followed by letters and digits, like "ImageNotSigned"`},
		"message too long":      {resp: ResponseFields{UID: "call-1", Reason: "Nope", Message: strings.Repeat("m", MaxMessageLength+1)}, wantErr: "message: Too long: may not be more than 1024 bytes"},
		"negative retry":        {resp: ResponseFields{UID: "call-1", Reason: "Nope", RetryAfterSeconds: &negative}, wantErr: "retryAfterSeconds: Invalid value: -1: must not be negative"},
		"long uid is shortened": {resp: ResponseFields{UID: strings.Repeat("u", 100), Allowed: true}, wantErr: `uid: Invalid value: "` + strings.Repeat("u", 64) + `...": must echo the request's uid "call-1"`},
	} {
		t.Run(name, func(t *testing.T) {
			errs := ValidateResponse(tc.resp, "call-1")
			if tc.wantErr == "" {
				assert.Empty(t, errs)
				return
			}
			assert.EqualError(t, errs.ToAggregate(), tc.wantErr)
		})
	}
}
