//go:build e2e_node

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

package framework

import (
	"strings"
	"testing"
)

// A runtime that cannot be set up must come back as a nil Runtime: the
// cluster's teardown stops every non-nil one, and a nil *containerdRuntime
// wrapped in the interface made it panic instead of reporting the cause.
func TestNewRuntimeErrorIsNilRuntime(t *testing.T) {
	for _, tc := range []struct {
		mode, wantErr string
	}{
		{ContainerdMode, "-e2e.containerd-bin-dir"},
		{"cri-o", `unknown runtime mode "cri-o"`},
	} {
		r, err := newRuntime(tc.mode, Layout{}, Binaries{}, nil)
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("newRuntime(%q): error %v, want one naming %q", tc.mode, err, tc.wantErr)
		}
		if r != nil {
			t.Errorf("newRuntime(%q) returned a non-nil Runtime %#v with its error", tc.mode, r)
		}
	}
}
