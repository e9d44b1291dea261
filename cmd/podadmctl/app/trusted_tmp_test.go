package app

import "github.com/podadmission/podadmission/pkg/kubelet/podadmission/trust/trusttest"

// Plugin binaries, configuration and sockets must be in trusted
// directories, and t.TempDir() is under /tmp, which is world writable.
func init() { trusttest.UseTrustedTempDir() }
