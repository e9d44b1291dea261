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

package exectransport_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/trust/trusttest"
	"github.com/podadmission/podadmission/test/testplugin/build"
)

// envDumperName is the name under which this test binary, copied into a
// plugin bin dir, acts as a plugin that prints its environment and args to
// stderr and exits 7: the only way to see exactly what a plugin gets,
// without a shell adding variables of its own.
const envDumperName = "env-dumper"

func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == envDumperName {
		// A binary is executed by a descriptor that the exec closes: it
		// has no descriptor of its own file.
		exe, _ := os.Readlink("/proc/self/exe")
		own := "closed"
		fds, _ := os.ReadDir("/proc/self/fd")
		for _, fd := range fds {
			if target, _ := os.Readlink("/proc/self/fd/" + fd.Name()); target == exe {
				own = "open"
			}
		}
		fmt.Fprintf(os.Stderr, "args=%s env=%s own-fd=%s", strings.Join(os.Args[1:], ","), strings.Join(os.Environ(), ","), own)
		os.Exit(7)
	}
	// Plugin binaries must be in trusted directories, and t.TempDir() is
	// under /tmp, which is world writable.
	trusttest.UseTrustedTempDir()
	// No goroutine of a call outlives it.
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		build.Cleanup()
		os.Exit(code)
	}))
}
