package exec_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
		fmt.Fprintf(os.Stderr, "args=%s env=%s", strings.Join(os.Args[1:], ","), strings.Join(os.Environ(), ","))
		os.Exit(7)
	}
	// Plugin binaries must be in trusted directories, and t.TempDir() is
	// under /tmp, which is world writable.
	trusttest.UseTrustedTempDir()
	code := m.Run()
	build.Cleanup()
	os.Exit(code)
}
