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

import "strconv"

// maxShown bounds a value from the other side of the protocol quoted in an
// error message: such messages end up in pod status messages.
const maxShown = 64

// Quote quotes s for an error message, shortened as Shorten does.
func Quote(s string) string {
	return strconv.Quote(Shorten(s))
}

// Shorten cuts s to a length fit for an error message.
func Shorten(s string) string {
	if len(s) > maxShown {
		return s[:maxShown] + "..."
	}
	return s
}
