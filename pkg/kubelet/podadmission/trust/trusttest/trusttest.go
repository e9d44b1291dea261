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

// Package trusttest helps tests of code that checks trust (package trust):
// it gives them temporary directories the checks accept, and runs the steps
// of an attacker as the unprivileged user nobody.
//
// The tests run as root. t.TempDir() is under /tmp, which is world writable
// and so never trusted; UseTrustedTempDir moves every temporary directory of
// the test binary under a root-owned directory with mode 0755.
package trusttest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/trust"
)

// NobodyUID and NobodyGID are the unprivileged user and group an attacker
// runs as in tests.
const (
	NobodyUID = 65534
	NobodyGID = 65534
)

// trustedTempRoots are where UseTrustedTempDir puts temporary directories,
// the first that passes the trust checks. Short names: socket paths under
// them carry test names and must fit in the 107 bytes of sun_path.
var trustedTempRoots = []string{"/run/podadm", "/var/lib/podadm"}

// UseTrustedTempDir points TMPDIR (and GOTMPDIR, which t.TempDir prefers,
// when it is set) at a directory whose whole path passes the trust checks,
// so that t.TempDir() and os.MkdirTemp("", ...) return trusted directories.
// Call it from an init function of the test package. It panics when no
// such directory can be made, which happens only when the tests do not run
// as root: the trust checks cannot be tested then.
func UseTrustedTempDir() {
	if trust.CheckDir(os.TempDir()) == nil {
		return
	}
	var errs []error
	for _, root := range trustedTempRoots {
		if err := os.MkdirAll(root, 0o755); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := os.Chmod(root, 0o755); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := trust.CheckDir(root); err != nil {
			errs = append(errs, err)
			continue
		}
		os.Setenv("TMPDIR", root)
		if os.Getenv("GOTMPDIR") != "" {
			os.Setenv("GOTMPDIR", root)
		}
		return
	}
	panic(fmt.Sprintf("no trusted directory for temporary files (the tests must run as root): %v", errs))
}

// Dir returns a new trusted directory, mode 0755, that nobody can reach
// (t.TempDir() is mode 0700), so that a test can hand parts of it to
// nobody. It fails the test unless the directory passes the trust checks.
func Dir(t testing.TB) string {
	t.Helper()
	if os.Geteuid() != trust.TrustedUID {
		t.Fatalf("trust checks are tested as root (uid %d); running as uid %d", trust.TrustedUID, os.Geteuid())
	}
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := trust.CheckDir(dir); err != nil {
		t.Fatalf("the test's temporary directory is not trusted: %v", err)
	}
	return dir
}

// AsNobody makes cmd run as the user and group nobody.
func AsNobody(cmd *exec.Cmd) *exec.Cmd {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Credential = &syscall.Credential{Uid: NobodyUID, Gid: NobodyGID}
	return cmd
}

// ChownToNobody gives path to nobody, as if nobody had created it.
func ChownToNobody(path string) error {
	return os.Lchown(path, NobodyUID, NobodyGID)
}
