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

package main

import (
	"fmt"
	"time"

	"github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1/protocol"
)

func notAcknowledgedMessage(waiting []policyRef, ackDir string) string {
	return fitPolicies("waiting for the node's network policy agent to acknowledge ", waiting,
		fmt.Sprintf(" (no acknowledgement in %s yet)", ackDir))
}

func untrustedAcksMessage(waiting []policyRef, untrusted error) string {
	return fitPolicies("waiting for ", waiting,
		fmt.Sprintf(": the acknowledgement directory is not trusted, so no acknowledgement counts (%v)", untrusted))
}

func settlingMessage(waiting []policyRef, remaining, settleTime time.Duration) string {
	return fitPolicies("waiting for ", waiting,
		fmt.Sprintf(" to be known for the settle time of %s (%s more)", settleTime, remaining.Round(100*time.Millisecond)))
}

// fitPolicies writes prefix, the policies and suffix, listing as many
// policies as fit in a response message and counting the others.
func fitPolicies(prefix string, refs []policyRef, suffix string) string {
	noun := "NetworkPolicy "
	if len(refs) > 1 {
		noun = "NetworkPolicies "
	}
	for shown := len(refs); shown > 0; shown-- {
		list := joinRefs(refs[:shown])
		if shown < len(refs) {
			list += fmt.Sprintf(" and %d more", len(refs)-shown)
		}
		if msg := prefix + noun + list + suffix; len(msg) <= protocol.MaxMessageLength {
			return msg
		}
	}
	// Only a suffix longer than a message (an absurd --ack-dir) gets here.
	return fmt.Sprintf("%s%d %s", prefix, len(refs), noun)
}
