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

package v1alpha1

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
