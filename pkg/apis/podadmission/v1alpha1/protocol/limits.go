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

import "fmt"

// The limits of the protocol, the one definition the kubelet, its
// transports and the SDK all use.
const (
	// MaxRequestSize bounds a request in bytes, in its JSON form (an Exec
	// plugin's stdin) and as a GRPC message: it carries one pod, which the
	// API server caps far below this.
	MaxRequestSize = 16 << 20
	// MaxResponseSize bounds a plugin's response in bytes (an Exec plugin's
	// stdout, a GRPC message). A response is a few hundred bytes; a plugin
	// that sends more is broken, and the kubelet stops reading.
	MaxResponseSize = 1 << 20
	// MaxReasonLength caps a response's reason, which becomes a pod's
	// status.reason.
	MaxReasonLength = 128
	// MaxMessageLength caps a response's message in bytes; it is the limit
	// of an event's message, where the message ends up.
	MaxMessageLength = 1024
)

// SizeInMiB names a size limit in error messages, such as "1 MiB".
func SizeInMiB(limit int) string {
	return fmt.Sprintf("%d MiB", limit>>20)
}
